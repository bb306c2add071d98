#include "kai/kube/io/usage_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace kai::usage {
namespace {

namespace fs = std::filesystem;

std::string SysError(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

std::optional<Error> WriteAll(int fd, const std::string& text, const std::string& path) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{SysError("write", path)};
    done += static_cast<size_t>(n);
  }
  return std::nullopt;
}

std::optional<Error> SyncPath(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return Error{SysError("open", path)};
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Error{SysError("fsync", path)};
  return std::nullopt;
}

// A name beside `path` that no earlier set-aside file has.
std::string AsideName(const std::string& path, UnixSeconds now) {
  const std::string base = path + ".corrupt-" + FormatRfc3339(now);
  std::string name = base;
  for (int i = 1; fs::exists(name); ++i) name = base + "." + std::to_string(i);
  return name;
}

Result<std::optional<std::string>> ReadText(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::optional<std::string>();
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"--usage-dir: cannot read " + path};
  std::stringstream text;
  text << in.rdbuf();
  return std::optional<std::string>(text.str());
}

}  // namespace

Result<std::optional<HistoryFile>> UsageDir::Read(HistoryLimits limits) const {
  auto text = ReadText(path_);
  if (!text.ok()) return text.error();
  if (!*text) return std::optional<HistoryFile>();
  auto decoded = DecodeHistory(**text, path_, limits);
  if (!decoded.ok()) return decoded.error();
  return std::optional<HistoryFile>(std::move(decoded.value()));
}

UsageDir::UsageDir(std::string dir)
    : dir_(std::move(dir)), path_(dir_ + "/usage-history"), temp_(path_ + ".tmp") {}

Result<LoadedHistory> UsageDir::Load(UnixSeconds now, HistoryLimits limits) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Error{"--usage-dir: cannot create " + dir_ + ": " + ec.message()};
  LoadedHistory out;
  // A temporary file is only ever a save that did not finish: the real file is still whole.
  if (fs::remove(temp_, ec)) out.removed_temp = true;
  auto text = ReadText(path_);
  if (!text.ok()) return text.error();
  if (!*text) return out;
  auto decoded = DecodeHistory(**text, path_, limits);
  if (decoded.ok()) {
    out.file = std::move(decoded.value());
    return out;
  }
  out.corrupt = decoded.error().message;
  out.set_aside_as = AsideName(path_, now);
  fs::rename(path_, out.set_aside_as, ec);
  if (ec) {
    return Error{out.corrupt + "; and it could not be set aside as " + out.set_aside_as + ": " +
                 ec.message()};
  }
  return out;
}

std::optional<Error> UsageDir::Save(const std::string& text) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);  // removed while the scheduler ran: made again
  if (ec) return Error{"cannot create " + dir_ + ": " + ec.message()};
  const int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error{SysError("create", temp_)};
  auto written = WriteAll(fd, text, temp_);
  if (!written && ::fsync(fd) != 0) written = Error{SysError("fsync", temp_)};
  ::close(fd);
  if (written) return written;
  if (::rename(temp_.c_str(), path_.c_str()) != 0) return Error{SysError("rename to", path_)};
  // The rename itself is durable only once the directory is synced.
  return SyncPath(dir_, O_RDONLY | O_DIRECTORY);
}

}  // namespace kai::usage
