#include "kai/kube/client/api_client.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <mutex>
#include <random>
#include <thread>

namespace kai::k8s {

std::string UrlEscape(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string CollectionPath(const ResourceType& r, std::string_view ns) {
  const bool core = r.api_version.find('/') == std::string_view::npos;
  std::string p = core ? "/api/" : "/apis/";
  p += r.api_version;
  if (r.namespaced && !ns.empty()) {
    p += "/namespaces/";
    p += ns;
  }
  p += "/";
  p += r.plural;
  return p;
}

std::string ObjectPath(const ResourceType& r, std::string_view ns, std::string_view name,
                       std::string_view subresource) {
  std::string p = CollectionPath(r, ns) + "/" + std::string(name);
  if (!subresource.empty()) p += "/" + std::string(subresource);
  return p;
}

ApiStatus StatusOf(const HttpResponse& r) {
  ApiStatus s;
  s.code = r.status;
  auto parsed = doc::ParseJson(r.body);
  if (parsed.ok() && !parsed->Roots().empty()) {
    const doc::Node root = parsed->Roots()[0];
    if (root["kind"].Scalar() == "Status") {
      s.reason = std::string(root["reason"].Scalar());
      s.message = std::string(root["message"].Scalar());
    }
  }
  if (s.message.empty()) s.message = r.transport_error.empty() ? r.body.substr(0, 200) : "";
  return s;
}

std::string Describe(const HttpRequest& req, const HttpResponse& r) {
  std::string out = req.method + " " + req.path + ": ";
  if (r.status == 0) return out + r.transport_error;
  const ApiStatus s = StatusOf(r);
  out += std::to_string(r.status);
  if (!s.reason.empty()) out += " " + s.reason;
  if (!s.message.empty()) out += ": " + s.message;
  if (!r.transport_error.empty()) out += " (" + r.transport_error + ")";
  return out;
}

bool Fenced(const HttpResponse& r) { return r.status == 0 && r.transport_error == kFencedError; }

bool Retryable(const HttpResponse& r) {
  if (Fenced(r)) return false;
  if (r.status == 0 || !r.transport_error.empty()) return true;
  return r.status == 429 || r.status >= 500;
}

namespace {

ClientClock WithDefaults(ClientClock c) {
  if (!c.sleep) c.sleep = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
  if (!c.jitter) {
    auto rng = std::make_shared<std::mt19937_64>(std::random_device{}());
    auto mu = std::make_shared<std::mutex>();
    c.jitter = [rng, mu] {
      std::lock_guard<std::mutex> lock(*mu);
      return std::uniform_real_distribution<double>(0.0, 1.0)(*rng);
    };
  }
  if (!c.now) c.now = [] { return std::chrono::steady_clock::now(); };
  return c;
}

std::optional<int64_t> RetryAfterSeconds(const HttpResponse& r) {
  auto it = r.headers.find("retry-after");
  if (it == r.headers.end()) return std::nullopt;
  int64_t v = 0;
  const char* end = it->second.data() + it->second.size();
  auto [p, ec] = std::from_chars(it->second.data(), end, v);
  if (ec != std::errc() || p != end || v < 0) return std::nullopt;  // an HTTP-date: exponential
  return v;
}

const char* ContentType(PatchType t) {
  switch (t) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
    case PatchType::kJson:
      return "application/json-patch+json";
    case PatchType::kApply:
      return "application/apply-patch+yaml";
  }
  return "application/merge-patch+json";
}

}  // namespace

WriteFence::WriteFence(std::function<Clock::time_point()> now) : now_(std::move(now)) {
  if (!now_) now_ = [] { return Clock::now(); };
}

void WriteFence::OpenUntil(Clock::time_point deadline) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!closed_) deadline_ = deadline;
}

void WriteFence::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
}

bool WriteFence::Admit() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_ || now_() >= deadline_) return false;
  ++admitted_;
  ++in_flight_;
  return true;
}

void WriteFence::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (--in_flight_ == 0) idle_.notify_all();
}

bool WriteFence::Drain(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_.wait_for(lock, timeout, [&] { return in_flight_ == 0; });
}

bool WriteFence::Open() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !closed_ && now_() < deadline_;
}

int64_t WriteFence::admitted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return admitted_;
}

TokenBucket::TokenBucket(double qps, int burst, std::function<Clock::time_point()> now)
    : qps_(qps), burst_(std::max(burst, 1)), now_(std::move(now)), tokens_(burst_), last_(now_()) {}

std::chrono::milliseconds TokenBucket::Reserve() {
  std::lock_guard<std::mutex> lock(mu_);
  const Clock::time_point now = now_();
  if (now > last_) {
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  tokens_ -= 1;
  if (tokens_ >= 0) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(static_cast<int64_t>(std::ceil(-tokens_ / qps_ * 1000)));
}

ApiClient::ApiClient(ClusterConfig config, RetryPolicy retry, ClientClock clock)
    : retry_(retry), clock_(WithDefaults(std::move(clock))) {
  if (config.qps > 0) bucket_ = std::make_shared<TokenBucket>(config.qps, config.burst, clock_.now);
  http_ = std::make_shared<const HttpClient>(std::move(config));
}

void ApiClient::Throttle() const {
  if (!bucket_) return;
  const std::chrono::milliseconds wait = bucket_->Reserve();
  if (wait.count() > 0) clock_.sleep(wait);
}

ApiClient ApiClient::WithFence(std::shared_ptr<WriteFence> fence) const {
  ApiClient fenced = *this;
  fenced.fence_ = std::move(fence);
  return fenced;
}

// One try of a call; a write of a fenced client goes only when the fence admits it.
HttpResponse ApiClient::Attempt(const HttpRequest& req) const {
  Throttle();
  if (!fence_ || req.method == "GET") return http_->Do(req);
  if (!fence_->Admit()) return HttpResponse{0, std::string(kFencedError), "", {}};
  HttpResponse r = http_->Do(req);
  fence_->Finish();
  return r;
}

std::chrono::milliseconds ApiClient::Backoff(int attempt, const HttpResponse& last) const {
  if (auto s = RetryAfterSeconds(last)) {
    return std::min(std::chrono::milliseconds(*s * 1000), retry_.max_retry_after);
  }
  const double base = static_cast<double>(retry_.initial.count()) * std::pow(2.0, attempt);
  const double capped = std::min(base, static_cast<double>(retry_.max.count()));
  // Jitter in [capped/2, capped): spread retries of many clients, never wait longer than the cap.
  return std::chrono::milliseconds(static_cast<int64_t>(capped * (0.5 + 0.5 * clock_.jitter())));
}

HttpResponse ApiClient::Call(HttpRequest req) const {
  HttpResponse last;
  for (int attempt = 0; attempt < retry_.max_attempts; ++attempt) {
    last = Attempt(req);
    if (!Retryable(last)) return last;
    if (attempt + 1 < retry_.max_attempts) clock_.sleep(Backoff(attempt, last));
  }
  return last;
}

HttpResponse ApiClient::Get(const std::string& path) const { return Call({"GET", path}); }

HttpResponse ApiClient::GetCached(const std::string& path) const {
  HttpResponse r = Get(path + "?resourceVersion=0");
  return r.status == 404 ? Get(path) : r;
}

HttpResponse ApiClient::Create(const std::string& collection_path, std::string body) const {
  return Call({"POST", collection_path, std::move(body)});
}

HttpResponse ApiClient::Update(const std::string& path, std::string body) const {
  return Call({"PUT", path, std::move(body)});
}

HttpResponse ApiClient::Patch(const std::string& path, std::string body, PatchType type) const {
  return Call({"PATCH", path, std::move(body), ContentType(type)});
}

HttpResponse ApiClient::Delete(const std::string& path, std::string body) const {
  return Call({"DELETE", path, std::move(body)});
}

Result<std::string> ApiClient::List(const std::string& collection_path, const std::string& query,
                                    int limit, const ListCallbacks& cb) const {
  std::string token;
  int restarts = 0;
  while (true) {
    std::string path = collection_path + "?limit=" + std::to_string(limit);
    if (!query.empty()) path += "&" + query;
    if (!token.empty()) path += "&continue=" + UrlEscape(token);
    const HttpRequest req{"GET", path};
    HttpResponse r = Call(req);
    if (r.status == 410 && !token.empty() && restarts < 3) {
      // The continue token expired (the server compacted): list again from the start.
      ++restarts;
      token.clear();
      if (cb.restart) cb.restart();
      continue;
    }
    if (!r.ok()) {
      if (cb.failed) cb.failed(r.status);
      return Error{Describe(req, r)};
    }
    auto parsed = doc::ParseJson(r.body);
    if (!parsed.ok()) return Error{req.path + ": " + parsed.error().message};
    const doc::Node root = parsed->Roots().at(0);
    if (cb.page) cb.page(root["items"]);
    token = std::string(root["metadata"]["continue"].Scalar());
    if (token.empty()) return std::string(root["metadata"]["resourceVersion"].Scalar());
  }
}

HttpResponse ApiClient::Watch(const std::string& collection_path, const std::string& query,
                              const std::string& resource_version, int timeout_seconds,
                              const LineSink& sink, const std::atomic<bool>& stop) const {
  std::string path = collection_path + "?watch=1&allowWatchBookmarks=true&resourceVersion=" +
                     UrlEscape(resource_version) +
                     "&timeoutSeconds=" + std::to_string(timeout_seconds);
  if (!query.empty()) path += "&" + query;
  HttpRequest req{"GET", path};
  // The server ends the watch after timeoutSeconds; allow for a late close. A quiet kind may
  // send nothing for the whole watch, so silence is no error; TCP keep-alive finds a dead peer.
  req.timeout = std::chrono::milliseconds((timeout_seconds + 30) * 1000LL);
  Throttle();
  return http_->Stream(req, sink, stop, std::chrono::milliseconds(0));
}

}  // namespace kai::k8s
