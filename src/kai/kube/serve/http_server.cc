#include "kai/kube/serve/http_server.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <charconv>
#include <condition_variable>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>

#include "kai/kube/tls/fips.h"

namespace kai::serve {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// Threads for the handlers that may block; a full queue refuses at once (the caller answers 503).
class WorkerPool {
 public:
  WorkerPool(int threads, size_t max_queued) : max_queued_(max_queued) {
    for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { Work(); });
  }
  ~WorkerPool() { Stop(); }

  bool TryPost(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_ || jobs_.size() >= max_queued_) return false;
      jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
    return true;
  }

  // Queued jobs are dropped; running ones finish.
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopped_ = true;
      jobs_.clear();
    }
    cv_.notify_all();
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
    threads_.clear();
  }

 private:
  void Work() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stopped_ || !jobs_.empty(); });
        if (stopped_) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }

  const size_t max_queued_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stopped_ = false;
  std::vector<std::thread> threads_;
};

std::string_view View(beast::string_view v) { return {v.data(), v.size()}; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "Application/JSON; charset=utf-8" -> "application/json".
std::string MediaType(std::string_view v) {
  v = v.substr(0, v.find(';'));
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return Lower(v);
}

Response Refusal(int status, std::string why) {
  return Response{status, "text/plain", std::move(why) + "\n", {}};
}

}  // namespace

struct HttpServer::Impl {
  explicit Impl(Limits l) : limits(l) {}

  // Connection slots and body bytes (sessions may end on any thread).
  bool AcquireConnection(const std::string& peer) {
    std::lock_guard<std::mutex> lock(mu);
    size_t& mine = per_peer[peer];
    if (connections >= limits.max_connections || mine >= limits.max_connections_per_peer) {
      if (mine == 0) per_peer.erase(peer);
      return false;
    }
    ++connections;
    ++mine;
    return true;
  }
  void ReleaseConnection(const std::string& peer) {
    std::lock_guard<std::mutex> lock(mu);
    --connections;
    if (--per_peer[peer] == 0) per_peer.erase(peer);
  }
  bool ReserveBody(size_t n) {
    std::lock_guard<std::mutex> lock(mu);
    if (n > limits.max_body_bytes_in_flight - body_bytes) return false;
    body_bytes += n;
    return true;
  }
  void ReleaseBody(size_t n) {
    std::lock_guard<std::mutex> lock(mu);
    body_bytes -= n;
  }

  // Routes on this path, and the one for this method among them.
  std::pair<const Route*, std::string> Find(std::string_view method, std::string_view path) const {
    std::string allow;
    for (const Route& r : routes) {
      if (r.path != path) continue;
      if (r.method == method) return {&r, ""};
      allow += (allow.empty() ? "" : ", ") + r.method;
    }
    return {nullptr, allow};
  }

  void Accept();
  void OnAccept(tcp::socket socket);

  const Limits limits;
  std::vector<Route> routes;
  std::mutex mu;
  size_t connections = 0, body_bytes = 0;
  std::map<std::string, size_t> per_peer;
  std::unique_ptr<WorkerPool> pool;
  std::thread io_thread;
  int port = 0;
  // The io state, destroyed (pending sessions with it) in Stop, after the threads are joined.
  struct Io {
    std::optional<asio::ssl::context> tls;
    asio::io_context ioc{1};
    tcp::acceptor acceptor{ioc};
    asio::steady_timer backoff{ioc};
  };
  std::unique_ptr<Io> io = std::make_unique<Io>();
};

namespace {

// One connection: requests read one at a time, each bounded before its handler runs.
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(HttpServer::Impl& server, Stream stream, std::string peer)
      : server_(server),
        stream_(std::move(stream)),
        peer_(std::move(peer)),
        buffer_(server.limits.max_header_bytes + 4096) {}
  ~Session() {
    ReleaseBody();
    server_.ReleaseConnection(peer_);
  }

  void Start() {
    Lowest().expires_after(server_.limits.header_timeout);
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      stream_.async_handshake(asio::ssl::stream_base::server,
                              [self = this->shared_from_this()](error_code ec) {
                                if (ec) return self->Close();
                                self->ReadHeader();
                              });
    } else {
      ReadHeader();
    }
  }

 private:
  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  void ReadHeader() {
    if (!first_) Lowest().expires_after(server_.limits.idle_timeout);
    head_.emplace();
    head_->header_limit(static_cast<std::uint32_t>(server_.limits.max_header_bytes));
    // The route's cap is applied after the header. (Not boost::none: Boost 1.74 compares a
    // Content-Length with an empty optional as over the limit.)
    head_->body_limit(std::numeric_limits<std::uint64_t>::max());
    http::async_read_header(
        stream_, buffer_, *head_,
        [self = this->shared_from_this()](error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(error_code ec) {
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
      return Reply(Refusal(431, "request header over the limit of " +
                                    std::to_string(server_.limits.max_header_bytes) + " bytes"),
                   true);
    }
    // A parse error answers 400; a time-out, a reset or an end of stream just closes.
    const bool http_error =
        ec && &ec.category() == &http::make_error_code(http::error::end_of_stream).category();
    if (ec &&
        (!http_error || ec == http::error::end_of_stream || ec == http::error::partial_message)) {
      return Close();
    }
    if (ec) return Reply(Refusal(400, "malformed request: " + ec.message()), true);
    const auto& h = head_->get();
    req_ = Request{};
    req_.method = std::string(View(h.method_string()));
    req_.target = std::string(View(h.target()));
    req_.path = req_.target.substr(0, req_.target.find('?'));
    req_.content_type = std::string(View(h[http::field::content_type]));
    req_.peer = peer_;
    keep_alive_ = h.keep_alive();
    if (std::optional<Response> refused = Check(); refused) return Reply(std::move(*refused), true);
    if (!has_body_) return Dispatch();
    full_.emplace(std::move(*head_));
    full_->body_limit(route_->max_body_bytes);
    Lowest().expires_after(server_.limits.body_timeout);
    http::async_read(
        stream_, buffer_, *full_,
        [self = this->shared_from_this()](error_code ec, size_t) { self->OnBody(ec); });
  }

  // Everything the header alone decides: route, method, encodings, size, type, capacity.
  std::optional<Response> Check() {
    const auto& h = head_->get();
    auto [route, allow] = server_.Find(req_.method, req_.path);
    if (!route && allow.empty()) return Refusal(404, "no route " + req_.path);
    if (!route) {
      Response r = Refusal(405, req_.method + " " + req_.path + ": allowed: " + allow);
      r.headers.emplace_back("Allow", allow);
      return r;
    }
    route_ = route;
    const std::string encoding = Lower(View(h[http::field::content_encoding]));
    if (!encoding.empty() && encoding != "identity") {
      return Refusal(415, "Content-Encoding " + encoding + " refused: send the body uncompressed");
    }
    const std::string transfer = Lower(View(h[http::field::transfer_encoding]));
    if (!transfer.empty() && transfer != "chunked") {
      return Refusal(501, "Transfer-Encoding " + transfer + " refused (only chunked)");
    }
    const boost::optional<std::uint64_t> length = head_->content_length();
    has_body_ = head_->chunked() || (length && *length > 0);
    if (!has_body_) return std::nullopt;
    const size_t cap = route->max_body_bytes;
    if (cap == 0) return Refusal(413, req_.method + " " + req_.path + " takes no body");
    if (length && *length > cap) {
      return Refusal(413, "request body of " + std::to_string(*length) +
                              " bytes over the limit of " + std::to_string(cap) + " for " +
                              req_.path);
    }
    if (!route->content_types.empty() &&
        std::find(route->content_types.begin(), route->content_types.end(),
                  MediaType(req_.content_type)) == route->content_types.end()) {
      return Refusal(415, "Content-Type \"" + req_.content_type + "\" refused for " + req_.path +
                              " (expected " + route->content_types.front() + ")");
    }
    const size_t want = length ? static_cast<size_t>(*length) : cap;
    if (!server_.ReserveBody(want)) {
      Response r = Refusal(503, "too many request bodies in flight; retry");
      r.headers.emplace_back("Retry-After", "1");
      return r;
    }
    reserved_ = want;
    return std::nullopt;
  }

  void OnBody(error_code ec) {
    if (ec == http::error::body_limit) {
      return Reply(
          Refusal(413, "request body over the limit of " + std::to_string(route_->max_body_bytes) +
                           " bytes for " + req_.path),
          true);
    }
    if (ec) return Close();
    req_.body = std::move(full_->get().body());
    full_.reset();
    Dispatch();
  }

  static Response Run(const Route& route, const Request& req) {
    try {
      return route.handler(req);
    } catch (const std::exception& e) {
      return Refusal(500, std::string("internal error: ") + e.what());
    }
  }

  void Dispatch() {
    if (!route_->blocking) return Reply(Run(*route_, req_), false);
    auto self = this->shared_from_this();
    const bool queued = server_.pool->TryPost([self] {
      Response r = Run(*self->route_, self->req_);
      asio::post(self->server_.io->ioc,
                 [self, r = std::move(r)]() mutable { self->Reply(std::move(r), false); });
    });
    if (!queued) {
      Response r = Refusal(503, "busy; retry");
      r.headers.emplace_back("Retry-After", "1");
      Reply(std::move(r), true);
    }
  }

  void Reply(Response r, bool close) {
    req_.body.clear();
    req_.body.shrink_to_fit();
    ReleaseBody();
    auto res = std::make_shared<http::response<http::string_body>>();
    res->version(11);
    res->result(static_cast<unsigned>(r.status));
    res->set(http::field::content_type, r.content_type);
    for (const auto& [k, v] : r.headers) res->set(k, v);
    res->body() = std::move(r.body);
    res->keep_alive(!close && keep_alive_);
    res->prepare_payload();
    Lowest().expires_after(server_.limits.body_timeout);
    http::async_write(stream_, *res, [self = this->shared_from_this(), res](error_code ec, size_t) {
      if (ec || !res->keep_alive()) return self->Close();
      self->first_ = false;
      self->ReadHeader();
    });
  }

  void ReleaseBody() {
    if (reserved_ == 0) return;
    server_.ReleaseBody(reserved_);
    reserved_ = 0;
  }

  // No TLS close_notify: the responses carry their length, and a peer that stops reading must
  // not hold the connection.
  void Close() {
    error_code ignored;
    Lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    Lowest().close();
  }

  HttpServer::Impl& server_;
  Stream stream_;
  const std::string peer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::empty_body>> head_;
  std::optional<http::request_parser<http::string_body>> full_;
  const Route* route_ = nullptr;
  Request req_;
  bool first_ = true, keep_alive_ = false, has_body_ = false;
  size_t reserved_ = 0;
};

}  // namespace

void HttpServer::Impl::Accept() {
  io->acceptor.async_accept([this](error_code ec, tcp::socket socket) {
    if (!io->acceptor.is_open()) return;
    if (!ec) {
      OnAccept(std::move(socket));
      return Accept();
    }
    // Out of descriptors or the like: wait a little instead of spinning.
    io->backoff.expires_after(std::chrono::milliseconds(50));
    io->backoff.async_wait([this](error_code) { Accept(); });
  });
}

void HttpServer::Impl::OnAccept(tcp::socket socket) {
  error_code ec;
  const tcp::endpoint remote = socket.remote_endpoint(ec);
  if (ec) return;
  std::string peer = remote.address().to_string();
  if (!AcquireConnection(peer)) {
    socket.close(ec);  // over the cap: closed at once, before any byte is read
    return;
  }
  socket.set_option(tcp::no_delay(true), ec);
  if (io->tls) {
    std::make_shared<Session<TlsStream>>(
        *this, TlsStream(beast::tcp_stream(std::move(socket)), *io->tls), std::move(peer))
        ->Start();
  } else {
    std::make_shared<Session<PlainStream>>(*this, PlainStream(std::move(socket)), std::move(peer))
        ->Start();
  }
}

HttpServer::HttpServer(Limits limits) : impl_(std::make_unique<Impl>(limits)) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Add(Route route) { impl_->routes.push_back(std::move(route)); }

int HttpServer::port() const { return impl_->port; }

Status HttpServer::Listen(const std::string& address, TlsSetup tls) {
  Impl& s = *impl_;
  if (!s.io || s.io_thread.joinable()) return Error{"listen " + address + ": already serving"};
  auto hp = ParseAddress(address);
  if (!hp) return Error{"bad address \"" + address + "\" (expected HOST:PORT)"};
  if (tls) {
    s.io->tls.emplace(asio::ssl::context::tls_server);
    SSL_CTX* ctx = s.io->tls->native_handle();
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    if (Status st = kai::tls::RestrictWhenFips(ctx); !st.ok()) return st;
    if (Status st = tls(ctx); !st.ok()) return st;
  }
  error_code ec;
  tcp::resolver resolver(s.io->ioc);
  const auto found = resolver.resolve(hp->first, std::to_string(hp->second),
                                      tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || found.empty()) {
    return Error{"cannot listen on " + address + ": " + (ec ? ec.message() : "no such host")};
  }
  const tcp::endpoint ep = found.begin()->endpoint();
  tcp::acceptor& a = s.io->acceptor;
  a.open(ep.protocol(), ec);
  if (!ec) a.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    a.close();
    return Error{"cannot listen on " + address + ": " + ec.message()};
  }
  s.port = a.local_endpoint().port();
  s.pool = std::make_unique<WorkerPool>(s.limits.workers, s.limits.max_queued_jobs);
  s.Accept();
  s.io_thread = std::thread([&s] { s.io->ioc.run(); });
  return Ok();
}

void HttpServer::Stop() {
  Impl& s = *impl_;
  if (!s.io) return;
  if (s.io_thread.joinable()) {
    asio::post(s.io->ioc, [&s] {
      error_code ignored;
      s.io->acceptor.close(ignored);
    });
    s.io->ioc.stop();
    s.io_thread.join();
  }
  if (s.pool) s.pool->Stop();
  s.io.reset();  // closes every connection left (their sessions are held by pending handlers)
}

std::optional<std::pair<std::string, int>> ParseAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "0.0.0.0";
  int port = 0;
  const std::string p = address.substr(colon + 1);
  auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
  if (p.empty() || ec != std::errc() || ptr != p.data() + p.size() || port < 0 || port > 65535) {
    return std::nullopt;
  }
  return std::make_pair(host, port);
}

Route Get(std::string path, Handler h, bool blocking) {
  Route r;
  r.method = "GET";
  r.path = std::move(path);
  r.handler = std::move(h);
  r.blocking = blocking;
  return r;
}

}  // namespace kai::serve
