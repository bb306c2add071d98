#pragma once
// Test harness for tests/fakeapi/fake_apiserver.py: starts it as a subprocess on a free port and
// drives its control API (objects, faults, compaction, watches, the request log). The control API
// is spoken over cpp-httplib, not over the client under test, so that a bug in kai's transport
// cannot hide itself.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kai/kube/client/api_client.h"

extern char** environ;

namespace kai::fakeapi {

// The first executable python3 on PATH, or "" when there is none.
inline std::string FindPython3() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/python3";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

inline std::string ServerScript() {
  return std::string(KAI_SOURCE_DIR) + "/tests/fakeapi/fake_apiserver.py";
}

// Double-quoted JSON string (the tests' names and values are plain ASCII).
inline std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

inline rapidjson::Document ParseJson(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str(), text.size());
  return d;
}

// A string member of a JSON object ("" when absent or not a string).
inline std::string StrAt(const rapidjson::Value& v, std::initializer_list<const char*> path) {
  const rapidjson::Value* cur = &v;
  for (const char* key : path) {
    if (!cur->IsObject()) return "";
    auto it = cur->FindMember(key);
    if (it == cur->MemberEnd()) return "";
    cur = &it->value;
  }
  return cur->IsString() ? std::string(cur->GetString(), cur->GetStringLength()) : "";
}

// One entry of the server's request log.
struct LogEntry {
  std::string method, path, query, fault;
  std::optional<long> status;  // none when nothing was answered (a hang)
  bool watch = false;
};

class FakeApiServer {
 public:
  enum class StartResult { kStarted, kNoPython, kFailed };

  FakeApiServer() = default;
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;
  ~FakeApiServer() { Stop(); }

  // Starts the server and waits (10 s at most) for its port; `error` says why not.
  StartResult Start(std::string& error, const std::vector<std::string>& extra_args = {}) {
    const std::string python = FindPython3();
    if (python.empty()) {
      error = "python3 is not on PATH: the fake API server cannot run";
      return StartResult::kNoPython;
    }
    if (!MakeTempDir(error) || !Spawn(python, extra_args, error)) return StartResult::kFailed;
    if (!WaitForPort(error)) {
      Stop();
      return StartResult::kFailed;
    }
    return StartResult::kStarted;
  }

  // SIGTERM (the server exits 0), SIGKILL after 5 s; removes the temporary directory.
  void Stop() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      if (!Reap(std::chrono::seconds(5))) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
      }
      pid_ = -1;
    }
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
      dir_.clear();
    }
  }

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // What the server wrote on stderr so far (a traceback names a bug of the server itself).
  std::string Stderr() const {
    std::ifstream in(dir_ + "/stderr.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // One control request; the test fails unless the server answers 200 with JSON.
  rapidjson::Document Control(const std::string& method, const std::string& path,
                              const std::string& body = "") {
    httplib::Client cli("127.0.0.1", port_);
    cli.set_read_timeout(10, 0);
    httplib::Result r = method == "GET"      ? cli.Get(path.c_str())
                        : method == "DELETE" ? cli.Delete(path.c_str())
                                             : cli.Post(path.c_str(), body, "application/json");
    if (!r) {
      ADD_FAILURE() << method << " " << path << ": no answer from the fake API server";
      return ParseJson("{}");
    }
    if (r->status != 200) {
      ADD_FAILURE() << method << " " << path << ": " << r->status << " " << r->body;
    }
    return ParseJson(r->body);
  }

  // POST /_control/objects with a batch of {"op":..., "object":...}; returns the answer,
  // {"resourceVersion", "objects": [the stored object (or the last state of a deleted one)...]}.
  rapidjson::Document Ops(const std::vector<std::string>& ops) {
    std::string body = "{\"ops\":[";
    for (size_t i = 0; i < ops.size(); ++i) body += (i ? "," : "") + ops[i];
    rapidjson::Document d = Control("POST", "/_control/objects", body + "]}");
    const bool all = d.IsObject() && d.HasMember("objects") && d["objects"].IsArray() &&
                     d["objects"].Size() == ops.size();
    EXPECT_TRUE(all) << "control ops were not all applied";
    return d;
  }

  void AddFault(const std::string& rule) {
    Control("POST", "/_control/faults", "{\"rules\":[" + rule + "]}");
  }
  void ClearFaults() { Control("DELETE", "/_control/faults"); }
  void Compact() { Control("POST", "/_control/compact", "{}"); }
  void CloseWatches() { Control("POST", "/_control/close-watches", "{}"); }
  void ClearLog() { Control("DELETE", "/_control/log"); }

  int OpenWatches() {
    const rapidjson::Document d = Control("GET", "/_control/watches");
    return d.IsObject() && d.HasMember("count") && d["count"].IsInt() ? d["count"].GetInt() : -1;
  }

  std::vector<LogEntry> Log() {
    const rapidjson::Document d = Control("GET", "/_control/log");
    std::vector<LogEntry> out;
    if (!d.IsArray()) return out;
    for (const auto& e : d.GetArray()) {
      LogEntry l;
      l.method = StrAt(e, {"method"});
      l.path = StrAt(e, {"path"});
      l.query = StrAt(e, {"query"});
      l.fault = StrAt(e, {"fault"});
      if (e.HasMember("status") && e["status"].IsInt()) l.status = e["status"].GetInt();
      l.watch = e.HasMember("watch") && e["watch"].IsBool() && e["watch"].GetBool();
      out.push_back(std::move(l));
    }
    return out;
  }

  // The server's truth for one kind: {"resourceVersion", "items": [...]} sorted by key.
  rapidjson::Document Objects(const k8s::ResourceType& type) {
    return Control("GET", "/_control/objects?apiVersion=" + k8s::UrlEscape(type.api_version) +
                              "&kind=" + std::string(type.kind));
  }

 private:
  bool MakeTempDir(std::string& error) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kai-fakeapi-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) {
      error = "mkdtemp failed";
      return false;
    }
    dir_ = tmpl;
    return true;
  }

  bool Spawn(const std::string& python, const std::vector<std::string>& extra, std::string& error) {
    std::vector<std::string> args = {python, ServerScript(), "--port",
                                     "0",    "--port-file",  dir_ + "/port"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string err_log = dir_ + "/stderr.log";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, err_log.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    const int rc = posix_spawn(&pid_, python.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      pid_ = -1;
      error = "cannot start " + python + ": " + std::strerror(rc);
      return false;
    }
    return true;
  }

  bool WaitForPort(std::string& error) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(dir_ + "/port");
      if (in >> port_ && port_ > 0) return true;
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        error = "fake_apiserver.py exited at start: " + Stderr();
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    error = "fake_apiserver.py wrote no port within 10 s: " + Stderr();
    return false;
  }

  bool Reap(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  pid_t pid_ = -1;
  int port_ = 0;
  std::string dir_;
};

// A client of `server` that tries each call twice, without sleeping between the tries (the
// tests' fault rules decide what the server answers).
inline std::unique_ptr<k8s::ApiClient> QuickClient(const FakeApiServer& server) {
  k8s::ClusterConfig cfg;
  cfg.server = server.url();
  k8s::RetryPolicy policy;
  policy.max_attempts = 2;
  policy.initial = std::chrono::milliseconds(1);
  policy.max = std::chrono::milliseconds(2);
  k8s::ClientClock clock;
  clock.sleep = [](std::chrono::milliseconds) {};
  clock.jitter = [] { return 0.5; };
  return std::make_unique<k8s::ApiClient>(cfg, policy, clock);
}

}  // namespace kai::fakeapi
