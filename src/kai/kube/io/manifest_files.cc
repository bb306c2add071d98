#include "kai/kube/io/manifest_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kai/core/framework/config.h"
#include "kai/core/k8s/decode.h"

namespace kai {
namespace {

// The *.yaml and *.yml files under a directory, sorted by path.
std::vector<std::string> DirectoryManifests(const std::string& dir,
                                            std::vector<std::string>& errors) {
  namespace fs = std::filesystem;
  std::vector<std::string> found;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const auto ext = it->path().extension();
    std::error_code fec;
    if (it->is_regular_file(fec) && (ext == ".yaml" || ext == ".yml")) {
      found.push_back(it->path());
    }
  }
  if (ec) errors.push_back(dir + ": cannot read directory: " + ec.message());
  std::sort(found.begin(), found.end());
  if (found.empty()) errors.push_back(dir + ": directory holds no .yaml or .yml file");
  return found;
}

std::vector<std::string> ExpandPaths(const std::vector<std::string>& paths,
                                     std::vector<std::string>& errors) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      const std::vector<std::string> found = DirectoryManifests(p, errors);
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      errors.push_back(p + ": no such file or directory");
    }
  }
  return files;
}

}  // namespace

Result<ClusterState> LoadManifests(const std::vector<std::string>& paths) {
  ClusterState state;
  std::vector<std::string> errors;
  for (const std::string& file : ExpandPaths(paths, errors)) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      errors.push_back(file + ": cannot read");
      continue;
    }
    std::stringstream buf;
    buf << in.rdbuf();
    for (auto& e : ProblemsOf(DecodeManifestText(buf.str(), file, state))) {
      errors.push_back(std::move(e));
    }
  }
  auto checked = CheckDecoded(std::move(state), Problems(errors));
  if (checked.ok()) {
    for (std::string& w : ShardWarnings(checked->shard)) checked->warnings.push_back(std::move(w));
  }
  return checked;
}

}  // namespace kai
