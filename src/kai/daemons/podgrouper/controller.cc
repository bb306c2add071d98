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
#include "kai/kube/client/kubeconfig.h"
#include "kai/kube/informer/informer.h"
#include "kai/kube/runtime/server.h"
#include "kai/kube/runtime/workqueue.h"
#include "kai/kube/serve/controller_metrics.h"
#include "kai/kube/serve/metrics.h"

namespace kai::podgrouperd {
namespace {

namespace res = k8s::resources;
using podgrouper::ApplyPlan;
std::atomic<bool> g_stop{false};

// What one pod's reconcile ended with: done, or to be tried again (the rate limiter's delay).
enum class Outcome { kDone, kRetry };

struct Counters {
  std::atomic<int64_t> grouped{0}, created{0}, updated{0}, failed{0};
};

class Controller {
 public:
  Controller(const PodGrouperOptions& o, const k8s::ApiClient& client, std::ostream& err)
      : o_(o),
        lead_(client, o.leader_elect, WithLog(o.leader)),
        client_(lead_.client()),
        err_(err),
        reader_(client_) {
    queue_.SetMetrics(std::make_shared<serve::WorkQueueMetrics>(registry_, "pod"));
  }

  int Run() {
    StartInformer();
    if (!informer_->WaitForFirstLists(o_.sync_timeout)) {
      Log("the pod watch did not sync within the time-out (is the API server reachable?)");
      informer_->Stop();
      return 1;
    }
    StartServers();
    if (!AwaitLeadership()) return lead_.Lost() ? Lose() : Shutdown(0);
    for (int i = 0; i < std::max(1, o_.max_concurrent); ++i) {
      workers_.emplace_back([this] { Work(); });
    }
    Log("started: " + std::to_string(workers_.size()) + " workers, pods of scheduler " +
        o_.grouper.scheduler_name);
    while (!g_stop) {
      ClusterChanges changes;
      informer_->WaitForDeltas(std::chrono::milliseconds(100));
      informer_->Apply(world_, changes);
      if (lead_.Lost()) return Lose();
    }
    return Shutdown(0);
  }

 private:
  void Log(const std::string& line) {
    std::lock_guard<std::mutex> lock(log_mu_);
    err_ << "kai podgrouper: " << line << "\n";
  }

  scheduler::LeaderOptions WithLog(scheduler::LeaderOptions lo) {
    lo.log = [this](const std::string& l) { Log(l); };
    return lo;
  }

  // The queued pods are dropped unwritten (the fence refuses their writes anyway).
  int Lose() {
    Log(scheduler::kLeadershipLostMessage);
    return Shutdown(scheduler::kLeadershipLostExit);
  }

  int Shutdown(int rc) {
    workers_stop_ = true;
    queue_.ShutDown();
    for (auto& t : workers_) t.join();
    workers_.clear();
    if (servers_) servers_->Stop();
    lead_.Release();  // after the writers stopped (a lost lease only stops the elector)
    informer_->Stop();
    return rc;
  }

  void StartServers() {
    if (o_.metrics_address.empty() && o_.health_address.empty()) return;
    scheduler::ServerHooks hooks;
    hooks.ready = [this] { return informer_->Synced() && lead_.Leading(); };
    registry_.AddSource([this] { return Metrics(); });
    hooks.metrics = &registry_;
    servers_ = std::make_unique<scheduler::Servers>(hooks);
    if (Status st = servers_->Listen(o_.metrics_address, o_.health_address); !st.ok()) {
      Log(st.error().message);
    }
  }

  // A standby keeps applying its watch (so that it takes over warm) until it leads or stops.
  bool AwaitLeadership() {
    lead_.Start();
    while (!g_stop && !lead_.Lost() && !lead_.Leading()) {
      ClusterChanges changes;
      informer_->WaitForDeltas(std::chrono::milliseconds(100));
      informer_->Apply(world_, changes);
    }
    return !g_stop && lead_.Leading();
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
                           lead_.Leading() ? 1 : 0)};
  }

  void StartInformer() {
    informer::InformerOptions io;
    io.hub = o_.watch_hub;
    io.log = [this](const std::string& l) { Log(l); };
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
    binder::RunWorker(
        queue_, [this](const std::string& key) { return Reconcile(key) == Outcome::kDone; },
        [this] { return g_stop || workers_stop_; },
        [this](const std::string&) { return &reconciles_; });
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
  scheduler::Leadership lead_;  // before client_: the pod grouper writes through its fence
  const k8s::ApiClient& client_;
  std::ostream& err_;
  ApiReader reader_;
  std::mutex log_mu_, mu_;
  // Before what reports to it, after the servers that read it.
  serve::MetricsRegistry registry_;
  serve::ReconcileMetrics reconciles_{registry_, "pod", std::max(1, o_.max_concurrent)};
  binder::WorkQueue queue_;
  std::unordered_set<std::string> grouped_;  // pods grouped and annotated (live pods only)
  std::unordered_map<std::string, std::string> warned_;  // pod -> its last PodGrouperWarning
  std::atomic<uint64_t> event_seq_{0};
  std::unique_ptr<informer::Informer> informer_;
  ClusterState world_;  // what Apply fills (the pods, kept for the watch's bookkeeping)
  std::vector<std::thread> workers_;
  std::unique_ptr<scheduler::Servers> servers_;
  std::atomic<bool> workers_stop_{false};
  Counters counters_;
};

}  // namespace

void RequestPodGrouperStop() { g_stop = true; }

int RunPodGrouper(const PodGrouperOptions& options, std::ostream& err) {
  auto config = k8s::ResolveConfig(options.kubeconfig, options.context, k8s::ProcessEnv());
  if (!config.ok()) {
    err << "kai podgrouper: error: " << config.error().message << "\n";
    return 2;
  }
  config->qps = options.qps;
  config->burst = options.burst;
  const k8s::ApiClient client(*config);
  return RunPodGrouper(options, client, err);
}

int RunPodGrouper(const PodGrouperOptions& options, const k8s::ApiClient& client,
                  std::ostream& err) {
  g_stop = false;
  Controller c(options, client, err);
  return c.Run();
}

}  // namespace kai::podgrouperd
