#include "kai/cmd/run/run.h"

#include <atomic>
#include <charconv>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <streambuf>
#include <thread>

#include "kai/kube/runtime/manager.h"

namespace kai::run {
namespace {

// Collects one component's output and hands it to the shared stream a whole line at a time.
class LineBuffer : public std::streambuf {
 public:
  LineBuffer(std::ostream& sink, std::mutex& mu) : sink_(sink), mu_(mu) {}
  ~LineBuffer() override { Emit(); }

 protected:
  int_type overflow(int_type c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    std::lock_guard<std::mutex> lock(own_mu_);
    line_.push_back(static_cast<char>(c));
    if (c == '\n') EmitLocked();
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    std::lock_guard<std::mutex> lock(own_mu_);
    line_.append(s, static_cast<size_t>(n));
    if (line_.find('\n') != std::string::npos) EmitLocked();
    return n;
  }

 private:
  void Emit() {
    std::lock_guard<std::mutex> lock(own_mu_);
    EmitLocked();
  }
  // Writes the complete lines; a partial one waits for its end.
  void EmitLocked() {
    const size_t end = line_.rfind('\n');
    if (end == std::string::npos) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      sink_.write(line_.data(), static_cast<std::streamsize>(end + 1));
      sink_.flush();
    }
    line_.erase(0, end + 1);
  }
  std::ostream& sink_;
  std::mutex& mu_;
  std::mutex own_mu_;  // a component logs from several threads
  std::string line_;
};

struct Exit {
  std::mutex mu;
  std::condition_variable cv;
  int exited = 0;
  int first_failure = 0;
  std::string failed;
};

}  // namespace

int RunComponents(const std::vector<Component>& components, const k8s::ApiClient& client,
                  std::ostream& err, std::mutex* err_mu) {
  const uint64_t stops_seen = runtime::ProcessStopRequests();
  std::atomic<bool> stop{false};
  std::mutex own_mu;
  std::mutex& sink_mu = err_mu ? *err_mu : own_mu;
  Exit exit;
  std::vector<std::unique_ptr<LineBuffer>> buffers;
  std::vector<std::unique_ptr<std::ostream>> logs;
  std::vector<std::thread> threads;
  for (const Component& c : components) {
    buffers.push_back(std::make_unique<LineBuffer>(err, sink_mu));
    logs.push_back(std::make_unique<std::ostream>(buffers.back().get()));
    std::ostream& log = *logs.back();
    threads.emplace_back([&c, &client, &log, &exit, &stop] {
      const int rc = c.run(client, log, stop);
      std::lock_guard<std::mutex> lock(exit.mu);
      ++exit.exited;
      if (rc != 0 && exit.first_failure == 0) {
        exit.first_failure = rc;
        exit.failed = c.name;
      }
      exit.cv.notify_all();
    });
  }
  {
    std::unique_lock<std::mutex> lock(exit.mu);
    while (runtime::ProcessStopRequests() == stops_seen && exit.exited == 0) {
      exit.cv.wait_for(lock, std::chrono::milliseconds(100));
    }
  }
  stop = true;
  for (auto& t : threads) t.join();
  logs.clear();
  buffers.clear();
  if (exit.first_failure != 0) {
    std::lock_guard<std::mutex> lock(sink_mu);
    err << "kai run: error: " << exit.failed << " exited with status " << exit.first_failure
        << "; stopped the others\n";
  }
  return exit.first_failure;
}

std::string OffsetAddress(const std::string& address, int offset) {
  if (address.empty()) return address;
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return "";
  int port = 0;
  const char* begin = address.data() + colon + 1;
  const char* end = address.data() + address.size();
  auto [ptr, ec] = std::from_chars(begin, end, port);
  if (ec != std::errc() || ptr != end || port <= 0 || port + offset > 65535) return "";
  return address.substr(0, colon + 1) + std::to_string(port + offset);
}

}  // namespace kai::run
