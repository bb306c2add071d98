#include "kai/daemons/binder/controller.h"

#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <ostream>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "kai/core/k8s/json_body.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/util/time.h"
#include "kai/daemons/binder/binder.h"
#include "kai/kube/informer/informer.h"
#include "kai/kube/runtime/background.h"
#include "kai/kube/runtime/manager.h"
#include "kai/kube/serve/controller_metrics.h"
#include "kai/kube/serve/metrics.h"
#include "kai/kube/tls/fips.h"

namespace kai::binder {

FailureOutcome OnFailure(const BindRequestObject& request) {
  FailureOutcome out;
  out.failed_attempts = request.failed_attempts;
  if (!request.backoff_limit) return out;  // KAI: without a limit the first failure is final
  const int before = request.failed_attempts;
  out.failed_attempts = before + 1;
  // Final once the attempts reach the limit: the rule the scheduler deletes failed requests by.
  if (out.failed_attempts < *request.backoff_limit) {
    out.retry_after = std::chrono::seconds(int64_t{1} << std::min(before, 30));
  }
  return out;
}

std::optional<std::chrono::seconds> PendingRetry(const BindRequestObject& request) {
  if (request.phase != "Failed" || !request.backoff_limit) return std::nullopt;
  const int a = request.failed_attempts;
  if (a < 1 || a >= *request.backoff_limit) return std::nullopt;
  return std::chrono::seconds(int64_t{1} << std::min(a - 1, 30));
}

namespace {

namespace res = k8s::resources;
constexpr size_t kRequestsKind = 0;
constexpr size_t kPodsKind = 1;
constexpr size_t kNodesKind = 2;
const std::string kResync = "resync";
const std::string kControllerName = "bindrequest";  // controller-runtime's name: the kind's

std::string RequestKey(const std::string& informer_key) { return "br/" + informer_key; }
std::string GroupKey(const std::string& g) { return "group/" + g; }

bool Finished(const BindRequestObject& b) { return b.phase == "Succeeded" || b.phase == "Failed"; }

struct Counters {
  std::atomic<int64_t> succeeded{0}, failed{0}, retried{0}, invalid_deleted{0}, already_bound{0};
  std::atomic<int64_t> parked{0};
};

class Controller final : public GroupView, public runtime::Component {
 public:
  Controller(const BinderOptions& o, runtime::Manager& m)
      : o_(o), m_(m), client_(m.client()), queue_(o.rate_limit), background_(20000, 4) {
    queue_.SetMetrics(std::make_shared<serve::WorkQueueMetrics>(registry_, kControllerName));
    registry_.AddSource([this] { return Metrics(); });
  }

  Status Start() override {
    auto config =
        MergePluginConfig(DefaultPluginConfig(), o_.plugins_json.empty() ? "{}" : o_.plugins_json);
    if (!config.ok()) return config.error();
    auto plugins = BuildPlugins(*config, client_, m_.stop_flag(), m_.Logger());
    if (!plugins.ok()) return plugins.error();
    ReservationOptions ro = o_.reservation;
    ro.log = m_.Logger();
    ro.fips_mode = tls::FipsModeEnabled();
    reservations_ = std::make_unique<ReservationService>(client_, ro, this);
    binder_ = std::make_unique<Binder>(client_, *reservations_, std::move(plugins.value()));
    StartInformer();
    return Ok();
  }

  Status Sync(std::chrono::milliseconds timeout) override {
    if (informer_->WaitForFirstLists(timeout)) return Ok();
    return Error{
        "the caches did not sync within the time-out (is the API server reachable and is the "
        "BindRequest CRD installed? see deploy/crds)"};
  }

  bool Synced() const override { return informer_ && informer_->Synced(); }

  void Standby() override { Apply(); }  // keep the caches current while waiting

  int Run() override {
    Apply();
    if (auto s = reservations_->SyncAll(); !s.ok())
      Log("syncing reservations: " + s.error().message);
    last_resync_ = std::chrono::steady_clock::now();
    for (int i = 0; i < std::max(1, o_.max_concurrent); ++i)
      workers_.emplace_back([this] { Work(); });
    Log("started: " + std::to_string(workers_.size()) + " workers");
    while (!m_.Stopping()) {
      informer_->WaitForDeltas(std::chrono::milliseconds(50));
      Apply();
      ManageBackground();
      const auto now = std::chrono::steady_clock::now();
      if (o_.resync_period.count() > 0 && now - last_resync_ >= o_.resync_period) {
        queue_.Add(kResync);
        last_resync_ = now;
      }
    }
    return 0;
  }

  // The queued keys and background writes are dropped after a lost lease (the fence refuses
  // them anyway), flushed for a few seconds on a clean stop.
  void Stop(bool lease_lost) override {
    queue_.ShutDown();
    if (lease_lost) background_.Clear();
    for (auto& t : workers_) t.join();
    workers_.clear();
    background_.Resume();
    if (!lease_lost && !background_.Flush(std::chrono::seconds(5))) {
      Log("stopping with status writes or events unwritten");
    }
    if (informer_) informer_->Stop();
  }

 private:
  void Log(const std::string& l) { m_.Log(l); }

  void StartInformer() {
    informer::InformerOptions io;
    io.hub = o_.watch_hub;
    io.log = m_.Logger();
    io.on_delta = [this](size_t kind, const std::string& key, const ClusterState* obj) {
      OnDelta(kind, key, obj);
    };
    std::vector<informer::WatchSpec> specs{
        {res::kBindRequest, ""},
        {res::kPod, "labelSelector=" + k8s::UrlEscape(std::string(keys::kGpuGroupLabel))},
        {res::kNode, ""}};
    informer_ = std::make_unique<informer::Informer>(client_, std::move(specs), io);
    informer_->Start();
  }

  void Apply() {
    ClusterChanges changes;
    informer_->Apply(world_, changes);
  }

  // Status writes and events wait while binds are flowing, at most the deferral at a time.
  void ManageBackground() {
    const bool busy = queue_.Len() > 0 || in_flight_.load() > 0;
    const auto now = std::chrono::steady_clock::now();
    if (busy && !paused_ && !deferral_spent_ && o_.status_write_deferral.count() > 0) {
      background_.Pause();
      paused_ = true;
      paused_since_ = now;
    } else if (paused_ && (!busy || now - paused_since_ >= o_.status_write_deferral)) {
      background_.Resume();
      paused_ = false;
      deferral_spent_ = busy;
    } else if (!busy) {
      deferral_spent_ = false;
    }
  }

  // --- what the watches tell ---

  void OnDelta(size_t kind, const std::string& key, const ClusterState* obj) {
    if (kind == kRequestsKind) {
      OnRequest(key, obj && !obj->bind_requests.empty() ? &obj->bind_requests[0] : nullptr);
    } else if (kind == kPodsKind) {
      OnPod(key, obj && !obj->pods.empty() ? &obj->pods[0] : nullptr);
    } else if (kind == kNodesKind) {
      std::lock_guard<std::mutex> lock(mu_);
      if (obj) {
        nodes_.insert(key);
      } else {
        nodes_.erase(key);
      }
    }
  }

  void OnRequest(const std::string& key, const BindRequestObject* b) {
    std::vector<std::string> sync_groups;
    {
      std::lock_guard<std::mutex> lock(mu_);
      SetActive(key, nullptr);
      if (!b) {
        if (auto it = fraction_groups_.find(key); it != fraction_groups_.end()) {
          sync_groups = it->second;  // KAI's delete handler: the groups may be free now
          fraction_groups_.erase(it);
        }
        requests_.erase(key);
        succeeded_.erase(key);
      } else {
        if (IsSharedGpu(*b)) fraction_groups_[key] = b->selected_gpu_groups;
        SetActive(key, b);
        if (b->phase == "Succeeded" || b->meta.deletion) {
          requests_.erase(key);
          succeeded_.erase(key);
        } else {
          requests_[key] = *b;
        }
      }
    }
    for (const std::string& g : sync_groups) queue_.Add(GroupKey(g));
    if (!b || b->phase == "Succeeded" || b->meta.deletion) return;
    if (b->phase == "Failed") {
      if (auto delay = PendingRetry(*b)) queue_.AddAfter(RequestKey(key), *delay);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (succeeded_.count(key)) return;  // bound; its status write has not come back yet
    }
    queue_.Add(RequestKey(key));
  }

  // A request not yet finished holds its groups' reservation pods (mu_ held).
  void SetActive(const std::string& key, const BindRequestObject* b) {
    if (!b) {
      auto it = active_by_key_.find(key);
      if (it == active_by_key_.end()) return;
      for (const std::string& g : it->second) {
        if (--active_groups_[g] <= 0) active_groups_.erase(g);
      }
      active_by_key_.erase(it);
      return;
    }
    if (!IsSharedGpu(*b) || Finished(*b) || b->meta.deletion) return;
    active_by_key_[key] = b->selected_gpu_groups;
    for (const std::string& g : b->selected_gpu_groups) ++active_groups_[g];
  }

  void OnPod(const std::string& key, const PodObject* p) {
    std::vector<std::string> groups, wake;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!p) {
        if (const IndexedPod* known = groups_index_.Find(key)) {
          groups = known->groups;
          if (known->reservation) wake = parked_.Take(groups);
        }
        groups_index_.Erase(key);
      } else {
        IndexedPod ip = Indexed(*p);
        if (ip.reservation) wake = parked_.Take(ip.groups);
        // A finished fraction pod frees its share; a reservation pod that went takes its
        // group's running pods with it (their GPU is no longer held).
        if (p->phase == "Succeeded" || p->phase == "Failed" || p->meta.deletion) groups = ip.groups;
        groups_index_.Upsert(key, std::move(ip));
      }
    }
    for (const std::string& g : groups) queue_.Add(GroupKey(g));
    for (const std::string& k : wake) queue_.Add(RequestKey(k));
  }

  IndexedPod Indexed(const PodObject& p) const {
    IndexedPod ip;
    ip.node = std::string(p.node_name);
    ip.groups.assign(p.gpu_groups.begin(), p.gpu_groups.end());
    ip.reservation = p.meta.ns == o_.reservation.ns;
    ip.holds_gpu = !ip.reservation && !ip.node.empty() && !p.meta.deletion &&
                   (p.phase == "Running" || p.phase == "Pending");
    ip.has_gpu_id = ip.reservation && !p.meta.deletion &&
                    p.meta.annotations.count(std::string(keys::kReservedGpuAnnotation)) > 0;
    return ip;
  }

  size_t ParkedGroups() const {
    std::lock_guard<std::mutex> lock(mu_);
    return parked_.groups();
  }

  bool NodeKnown(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mu_);
    return nodes_.count(name) > 0;
  }

  // --- GroupView: what the pod watch knows, for the reservation syncs ---

  std::vector<std::string> GroupsOnNode(const std::string& node) const override {
    std::lock_guard<std::mutex> lock(mu_);
    return groups_index_.GroupsOnNode(node);
  }

  bool KnownReserved(const std::string& group) const override {
    std::lock_guard<std::mutex> lock(mu_);
    return groups_index_.Reservations(group) > 0;
  }

  bool KnownInUse(const std::string& group) const override {
    std::lock_guard<std::mutex> lock(mu_);
    return groups_index_.Reservations(group) > 0 &&
           (groups_index_.Holders(group) > 0 || active_groups_.count(group) > 0);
  }

  bool Active(const std::string& group) const override {
    std::lock_guard<std::mutex> lock(mu_);
    return active_groups_.count(group) > 0;
  }

  // --- the workers ---

  void Work() {
    runtime::RunWorker(
        queue_,
        [this](const std::string& item) {
          ++in_flight_;
          const bool done = Process(item);
          --in_flight_;
          return done;
        },
        [this] { return m_.Stopping(); }, [this](const std::string&) { return &reconciles_; });
  }

  bool Process(const std::string& item) {
    if (item == kResync) {
      if (auto s = reservations_->SyncAll(); !s.ok()) {
        Log("syncing reservations: " + s.error().message);
        return false;
      }
      return true;
    }
    if (item.rfind("group/", 0) == 0) {
      if (auto s = reservations_->SyncGroup(item.substr(6)); !s.ok()) {
        Log("syncing GPU group " + item.substr(6) + ": " + s.error().message);
        return false;
      }
      return true;
    }
    return Reconcile(item.substr(3));
  }

  // False: retry with the rate limiter (the outcome could not be read or written).
  bool Reconcile(const std::string& key) {
    BindRequestObject br;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = requests_.find(key);
      if (it == requests_.end() || succeeded_.count(key)) return true;
      br = it->second;
    }
    if (br.meta.deletion || br.phase == "Succeeded") return true;
    if (br.phase == "Failed" && !PendingRetry(br)) return true;
    const std::string pod_path = k8s::ObjectPath(res::kPod, br.meta.ns, br.pod_name);
    // From the watch cache: a stale "not bound yet" is safe, the binding itself then fails with
    // a conflict and CreateBinding reads the pod from etcd.
    k8s::HttpResponse r = client_.GetCached(pod_path);
    if (r.status == 404) return true;  // the request goes with its pod (owner reference)
    if (!r.ok()) {
      Log(k8s::Describe({"GET", pod_path}, r));
      return false;
    }
    auto pod = ParsePod(r.body);
    if (!pod.ok()) return Failure(key, br, nullptr, pod.error().message);
    if (pod->deleting) return true;
    if (!pod->node_name.empty()) {
      Log("pod " + pod->Ref() + " is bound to node " + pod->node_name + " already");
      ++counters_.already_bound;
      return Success(key, br, *pod);
    }
    if (!NodeKnown(br.selected_node)) {
      // Not (yet) seen by the node watch: ask etcd before calling the node missing.
      const std::string node_path = k8s::ObjectPath(res::kNode, "", br.selected_node);
      k8s::HttpResponse n = client_.Get(node_path);
      if (n.status == 404)
        return Failure(key, br, &*pod, "node " + br.selected_node + " not found");
      if (!n.ok()) {
        Log(k8s::Describe({"GET", node_path}, n));
        return false;
      }
    }
    const auto t0 = std::chrono::steady_clock::now();
    BindResult result = binder_->Bind(*pod, br);
    if (result.ok()) {
      bind_duration_.Observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      return Success(key, br, *pod);
    }
    if (result.waiting()) return Park(key, result);
    Log("failed to bind pod " + pod->Ref() + " to node " + br.selected_node + ": " + result.error);
    if (auto s = binder_->Rollback(*pod, br); !s.ok()) Log(s.error().message);
    if (result.failure == BindFailure::kInvalidRequest) return DeleteInvalid(br, result.error);
    return Failure(key, br, &*pod, result.error);
  }

  // The bind waits for reservation pods without a GPU id: the request is tried again when one
  // of them changes (OnPod) or when the first allocation time-out is due. The worker is free
  // meanwhile, so a burst of new GPU groups starts its reservation pods together.
  bool Park(const std::string& key, const BindResult& result) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      // The GPU id may have come between the bind's read and now: then no event will follow
      // (after a moment: the watch may be ahead of a pod deleted and made again).
      if (!parked_.Park(key, result.waiting_groups, groups_index_)) {
        queue_.AddAfter(RequestKey(key), std::chrono::milliseconds(20));
        return true;
      }
    }
    ++counters_.parked;
    queue_.AddAfter(RequestKey(key), result.wait_left + std::chrono::milliseconds(50));
    return true;
  }

  bool Success(const std::string& key, const BindRequestObject& br, const PodView& pod) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      succeeded_.insert(key);
    }
    ++counters_.succeeded;
    const std::string path = k8s::ObjectPath(res::kBindRequest, br.meta.ns, br.meta.name, "status");
    background_.Put("br/" + key, [this, path] {
      return client_.Patch(path, R"({"status":{"phase":"Succeeded"}})", k8s::PatchType::kMerge)
          .ok();
    });
    const std::string msg = "Pod bound successfully to node " + br.selected_node;
    MarkPod(pod, "True", "Bound", msg, "Normal");
    return true;
  }

  // What the status write just made of the request, before the watch brings it back: a wake-up
  // or a retry meanwhile must not bind with the stale copy.
  void RecordFailed(const std::string& key, int attempts) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = requests_.find(key);
    if (it == requests_.end()) return;
    it->second.phase = "Failed";
    it->second.failed_attempts = attempts;
    SetActive(key, nullptr);
    SetActive(key, &it->second);
  }

  bool Failure(const std::string& key, const BindRequestObject& br, const PodView* pod,
               const std::string& error) {
    const FailureOutcome f = OnFailure(br);
    const std::string path = k8s::ObjectPath(res::kBindRequest, br.meta.ns, br.meta.name, "status");
    const std::string body = k8s::Json([&](k8s::JsonWriter& w) {
      w.StartObject();
      k8s::Str(w, "status");
      w.StartObject();
      k8s::KeyStr(w, "phase", "Failed");
      k8s::KeyStr(w, "reason", error);
      k8s::Str(w, "failedAttempts");
      w.Int(f.failed_attempts);
      w.EndObject();
      w.EndObject();
    });
    k8s::HttpResponse r = client_.Patch(path, body, k8s::PatchType::kMerge);
    if (r.status == 404) return true;
    if (!r.ok()) {
      Log(k8s::Describe({"PATCH", path}, r));
      return false;
    }
    ++counters_.failed;
    RecordFailed(key, f.failed_attempts);
    if (f.retry_after) {
      ++counters_.retried;
      queue_.AddAfter(RequestKey(key),
                      std::chrono::duration_cast<std::chrono::milliseconds>(*f.retry_after));
    }
    if (pod) {
      std::string msg =
          "Failed to bind pod " + pod->Ref() + " to node " + br.selected_node + ": " + error;
      if (f.retry_after) msg += " (retry in " + std::to_string(f.retry_after->count()) + "s)";
      MarkPod(*pod, "False", "BindingError", msg, "Warning");
    }
    return true;
  }

  bool DeleteInvalid(const BindRequestObject& br, const std::string& why) {
    Log(why + "; deleting it, the scheduler writes a valid one");
    const std::string path = k8s::ObjectPath(res::kBindRequest, br.meta.ns, br.meta.name);
    k8s::HttpResponse r = client_.Delete(path);
    if (!r.ok() && r.status != 404) {
      Log(k8s::Describe({"DELETE", path}, r));
      return false;
    }
    ++counters_.invalid_deleted;
    return true;
  }

  // The PodBound condition (written when it changes) and an event.
  void MarkPod(const PodView& pod, const std::string& status, const std::string& reason,
               const std::string& message, const std::string& event_type) {
    const UnixSeconds now = WallClockSeconds();
    if (pod.bound_status != status || pod.bound_reason != reason || pod.bound_message != message) {
      const std::string path = k8s::ObjectPath(res::kPod, pod.ns, pod.name, "status");
      const std::string body = k8s::PodConditionPatch("PodBound", status, reason, message, now);
      background_.Put("pod/" + pod.uid, [this, path, body] {
        return client_.Patch(path, body, k8s::PatchType::kStrategicMerge).ok();
      });
    }
    k8s::EventSpec e{"v1",       "Pod",  pod.ns,  pod.name, pod.uid,
                     event_type, reason, message, {},       "kai-binder"};
    const std::string body = k8s::EventBody(e, now, ++event_seq_);
    const std::string path = k8s::CollectionPath(res::kEvent, pod.ns);
    background_.Put("", [this, path, body] { return client_.Create(path, body).ok(); });
  }

  std::vector<prometheus::MetricFamily> Metrics() const {
    BinderMetricValues v;
    v.succeeded = counters_.succeeded;
    v.failed = counters_.failed;
    v.retried = counters_.retried;
    v.parked = counters_.parked;
    v.groups_awaited = static_cast<int64_t>(ParkedGroups());
    v.already_bound = counters_.already_bound;
    v.invalid_deleted = counters_.invalid_deleted;
    v.depth = static_cast<int64_t>(queue_.Len());
    v.delayed = static_cast<int64_t>(queue_.Waiting());
    if (reservations_) v.reservations = reservations_->stats();
    v.writes = background_.stats();
    if (informer_) v.watch = informer_->stats();
    return BinderMetricFamilies(v);
  }

  const BinderOptions& o_;
  runtime::Manager& m_;
  const k8s::ApiClient& client_;  // the manager's, fenced by the lease
  serve::MetricsRegistry& registry_ = m_.registry();
  serve::ReconcileMetrics reconciles_{registry_, kControllerName, o_.max_concurrent};
  prometheus::Histogram& bind_duration_ = prometheus::BuildHistogram()
                                              .Name("kai_binder_bind_duration_seconds")
                                              .Help("A successful bind (kai).")
                                              .Register(registry_.registry())
                                              .Add({}, serve::ExponentialBuckets(0.005, 2, 12));
  runtime::WorkQueue queue_;
  std::unique_ptr<informer::Informer> informer_;
  std::unique_ptr<ReservationService> reservations_;
  std::unique_ptr<Binder> binder_;
  ClusterState world_;  // the informer's store (Apply's thread only)
  mutable std::mutex mu_;
  std::unordered_map<std::string, BindRequestObject> requests_;  // not Succeeded
  std::unordered_set<std::string> succeeded_;  // bound by this process, status not yet echoed
  std::unordered_map<std::string, std::vector<std::string>> fraction_groups_;
  std::unordered_map<std::string, std::vector<std::string>> active_by_key_;
  std::unordered_map<std::string, int> active_groups_;
  GroupIndex groups_index_;
  // GPU group -> requests whose bind waits for its reservation pod's GPU id.
  ParkedRequests parked_;
  std::unordered_set<std::string> nodes_;  // names of the nodes the node watch sees
  std::atomic<int> in_flight_{0};
  std::atomic<uint64_t> event_seq_{0};
  Counters counters_;
  bool paused_ = false, deferral_spent_ = false;
  std::chrono::steady_clock::time_point paused_since_{}, last_resync_{};
  std::vector<std::thread> workers_;
  runtime::BackgroundWriter background_;  // after what its writes use; stops first
};

}  // namespace

std::vector<prometheus::MetricFamily> BinderMetricFamilies(const BinderMetricValues& v) {
  const auto n = [](int64_t x) { return static_cast<double>(x); };
  const ReservationStats& rs = v.reservations;
  const runtime::WriteStats& bg = v.writes;
  const informer::InformerStats& st = v.watch;
  return {
      serve::CounterFamily(
          "kai_binder_binds_total", "Binds, by result.",
          {{{{"result", "succeeded"}}, n(v.succeeded)}, {{{"result", "failed"}}, n(v.failed)}}),
      serve::CounterOf("kai_binder_bind_retries_scheduled_total", "Binds retried later.",
                       n(v.retried)),
      serve::CounterOf("kai_binder_binds_parked_total", "Binds waiting for a GPU group.",
                       n(v.parked)),
      serve::GaugeOf("kai_binder_gpu_groups_awaited", "GPU groups binds wait for.",
                     n(v.groups_awaited)),
      serve::CounterOf("kai_binder_pods_found_bound_total", "Pods found bound already.",
                       n(v.already_bound)),
      serve::CounterOf("kai_binder_invalid_requests_deleted_total", "Invalid BindRequests deleted.",
                       n(v.invalid_deleted)),
      serve::GaugeOf("kai_binder_queue_depth", "Requests ready to bind.", n(v.depth)),
      serve::GaugeOf("kai_binder_queue_delayed", "Requests waiting for a retry.", n(v.delayed)),
      serve::CounterOf("kai_binder_reservation_pods_created_total", "GPU reservation pods created.",
                       n(rs.created)),
      serve::CounterOf("kai_binder_reservation_pods_deleted_total", "GPU reservation pods deleted.",
                       n(rs.deleted)),
      serve::CounterOf("kai_binder_reservation_timeouts_total", "GPU reservations that timed out.",
                       n(rs.timeouts)),
      serve::CounterOf("kai_binder_unreserved_pods_deleted_total",
                       "Pods of a GPU group with no reservation deleted.", n(rs.orphans_deleted)),
      serve::CounterOf("kai_binder_background_writes_sent_total", "Status writes and events sent.",
                       n(bg.sent)),
      serve::CounterOf("kai_binder_background_writes_dropped_total",
                       "Status writes and events dropped.", n(bg.dropped)),
      serve::CounterOf("kai_binder_background_writes_failed_total",
                       "Status writes and events failed.", n(bg.failed)),
      serve::CounterOf("kai_binder_informer_watch_errors_total", "Watches that failed.",
                       n(st.watch_errors)),
      serve::CounterOf("kai_binder_informer_relists_gone_total", "Lists after a watch expired.",
                       n(st.relists_gone)),
  };
}

runtime::ManagerOptions BinderManagerOptions(const BinderOptions& o) {
  return runtime::ManagerOptionsOf("binder", o);
}

int RunBinder(const BinderOptions& options, const k8s::ApiClient& client, std::ostream& err,
              const std::atomic<bool>* also_stop) {
  return runtime::RunComponent(
      client, BinderManagerOptions(options), err,
      [&](runtime::Manager& m) { return std::make_unique<Controller>(options, m); }, also_stop);
}

int RunBinder(const BinderOptions& options, std::ostream& err) {
  return runtime::RunComponent(
      runtime::ClientOptionsOf(options), BinderManagerOptions(options), err,
      [&](runtime::Manager& m) { return std::make_unique<Controller>(options, m); });
}

}  // namespace kai::binder
