#pragma once
// The Kubernetes API: resource paths, list with paging, watch, create / patch / update / delete,
// with client-go's fault handling: 429 and 5xx (and transport errors) are retried with
// exponential backoff and jitter, honouring Retry-After, a bounded number of times; every request
// has a time-out; other 4xx answers go back to the caller, who decides (409: re-read). A client
// may carry a write fence (a leader's lease): a write the fence refuses is never sent.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "kai/core/k8s/doc.h"
#include "kai/kube/client/http.h"

namespace kai::k8s {

// One API resource kai reads or writes.
struct ResourceType {
  std::string_view api_version;  // "v1", "scheduling.run.ai/v2", ...
  std::string_view kind;
  std::string_view plural;
  bool namespaced;
};

namespace resources {
inline constexpr ResourceType kNode{"v1", "Node", "nodes", false};
inline constexpr ResourceType kPod{"v1", "Pod", "pods", true};
inline constexpr ResourceType kEvent{"v1", "Event", "events", true};
inline constexpr ResourceType kConfigMap{"v1", "ConfigMap", "configmaps", true};
inline constexpr ResourceType kPersistentVolumeClaim{"v1", "PersistentVolumeClaim",
                                                     "persistentvolumeclaims", true};
inline constexpr ResourceType kStorageClass{"storage.k8s.io/v1", "StorageClass", "storageclasses",
                                            false};
inline constexpr ResourceType kPersistentVolume{"v1", "PersistentVolume", "persistentvolumes",
                                                false};
inline constexpr ResourceType kCsiNode{"storage.k8s.io/v1", "CSINode", "csinodes", false};
inline constexpr ResourceType kQueue{"scheduling.run.ai/v2", "Queue", "queues", false};
inline constexpr ResourceType kPodGroup{"scheduling.run.ai/v2alpha2", "PodGroup", "podgroups",
                                        true};
inline constexpr ResourceType kBindRequest{"scheduling.run.ai/v1alpha2", "BindRequest",
                                           "bindrequests", true};
inline constexpr ResourceType kPriorityClass{"scheduling.k8s.io/v1", "PriorityClass",
                                             "priorityclasses", false};
inline constexpr ResourceType kTopology{"kai.scheduler/v1alpha1", "Topology", "topologies", false};
inline constexpr ResourceType kShard{"kai.scheduler/v1", "SchedulingShard", "schedulingshards",
                                     false};
inline constexpr ResourceType kLease{"coordination.k8s.io/v1", "Lease", "leases", true};
// Dynamic Resource Allocation (resource.k8s.io/v1: Kubernetes 1.34 and later) and the
// NodeResourceTopology CRD (topology.node.k8s.io, installed with a NUMA exporter): many clusters
// serve neither, so the scheduler watches them as optional kinds (informer/reflector.h).
inline constexpr ResourceType kDeviceClass{"resource.k8s.io/v1", "DeviceClass", "deviceclasses",
                                           false};
inline constexpr ResourceType kResourceClaim{"resource.k8s.io/v1", "ResourceClaim",
                                             "resourceclaims", true};
inline constexpr ResourceType kResourceClaimTemplate{"resource.k8s.io/v1", "ResourceClaimTemplate",
                                                     "resourceclaimtemplates", true};
inline constexpr ResourceType kResourceSlice{"resource.k8s.io/v1", "ResourceSlice",
                                             "resourceslices", false};
inline constexpr ResourceType kNodeResourceTopology{
    "topology.node.k8s.io/v1alpha2", "NodeResourceTopology", "noderesourcetopologies", false};
}  // namespace resources

// /api/v1/pods, /api/v1/namespaces/NS/pods, /apis/GROUP/VERSION/...
std::string CollectionPath(const ResourceType& r, std::string_view ns = "");
std::string ObjectPath(const ResourceType& r, std::string_view ns, std::string_view name,
                       std::string_view subresource = "");
std::string UrlEscape(std::string_view s);

struct RetryPolicy {
  int max_attempts = 6;  // 1 = no retry
  std::chrono::milliseconds initial{200};
  std::chrono::milliseconds max{10000};
  std::chrono::milliseconds max_retry_after{60000};
};

// Injected so that retry and backoff are testable without waiting.
struct ClientClock {
  std::function<void(std::chrono::milliseconds)> sleep;  // default: this_thread::sleep_for
  std::function<double()> jitter;                        // uniform in [0, 1); default: seeded RNG
  std::function<std::chrono::steady_clock::time_point()> now;  // default: steady_clock::now
};

// Client-side rate limiting, as client-go's token bucket (rest.Config QPS and Burst): at most
// `burst` tokens, refilled at `qps` a second; each request takes one, and one that finds none
// reserves the next and waits for it, so that waiting requests go in the order they came.
class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;
  // `burst` below 1 counts as 1; the bucket starts full.
  TokenBucket(double qps, int burst, std::function<Clock::time_point()> now);
  // Takes a token: how long the caller waits before its request (0: it goes now).
  std::chrono::milliseconds Reserve();

 private:
  const double qps_;
  const double burst_;
  std::function<Clock::time_point()> now_;
  std::mutex mu_;
  double tokens_;  // below 0: that many requests already wait for a token
  Clock::time_point last_;
};

// kApply: a server-side apply (the body is the whole object as its manager wants it, YAML or
// JSON; the path carries ?fieldManager=...&force=true).
enum class PatchType { kMerge, kStrategicMerge, kJson, kApply };

// The v1 Status of a failed call, read from its body.
struct ApiStatus {
  long code = 0;
  std::string reason, message;
};
ApiStatus StatusOf(const HttpResponse& r);
// "GET /api/v1/pods: 500 InternalError: ..." or the transport error.
std::string Describe(const HttpRequest& req, const HttpResponse& r);

// The writes one leader may send: open until a deadline its lease renewals push forward,
// closed for good once the lease is lost or released. Every write attempt of a fenced client
// (each try of a retried call) is admitted here just before it is sent, so no write starts
// after the deadline passed or Close returned; the writes admitted are counted, so a test can
// compare them with what reached the server.
class WriteFence {
 public:
  using Clock = std::chrono::steady_clock;
  explicit WriteFence(std::function<Clock::time_point()> now = {});

  // Writes may start until `deadline` (a later call moves it; no effect once closed).
  void OpenUntil(Clock::time_point deadline);
  // No write starts after this returns; it never opens again.
  void Close();
  // Whether a write may start now; true counts it as admitted and in flight (Finish ends it).
  bool Admit();
  void Finish();
  // Waits until no admitted write is in flight, at most `timeout`. True when none is.
  bool Drain(std::chrono::milliseconds timeout);
  bool Open() const;
  int64_t admitted() const;

 private:
  std::function<Clock::time_point()> now_;
  mutable std::mutex mu_;
  std::condition_variable idle_;
  Clock::time_point deadline_{};
  bool closed_ = false;
  int64_t admitted_ = 0, in_flight_ = 0;
};

// The answer to a write the fence refused: no HTTP status, and not retryable.
inline constexpr std::string_view kFencedError = "not the leader: the write fence is closed";
bool Fenced(const HttpResponse& r);

class ApiClient {
 public:
  ApiClient(ClusterConfig config, RetryPolicy retry = {}, ClientClock clock = {});

  // With config.qps > 0, every request (each try, each page, each watch) first takes a token of
  // one bucket that every copy of this client shares.
  // The same client (connection pool, retries, rate limit) whose writes pass `fence`: POST, PUT,
  // PATCH and DELETE, through Call or the helpers below. Reads and watches are never fenced.
  ApiClient WithFence(std::shared_ptr<WriteFence> fence) const;

  // One call with retries (429, 5xx, transport errors). The last answer is returned.
  HttpResponse Call(HttpRequest req) const;

  HttpResponse Get(const std::string& path) const;
  // A GET of one object from the API server's watch cache (resourceVersion=0), sparing etcd a
  // read; a 404 there is confirmed by a quorum read, since the cache may lag a moment behind.
  HttpResponse GetCached(const std::string& path) const;
  HttpResponse Create(const std::string& collection_path, std::string body) const;
  HttpResponse Update(const std::string& path, std::string body) const;
  HttpResponse Patch(const std::string& path, std::string body, PatchType type) const;
  HttpResponse Delete(const std::string& path, std::string body = "") const;

  // Lists a collection page by page (`limit` per page), handing each page's `items` to `page`.
  // A continue token that expired (410) restarts the list from the beginning, once `restart` was
  // told (it must forget what earlier pages gave). Returns the list's resourceVersion.
  struct ListCallbacks {
    std::function<void(const doc::Node& items)> page;
    std::function<void()> restart;
    // Told the HTTP status of a page that failed (0: no answer), before the error returns: the
    // reflector treats 404 and 403 of an optional kind as "not served".
    std::function<void(long status)> failed;
  };
  Result<std::string> List(const std::string& collection_path, const std::string& query, int limit,
                           const ListCallbacks& cb) const;

  // One watch request from `resource_version` (allowWatchBookmarks, timeoutSeconds); each event
  // line goes to `sink`. Not retried: the reflector decides what follows.
  HttpResponse Watch(const std::string& collection_path, const std::string& query,
                     const std::string& resource_version, int timeout_seconds, const LineSink& sink,
                     const std::atomic<bool>& stop) const;

  const HttpClient& http() const { return *http_; }
  const ClientClock& clock() const { return clock_; }
  // The delay before retry `attempt` (0-based): exponential with jitter, or the server's
  // Retry-After when it gave one.
  std::chrono::milliseconds Backoff(int attempt, const HttpResponse& last) const;

 private:
  HttpResponse Attempt(const HttpRequest& req) const;
  // Waits for a token of the rate limit, when there is one.
  void Throttle() const;
  std::shared_ptr<const HttpClient> http_;
  std::shared_ptr<TokenBucket> bucket_;
  RetryPolicy retry_;
  ClientClock clock_;
  std::shared_ptr<WriteFence> fence_;
};

// Whether an answer is worth retrying: 429, 5xx, or no answer at all (a fenced write is not).
bool Retryable(const HttpResponse& r);

}  // namespace kai::k8s
