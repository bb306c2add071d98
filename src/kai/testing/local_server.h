#pragma once
// The tests' fake HTTP servers: an httplib server on a free loopback port, serving on its own
// thread from construction (after `routes` added its handlers) until destruction.
#include <httplib.h>

#include <functional>
#include <string>
#include <thread>

#include "kai/kube/client/api_client.h"

namespace kai::testing {

class LocalServer {
 public:
  explicit LocalServer(const std::function<void(httplib::Server&)>& routes) {
    routes(server_);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() does nothing until the listen loop runs, and the loop would then never end: a
    // server destroyed before its thread got going would hang the test.
    while (!server_.is_running()) std::this_thread::yield();
  }
  ~LocalServer() {
    server_.stop();
    thread_.join();
  }
  LocalServer(const LocalServer&) = delete;
  LocalServer& operator=(const LocalServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // A client configuration that reaches this server.
  k8s::ClusterConfig config() const {
    k8s::ClusterConfig c;
    c.server = url();
    return c;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace kai::testing
