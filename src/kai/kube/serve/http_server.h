#pragma once
// The one HTTP(S) server core every kai server runs on (/metrics, /healthz, /readyz,
// /debug/snapshot, the admission webhooks): event-driven (Boost.Beast on one io thread), so a
// slow or idle client costs a socket and a small buffer, never a thread, and the probes keep
// answering. Every request is bounded before its handler runs (see Limits): header size and
// time, body size per route (Content-Length and chunked alike), no compressed bodies, a
// bounded number of connections, a bounded amount of body bytes held at once. Handlers that
// may block (API lookups, rendering) run on a small worker pool with a bounded queue; the
// others answer on the io thread.
// Boost stays out of this header (pimpl): only http_server.cc compiles it.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kai/core/util/result.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace kai::serve {

// The same for every kai server; docs/servers.md says what each refusal means.
struct Limits {
  size_t max_header_bytes = 16 * 1024;  // request line and headers together: 431 beyond
  // From accept (TLS handshake included) to the first request's complete headers; a client
  // that drips header bytes (slowloris) is cut off here.
  std::chrono::milliseconds header_timeout{10000};
  // From complete headers to the body's last byte, and for writing the response.
  std::chrono::milliseconds body_timeout{30000};
  // A kept-alive connection's wait for its next request's complete headers.
  std::chrono::milliseconds idle_timeout{30000};
  size_t max_connections = 512;           // beyond it a new connection is accepted and closed
  size_t max_connections_per_peer = 256;  // by remote address; the rest stay for the others
  // Body bytes held at once across all connections (Content-Length reserved up front; a
  // chunked body reserves its route's cap): 503 beyond, so memory stays bounded under load.
  size_t max_body_bytes_in_flight = 64 * 1024 * 1024;
  int workers = 2;              // threads for blocking handlers
  size_t max_queued_jobs = 64;  // blocking requests waiting for a worker: 503 beyond
};

struct Request {
  std::string method, target, path;  // path: the target without its query
  std::string content_type;
  std::string body;
  std::string peer;  // the remote address
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

using Handler = std::function<Response(const Request&)>;

struct Route {
  std::string method;         // "GET", "POST", ...
  std::string path;           // exact match
  size_t max_body_bytes = 0;  // 0: the route takes no body (413 on one)
  // Media types a body must carry (415 otherwise), lowercase, without parameters; empty: any.
  std::vector<std::string> content_types;
  Handler handler;
  bool blocking = false;  // run on the worker pool, not on the io thread
};

// Called on the server's OpenSSL context (TLS 1.2 is already the minimum); an error stops
// Listen.
using TlsSetup = std::function<Status(SSL_CTX*)>;

class HttpServer {
 public:
  explicit HttpServer(Limits limits = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Before Listen.
  void Add(Route route);
  // Binds HOST:PORT (an empty host: every interface; port 0: any free port) and serves on its
  // own thread. With tls, HTTPS. The error names the address.
  Status Listen(const std::string& address, TlsSetup tls = nullptr);
  int port() const;  // the bound port, after Listen
  // Closes the listener and every connection and joins the threads; idempotent.
  void Stop();

  struct Impl;  // internal (http_server.cc)

 private:
  std::unique_ptr<Impl> impl_;
};

// HOST:PORT -> (host, port); an empty host is every interface. nullopt when not HOST:PORT.
std::optional<std::pair<std::string, int>> ParseAddress(const std::string& address);

// Route shorthands: a GET answered on the io thread, a GET that may block.
Route Get(std::string path, Handler h, bool blocking = false);

}  // namespace kai::serve
