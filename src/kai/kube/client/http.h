#pragma once
// HTTP to the Kubernetes API server, on libcurl (TLS through OpenSSL, keep-alive connections, a
// time-out on every request, streaming for watches). This file knows nothing of Kubernetes
// objects; api_client.h builds requests and reads answers on top of it.
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "kai/kube/client/kubeconfig.h"

namespace kai::k8s {

struct HttpRequest {
  std::string method = "GET";
  std::string path;  // path and query, e.g. /api/v1/pods?limit=500
  std::string body;
  std::string content_type = "application/json";
  std::chrono::milliseconds timeout{30000};
};

struct HttpResponse {
  long status = 0;              // 0 when no HTTP answer came (transport error)
  std::string transport_error;  // set when status is 0 or the body was cut short
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
  bool ok() const { return status >= 200 && status < 300 && transport_error.empty(); }
};

// What the client reads of one answer at most; past either limit the transfer stops and the
// response's transport_error names the limit. A whole answer: a LIST of 100,000 pods is about
// 1 GiB (doc::Limits refuses more). One line of a streamed answer: one watch event, whose object
// etcd caps at 1.5 MiB by default.
struct HttpLimits {
  size_t max_answer_bytes = size_t{1} << 30;
  size_t max_line_bytes = size_t{64} << 20;
};

// Called with each complete line of a streamed body; return false to stop the stream.
using LineSink = std::function<bool(std::string_view line)>;

struct CurlHandlePool;  // http.cc

class HttpClient {
 public:
  explicit HttpClient(ClusterConfig config, HttpLimits limits = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // One request, answered in full. Thread-safe: each thread keeps its own connection.
  HttpResponse Do(const HttpRequest& request) const;

  // A streamed GET (a watch): lines go to `sink` as they arrive. Ends when the server closes the
  // stream, `sink` returns false, `stop` becomes true, nothing arrives for `idle_timeout`, or
  // `request.timeout` passes. The response's body holds a non-2xx answer's body.
  HttpResponse Stream(const HttpRequest& request, const LineSink& sink,
                      const std::atomic<bool>& stop, std::chrono::milliseconds idle_timeout) const;

  const ClusterConfig& config() const { return config_; }

 private:
  ClusterConfig config_;
  HttpLimits limits_;
  std::unique_ptr<TokenSource> tokens_;
  std::unique_ptr<CurlHandlePool> pool_;  // idle handles, each keeping its connection alive
};

}  // namespace kai::k8s
