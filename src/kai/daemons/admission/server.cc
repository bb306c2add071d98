#include "kai/daemons/admission/server.h"

#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <sys/stat.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "kai/core/admission/pod_resize.h"
#include "kai/core/admission/review.h"
#include "kai/core/k8s/decode.h"
#include "kai/core/k8s/decode_fields.h"
#include "kai/core/k8s/keys.h"
#include "kai/kube/client/api_client.h"
#include "kai/kube/runtime/manager.h"
#include "kai/kube/serve/http_server.h"
#include "kai/kube/serve/metrics.h"

namespace kai::webhook {
namespace {

namespace res = k8s::resources;
using admission::ClusterLookup;
using admission::Request;
using admission::Verdict;

// --- the serving certificate, read again when its files change ---

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct ChainFree {
  void operator()(STACK_OF(X509) * s) const { sk_X509_pop_free(s, X509_free); }
};

struct CertPair {
  std::unique_ptr<X509, X509Free> leaf;
  std::unique_ptr<STACK_OF(X509), ChainFree> chain;  // the intermediates after the leaf
  std::unique_ptr<EVP_PKEY, PkeyFree> key;
};

std::string FileStamp(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "";
  return std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + "/" +
         std::to_string(st.st_size);
}

Result<CertPair> ReadPair(const std::string& cert_file, const std::string& key_file) {
  CertPair p;
  std::unique_ptr<BIO, decltype(&BIO_free)> cert(BIO_new_file(cert_file.c_str(), "r"), BIO_free);
  if (!cert) return Error{"--tls-cert-file " + cert_file + ": cannot be read"};
  p.leaf.reset(PEM_read_bio_X509(cert.get(), nullptr, nullptr, nullptr));
  if (!p.leaf) return Error{"--tls-cert-file " + cert_file + ": no PEM certificate"};
  p.chain.reset(sk_X509_new_null());
  while (X509* extra = PEM_read_bio_X509(cert.get(), nullptr, nullptr, nullptr)) {
    sk_X509_push(p.chain.get(), extra);
  }
  std::unique_ptr<BIO, decltype(&BIO_free)> key(BIO_new_file(key_file.c_str(), "r"), BIO_free);
  if (!key) return Error{"--tls-key-file " + key_file + ": cannot be read"};
  p.key.reset(PEM_read_bio_PrivateKey(key.get(), nullptr, nullptr, nullptr));
  if (!p.key) return Error{"--tls-key-file " + key_file + ": no PEM private key"};
  if (X509_check_private_key(p.leaf.get(), p.key.get()) != 1) {
    return Error{"--tls-key-file " + key_file + ": does not match the certificate in " + cert_file};
  }
  return p;
}

class CertStore {
 public:
  CertStore(std::string cert_file, std::string key_file,
            std::function<void(const std::string&)> log)
      : cert_file_(std::move(cert_file)), key_file_(std::move(key_file)), log_(std::move(log)) {}

  Status Load() {
    auto p = ReadPair(cert_file_, key_file_);
    if (!p.ok()) return p.error();
    std::lock_guard<std::mutex> lock(mu_);
    pair_ = std::make_shared<CertPair>(std::move(p.value()));
    stamp_ = Stamp();
    return Ok();
  }

  // The current pair on one connection (OpenSSL's certificate callback, per handshake).
  bool Install(SSL* ssl) {
    ReloadIfChanged();
    std::shared_ptr<CertPair> p;
    {
      std::lock_guard<std::mutex> lock(mu_);
      p = pair_;
    }
    return p && SSL_use_certificate(ssl, p->leaf.get()) == 1 &&
           SSL_use_PrivateKey(ssl, p->key.get()) == 1 && SSL_set1_chain(ssl, p->chain.get()) == 1;
  }

 private:
  std::string Stamp() const { return FileStamp(cert_file_) + "|" + FileStamp(key_file_); }

  void ReloadIfChanged() {
    const auto now = std::chrono::steady_clock::now();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (now - checked_ < std::chrono::seconds(1)) return;
      checked_ = now;
      if (Stamp() == stamp_) return;
    }
    // A rotation may write the two files one after the other: keep the old pair until both
    // match again.
    if (auto s = Load(); !s.ok()) {
      log_("keeping the previous certificate: " + s.error().message);
      return;
    }
    log_("certificate reloaded from " + cert_file_);
  }

  const std::string cert_file_, key_file_;
  std::function<void(const std::string&)> log_;
  std::mutex mu_;
  std::shared_ptr<CertPair> pair_;
  std::string stamp_;
  std::chrono::steady_clock::time_point checked_{};
};

int CertCallback(SSL* ssl, void* store) { return static_cast<CertStore*>(store)->Install(ssl); }

// --- what the Queue and PodGroup rules read from the cluster ---

class ApiLookup : public ClusterLookup, public admission::QueueUsageLookup {
 public:
  explicit ApiLookup(const k8s::ApiClient& client) : client_(client) {}

  Result<std::optional<QueueHolding>> Queue(std::string_view name) const override {
    const std::string path = k8s::ObjectPath(res::kQueue, "", std::string(name));
    k8s::HttpResponse r = client_.Get(path);
    if (r.status == 404) return std::optional<QueueHolding>{};
    if (!r.ok()) return Error{k8s::Describe({"GET", path}, r)};
    auto queue = DecodedQueue(r.body, name);
    if (!queue.ok()) return queue.error();
    auto d = doc::ParseJson(r.body);
    if (!d.ok()) return Error{"queue " + std::string(name) + ": " + d.error().message};
    auto held = AllocatedOf(d->Roots()[0], name);
    if (!held.ok()) return held.error();
    return std::optional<QueueHolding>{QueueHolding{std::move(*queue), *held}};
  }

  Result<std::string> PodGroupQueue(std::string_view ns, std::string_view name) const override {
    const std::string path = k8s::ObjectPath(res::kPodGroup, std::string(ns), std::string(name));
    k8s::HttpResponse r = client_.Get(path);
    if (r.status == 404) return std::string();
    if (!r.ok()) return Error{k8s::Describe({"GET", path}, r)};
    auto d = doc::ParseJson(r.body);
    if (!d.ok()) return Error{"podgroup " + std::string(name) + ": " + d.error().message};
    return std::string(d->Roots()[0]["spec"]["queue"].Scalar());
  }

  Result<std::optional<QueueObject>> FindQueue(std::string_view name) const override {
    const std::string path = k8s::ObjectPath(res::kQueue, "", std::string(name));
    k8s::HttpResponse r = client_.Get(path);
    if (r.status == 404) return std::optional<QueueObject>{};
    if (!r.ok()) return Error{k8s::Describe({"GET", path}, r)};
    auto queue = DecodedQueue(r.body, name);
    if (!queue.ok()) return queue.error();
    return std::optional<QueueObject>{std::move(*queue)};
  }

  Result<std::vector<std::string>> ChildQueues(std::string_view name) const override {
    std::vector<std::string> children;
    k8s::ApiClient::ListCallbacks cb;
    cb.page = [&](const doc::Node& items) {
      for (size_t i = 0; i < items.size(); ++i) {
        if (items[i]["spec"]["parentQueue"].Scalar() == name) {
          children.emplace_back(items[i]["metadata"]["name"].Scalar());
        }
      }
    };
    cb.restart = [&] { children.clear(); };
    auto rv = client_.List(k8s::CollectionPath(res::kQueue, ""), "", 500, cb);
    if (!rv.ok()) return rv.error();
    return children;
  }

  Result<bool> PodGroupRunning(std::string_view ns, std::string_view name) const override {
    bool running = false;
    k8s::ApiClient::ListCallbacks cb;
    cb.page = [&](const doc::Node& items) {
      for (size_t i = 0; i < items.size(); ++i) running = running || HoldsANode(items[i], name);
    };
    cb.restart = [&] { running = false; };
    auto rv = client_.List(k8s::CollectionPath(res::kPod, std::string(ns)), "", 500, cb);
    if (!rv.ok()) return rv.error();
    return running;
  }

 private:
  // A Queue as the API server wrote it, through kai's decoder.
  static Result<QueueObject> DecodedQueue(std::string_view body, std::string_view name) {
    ClusterState state;
    const Status decoded = DecodeJsonText(body, "queue " + std::string(name), state);
    if (!decoded.ok() || state.queues.empty()) {
      return Error{"queue " + std::string(name) + ": " +
                   (decoded.ok() ? "" : ProblemsOf(decoded).front())};
    }
    return std::move(state.queues.front());
  }

  // status.allocated of a Queue (what kai controllers and KAI's queue controller write).
  static Result<Resources> AllocatedOf(const doc::Node& queue, std::string_view name) {
    const std::string source = "the API server";
    std::vector<std::string> errors;
    decoding::ObjectContext ctx(source, "Queue " + std::string(name), errors);
    Resources held = decoding::ResourceList(queue["status"]["allocated"], "status.allocated", ctx);
    if (!errors.empty()) return Error{errors.front()};
    return held;
  }

  static bool HoldsANode(const doc::Node& pod, std::string_view group) {
    const doc::Node md = pod["metadata"];
    if (md["annotations"][keys::kPodGroupAnnotation].Scalar() != group) return false;
    if (md["deletionTimestamp"].IsDefined() && !md["deletionTimestamp"].IsNull()) return false;
    const std::string_view phase = pod["status"]["phase"].Scalar();
    return !pod["spec"]["nodeName"].Scalar().empty() && phase != "Succeeded" && phase != "Failed";
  }

  const k8s::ApiClient& client_;
};

// KAI's alphabet for the random part of the ConfigMap names (no vowels: no words).
std::string RandomName(size_t n) {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<size_t> pick(0, kAlphabet.size() - 1);
  std::string out;
  for (size_t i = 0; i < n; ++i) out.push_back(kAlphabet[pick(rng)]);
  return out;
}

// --- the server ---

class Webhooks {
 public:
  Webhooks(const ServerOptions& o, const ClusterLookup& lookup,
           const admission::QueueUsageLookup& resize_lookup, runtime::Manager& m)
      : o_(o),
        lookup_(lookup),
        resize_lookup_(resize_lookup),
        m_(m),
        latency_(prometheus::BuildHistogram()
                     .Name("kai_admission_request_duration_seconds")
                     .Help("An admission review's handling, by webhook path (kai).")
                     .Register(metrics_.registry())),
        rejections_(prometheus::BuildCounter()
                        .Name("kai_admission_rejections_total")
                        .Help("Admission requests denied or refused, by webhook and reason (kai).")
                        .Register(metrics_.registry())) {}

  const serve::MetricsRegistry& metrics() const { return metrics_; }

  void Routes(serve::HttpServer& s) {
    Route(s, "/mutate-pod", [this](const Request& r) {
      return admission::MutatePod(r, o_.admission, [](size_t n) { return RandomName(n); });
    });
    Route(s, "/validate-pod", [this](const Request& r) {
      Verdict v = admission::ValidatePod(r, o_.admission);
      if (!v.allowed) return v;
      return admission::ValidatePodResize(r, o_.admission, resize_lookup_);
    });
    Route(s, "/validate-queue",
          [this](const Request& r) { return admission::ValidateQueue(r, o_.admission, lookup_); });
    Route(s, "/validate-podgroup",
          [this](const Request& r) { return admission::ValidatePodGroup(r, lookup_); });
    s.Add(serve::Get("/healthz", [](const serve::Request&) {
      return serve::Response{200, "text/plain", "ok\n", {}};
    }));
    s.Add(serve::MetricsRoute(metrics_));
  }

 private:
  // The API server sends one AdmissionReview as application/json: its object and oldObject
  // are each at most etcd's 1.5 MiB, so 4 MiB holds the largest with room to spare.
  static constexpr size_t kMaxReviewBytes = 4 * 1024 * 1024;

  // On a worker thread: the Queue and PodGroup rules call the API server.
  template <class F>
  void Route(serve::HttpServer& s, const char* path, F decide) {
    serve::Route r;
    r.method = "POST";
    r.path = path;
    r.max_body_bytes = kMaxReviewBytes;
    r.content_types = {"application/json"};
    r.blocking = true;
    prometheus::Histogram& latency = latency_.Add({{"webhook", path}}, LatencyBuckets());
    r.handler = [this, path, decide, &latency](const serve::Request& req) {
      const auto started = std::chrono::steady_clock::now();
      auto review = admission::ParseReview(req.body);
      if (!review.ok()) {
        Log(std::string(path) + ": " + review.error().message);
        Rejected(path, "bad_review");
        return serve::Response{400, "text/plain", review.error().message + "\n", {}};
      }
      const Verdict v = decide(review->request);
      if (!v.allowed) {
        Log(std::string(path) + ": denied: " + v.message);
        Rejected(path, v.reason);
      }
      serve::Response out{200, "application/json", admission::ReviewResponse(review->uid, v), {}};
      latency.Observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      return out;
    };
    s.Add(std::move(r));
  }

  void Log(const std::string& line) { m_.Log(line); }

  void Rejected(const char* path, const std::string& reason) {
    rejections_.Add({{"webhook", path}, {"reason", reason}}).Increment();
  }

  // controller-runtime's webhook latency buckets (prometheus.DefBuckets).
  static prometheus::Histogram::BucketBoundaries LatencyBuckets() {
    return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
  }

  const ServerOptions& o_;
  const ClusterLookup& lookup_;
  const admission::QueueUsageLookup& resize_lookup_;
  runtime::Manager& m_;
  serve::MetricsRegistry& metrics_ = m_.registry();
  prometheus::Family<prometheus::Histogram>& latency_;
  prometheus::Family<prometheus::Counter>& rejections_;
};

// The webhook server on the component runtime: /metrics, /healthz and /readyz are the runtime's
// (plain HTTP); the webhooks answer on their own TLS address. No lease: every replica serves.
class Admission final : public runtime::Component {
 public:
  Admission(const ServerOptions& o, runtime::Manager& m)
      : o_(o), m_(m), certs_(o.cert_file, o.key_file, m.Logger()), lookup_(m.client()) {}

  Status Start() override {
    const auto hp = serve::ParseAddress(o_.address);
    if (!hp || hp->second == 0) return Error{"--bind-address " + o_.address + ": not HOST:PORT"};
    if (auto s = certs_.Load(); !s.ok()) return s;
    serve::Limits limits;
    limits.workers = 4;
    server_ = std::make_unique<serve::HttpServer>(limits);
    hooks_ = std::make_unique<Webhooks>(o_, lookup_, lookup_, m_);
    hooks_->Routes(*server_);
    return Ok();
  }

  Status Sync(std::chrono::milliseconds) override { return Ok(); }
  // The process answers, so it is ready, as controller-runtime's ping checks are.
  bool Synced() const override { return true; }

  int Run() override {
    const auto tls = [this](SSL_CTX* ctx) {
      SSL_CTX_set_cert_cb(ctx, CertCallback, &certs_);
      return Ok();
    };
    if (Status st = server_->Listen(o_.address, tls); !st.ok()) {
      m_.Log("error: " + st.error().message);
      return 1;
    }
    m_.Log("serving on https://" + o_.address);
    while (!m_.Stopping()) m_.Sleep(std::chrono::milliseconds(100));
    return 0;
  }

  void Stop(bool) override {
    if (server_) server_->Stop();
  }

 private:
  const ServerOptions& o_;
  runtime::Manager& m_;
  CertStore certs_;
  ApiLookup lookup_;
  std::unique_ptr<serve::HttpServer> server_;
  std::unique_ptr<Webhooks> hooks_;
};

runtime::ManagerOptions AdmissionManagerOptions(const ServerOptions& o) {
  runtime::ManagerOptions m;
  m.name = "admission";
  m.metrics_address = o.metrics_address;
  m.health_address = o.health_address;
  return m;
}

}  // namespace

int RunAdmission(const ServerOptions& o, std::ostream& err) {
  return runtime::RunComponent(
      runtime::ClientOptionsOf(o), AdmissionManagerOptions(o), err,
      [&](runtime::Manager& m) { return std::make_unique<Admission>(o, m); });
}

int RunAdmission(const ServerOptions& o, const k8s::ApiClient& client, std::ostream& err,
                 const std::atomic<bool>* also_stop) {
  return runtime::RunComponent(
      client, AdmissionManagerOptions(o), err,
      [&](runtime::Manager& m) { return std::make_unique<Admission>(o, m); }, also_stop);
}

}  // namespace kai::webhook
