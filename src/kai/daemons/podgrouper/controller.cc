#include "kai/daemons/podgrouper/controller.h"

#include <algorithm>
#include <atomic>
#include <ctime>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kai/core/k8s/json_body.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/podgrouper/podgroup.h"
#include "kai/core/podgrouper/podgrouper.h"
#include "kai/daemons/podgrouper/api_reader.h"
#include "kai/kube/informer/informer.h"
#include "kai/kube/runtime/manager.h"
#include "kai/kube/runtime/workqueue.h"
#include "kai/kube/serve/controller_metrics.h"
#include "kai/kube/serve/metrics.h"

namespace kai::podgrouperd {
namespace {

namespace res = k8s::resources;
using podgrouper::ApplyPlan;

// What one pod's reconcile ended with: done, or to be tried again (the rate limiter's delay).
enum class Outcome { kDone, kRetry };

struct Counters {
  std::atomic<int64_t> grouped{0}, created{0}, updated{0}, failed{0};
};

class Controller final : public runtime::Component {
 public:
  Controller(const PodGrouperOptions& o, runtime::Manager& m)
      : o_(o), m_(m), client_(m.client()), reader_(client_) {
    queue_.SetMetrics(std::make_shared<serve::WorkQueueMetrics>(registry_, "pod"));
    registry_.AddSource([this] { return Metrics(); });
  }

  Status Start() override {
    StartInformer();
    return Ok();
  }

  Status Sync(std::chrono::milliseconds timeout) override {
    if (informer_->WaitForFirstLists(timeout)) return Ok();
    return Error{"the pod watch did not sync within the time-out (is the API server reachable?)"};
  }

  bool Synced() const override { return informer_ && informer_->Synced(); }

  // A standby keeps applying its watch (the runtime paces it), so that it takes over warm.
  void Standby() override { ApplyDeltas(); }

  int Run() override {
    for (int i = 0; i < std::max(1, o_.max_concurrent); ++i) {
      workers_.emplace_back([this] { Work(); });
    }
    Log("started: " + std::to_string(workers_.size()) + " workers, pods of scheduler " +
        o_.grouper.scheduler_name);
    while (!m_.Stopping()) {
      informer_->WaitForDeltas(std::chrono::milliseconds(100));
      ApplyDeltas();
    }
    return 0;
  }

  // The queued pods are dropped unwritten after a lost lease (the fence refuses their writes).
  void Stop(bool) override {
    queue_.ShutDown();
    for (auto& t : workers_) t.join();
    workers_.clear();
    if (informer_) informer_->Stop();
  }

 private:
  void Log(const std::string& line) { m_.Log(line); }

  void ApplyDeltas() {
    ClusterChanges changes;
    informer_->Apply(world_, changes);
  }

  std::vector<prometheus::MetricFamily> Metrics() const {
    const auto n = [](const std::atomic<int64_t>& v) { return static_cast<double>(v.load()); };
    return {serve::CounterOf("kai_podgrouper_pods_grouped_total", "Pods given their PodGroup.",
                             n(counters_.grouped)),
            serve::CounterOf("kai_podgrouper_podgroups_created_total", "PodGroups created.",
                             n(counters_.created)),
            serve::CounterOf("kai_podgrouper_podgroups_updated_total", "PodGroups updated.",
                             n(counters_.updated)),
            serve::CounterOf("kai_podgrouper_reconcile_errors_total",
                             "Pod reconciles that failed and were retried.", n(counters_.failed)),
            serve::GaugeOf("kai_podgrouper_leader", "1 while this replica leads.",
                           m_.Leading() ? 1 : 0)};
  }

  void StartInformer() {
    informer::InformerOptions io;
    io.hub = o_.watch_hub;
    io.log = m_.Logger();
    io.on_delta = [this](size_t, const std::string& key, const ClusterState* obj) {
      OnPod(key, obj && !obj->pods.empty() ? &obj->pods[0] : nullptr);
    };
    const std::string query =
        "fieldSelector=" + k8s::UrlEscape("spec.schedulerName=" + o_.grouper.scheduler_name);
    informer_ = std::make_unique<informer::Informer>(
        client_, std::vector<informer::WatchSpec>{{res::kPod, query}}, io);
    informer_->Start();
  }

  // A pod seen grouped once is grouped again only when its PodGroup annotation goes (KAI
  // reconciles every event; the PodGroup changes only with the owner, which a new pod shows).
  void OnPod(const std::string& key, const PodObject* p) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!p || p->meta.deletion) {
      grouped_.erase(key);
      warned_.erase(key);
      return;
    }
    if (grouped_.count(key) && p->meta.annotations.count(std::string(keys::kPodGroupAnnotation))) {
      return;
    }
    queue_.Add(key);
  }

  void Work() {
    runtime::RunWorker(
        queue_, [this](const std::string& key) { return Reconcile(key) == Outcome::kDone; },
        [this] { return m_.Stopping(); }, [this](const std::string&) { return &reconciles_; });
  }

  Outcome Reconcile(const std::string& key) {
    const size_t slash = key.find('/');
    const podgrouper::ObjectKey pod_key{"v1", "Pod", key.substr(0, slash), key.substr(slash + 1)};
    podgrouper::Fetched pod = reader_.Get(pod_key);
    if (pod.status == podgrouper::FetchStatus::kNotFound) return Outcome::kDone;
    if (pod.status != podgrouper::FetchStatus::kFound) return Failed("pod " + key, pod.message);
    std::string why;
    const Outcome outcome = Group(pod.object, key, why);
    Warn(pod.object, key, why);
    return outcome;
  }

  // Gives the pod its PodGroup; `why` says what failed (a retry follows).
  Outcome Group(const podgrouper::Object& pod, const std::string& key, std::string& why) {
    auto decision = podgrouper::GroupPod(pod, reader_, o_.grouper);
    if (!decision.ok()) return Failed("pod " + key, why = decision.error().message);
    if (decision->skip) return Outcome::kDone;
    if (Apply(decision->metadata, why) == Outcome::kRetry) return Outcome::kRetry;
    if (auto a = podgrouper::PodAssignmentFor(pod, decision->metadata)) {
      if (!AssignPod(pod, *a, why)) return Outcome::kRetry;
    }
    ++counters_.grouped;
    std::lock_guard<std::mutex> lock(mu_);
    grouped_.insert(key);
    return Outcome::kDone;
  }

  // KAI's PodGrouperWarning: a Warning event on the pod naming what failed, written when the
  // failure is new for the pod (retries with the same error add none); a success forgets it.
  void Warn(const podgrouper::Object& pod, const std::string& key, const std::string& why) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (why.empty()) {
        warned_.erase(key);
        return;
      }
      auto [it, fresh] = warned_.try_emplace(key, why);
      if (!fresh && it->second == why) return;
      it->second = why;
    }
    const k8s::EventSpec spec{
        "v1", "Pod", pod.ns,       pod.name, pod.uid, "Warning", "PodGrouperWarning",
        why,  {},    "pod-grouper"};
    const std::string path = k8s::CollectionPath(res::kEvent, pod.ns);
    const k8s::HttpResponse r = client_.Create(
        path, k8s::EventBody(spec, static_cast<UnixSeconds>(std::time(nullptr)), ++event_seq_));
    if (!r.ok()) Log(k8s::Describe({"POST", path}, r));
  }

  // `subject`: what failed, "pod NS/NAME" or "PodGroup NS/NAME".
  Outcome Failed(const std::string& subject, const std::string& why) {
    Log(subject + ": " + why);
    ++counters_.failed;
    return Outcome::kRetry;
  }

  // Creates or updates the PodGroup; the existing one is read from etcd (its resourceVersion
  // guards the update).
  Outcome Apply(const podgrouper::PodGroupMetadata& md, std::string& why) {
    const std::string path = k8s::ObjectPath(res::kPodGroup, md.ns, md.name);
    k8s::HttpResponse r = client_.Get(path);
    std::optional<podgrouper::PodGroupManifest> existing;
    if (r.ok()) {
      auto pg = ReadPodGroup(r.body);
      if (!pg.ok()) return Failed("PodGroup " + md.ns + "/" + md.name, why = pg.error().message);
      existing = std::move(pg.value());
    } else if (r.status != 404) {
      return Failed("PodGroup " + md.ns + "/" + md.name, why = k8s::Describe({"GET", path}, r));
    }
    const ApplyPlan plan = podgrouper::PlanApply(existing, md, o_.grouper);
    if (plan.action == ApplyPlan::Action::kNone) return Outcome::kDone;
    const std::string body = podgrouper::EncodePodGroupJson(plan.object);
    k8s::HttpResponse w = plan.action == ApplyPlan::Action::kCreate
                              ? client_.Create(k8s::CollectionPath(res::kPodGroup, md.ns), body)
                              : client_.Update(path, body);
    if (w.ok()) {
      ++(plan.action == ApplyPlan::Action::kCreate ? counters_.created : counters_.updated);
      Log((plan.action == ApplyPlan::Action::kCreate ? "created PodGroup " : "updated PodGroup ") +
          md.ns + "/" + md.name);
      return Outcome::kDone;
    }
    // 409: created meanwhile, or changed since it was read: read it again.
    return Failed("PodGroup " + md.ns + "/" + md.name, why = k8s::Describe({"WRITE", path}, w));
  }

  static Result<podgrouper::PodGroupManifest> ReadPodGroup(const std::string& body) {
    auto obj = ParseObject(body, "the PodGroup read back");
    if (!obj.ok()) return obj.error();
    return podgrouper::DecodePodGroupManifest(*obj);
  }

  bool AssignPod(const podgrouper::Object& pod, const podgrouper::PodAssignment& a,
                 std::string& why) {
    k8s::MetaPatch patch;
    patch.annotations.push_back({std::string(keys::kPodGroupAnnotation), a.pod_group});
    if (!a.sub_group.empty())
      patch.labels.push_back({std::string(keys::kSubGroupLabel), a.sub_group});
    const std::string path = k8s::ObjectPath(res::kPod, pod.ns, pod.name);
    k8s::HttpResponse r =
        client_.Patch(path, k8s::MetadataMergePatch(patch), k8s::PatchType::kMerge);
    if (r.ok() || r.status == 404) return true;
    why = k8s::Describe({"PATCH", path}, r);
    Log(why);
    return false;
  }

  const PodGrouperOptions& o_;
  runtime::Manager& m_;
  const k8s::ApiClient& client_;  // the manager's, fenced by the lease
  ApiReader reader_;
  std::mutex mu_;
  serve::MetricsRegistry& registry_ = m_.registry();
  serve::ReconcileMetrics reconciles_{registry_, "pod", std::max(1, o_.max_concurrent)};
  runtime::WorkQueue queue_;
  std::unordered_set<std::string> grouped_;  // pods grouped and annotated (live pods only)
  std::unordered_map<std::string, std::string> warned_;  // pod -> its last PodGrouperWarning
  std::atomic<uint64_t> event_seq_{0};
  std::unique_ptr<informer::Informer> informer_;
  ClusterState world_;  // what Apply fills (the pods, kept for the watch's bookkeeping)
  std::vector<std::thread> workers_;
  Counters counters_;
};

}  // namespace

runtime::ManagerOptions PodGrouperManagerOptions(const PodGrouperOptions& o) {
  runtime::ManagerOptions m;
  m.name = "podgrouper";
  m.leader_elect = o.leader_elect;
  m.leader = o.leader;
  m.metrics_address = o.metrics_address;
  m.health_address = o.health_address;
  m.sync_timeout = o.sync_timeout;
  return m;
}

int RunPodGrouper(const PodGrouperOptions& options, std::ostream& err) {
  return runtime::RunComponent(
      runtime::ClientOptionsOf(options), PodGrouperManagerOptions(options), err,
      [&](runtime::Manager& m) { return std::make_unique<Controller>(options, m); });
}

int RunPodGrouper(const PodGrouperOptions& options, const k8s::ApiClient& client, std::ostream& err,
                  const std::atomic<bool>* also_stop) {
  return runtime::RunComponent(
      client, PodGrouperManagerOptions(options), err,
      [&](runtime::Manager& m) { return std::make_unique<Controller>(options, m); }, also_stop);
}

}  // namespace kai::podgrouperd
