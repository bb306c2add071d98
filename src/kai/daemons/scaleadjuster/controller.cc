#include "kai/daemons/scaleadjuster/controller.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "kai/core/k8s/json_body.h"
#include "kai/core/k8s/keys.h"
#include "kai/kube/client/kubeconfig.h"
#include "kai/kube/informer/informer.h"
#include "kai/kube/runtime/leader.h"
#include "kai/kube/runtime/server.h"
#include "kai/kube/serve/controller_metrics.h"
#include "kai/kube/serve/metrics.h"

namespace kai::scaleadjusterd {
namespace {

namespace res = k8s::resources;
using scaleadjuster::AdjustPlan;
using scaleadjuster::PodFacts;
using Clock = std::chrono::steady_clock;
std::atomic<bool> g_stop{false};

struct Counters {
  std::atomic<int64_t> passes{0}, created{0}, deleted{0}, failures{0};
};

class Controller {
 public:
  Controller(const ScaleAdjusterOptions& o, const k8s::ApiClient& client, std::ostream& err)
      : o_(o),
        c_(o.adjuster),
        lead_(client, o.leader_elect,
              scheduler::LeaderOptionsOf(o, [this](const std::string& l) { Log(l); })),
        client_(lead_.client()),
        err_(err) {}

  int Run() {
    StartServers();
    if (!AwaitLeadership()) return Shutdown(lead_.Lost() ? Lose() : 0);
    StartInformers();
    for (auto& inf : informers_) {
      if (!inf->WaitForFirstLists(o_.sync_timeout)) {
        Log("the pod watches did not sync within the time-out (is the API server reachable?)");
        return Shutdown(1);
      }
    }
    synced_ = true;
    Log("started: scaling pods in " + c_.ns + " for the fractional pods of " + c_.scheduler_name);
    return Shutdown(Loop());
  }

 private:
  void Log(const std::string& line) {
    std::lock_guard<std::mutex> lock(log_mu_);
    err_ << "kai scale-adjuster: " << line << "\n" << std::flush;
  }

  void StartServers() {
    if (o_.metrics_address.empty() && o_.health_address.empty()) return;
    scheduler::ServerHooks hooks;
    hooks.ready = [this] { return synced_.load(); };
    registry_.AddSource([this] { return Metrics(); });
    hooks.metrics = &registry_;
    servers_ = std::make_unique<scheduler::Servers>(hooks);
    if (Status st = servers_->Listen(o_.metrics_address, o_.health_address); !st.ok()) {
      Log(st.error().message);
    }
  }

  std::vector<prometheus::MetricFamily> Metrics() const {
    const auto n = [](int64_t v) { return static_cast<double>(v); };
    return {serve::CounterOf("kai_scale_adjuster_passes_total", "Reconcile passes.", n(n_.passes)),
            serve::CounterOf("kai_scale_adjuster_scaling_pods_created_total",
                             "Scaling pods created.", n(n_.created)),
            serve::CounterOf("kai_scale_adjuster_scaling_pods_deleted_total",
                             "Scaling pods deleted.", n(n_.deleted)),
            serve::CounterOf("kai_scale_adjuster_failures_total", "Failed API calls and passes.",
                             n(n_.failures))};
  }

  bool AwaitLeadership() {
    lead_.Start();
    return lead_.WaitForLeadership(g_stop) && !g_stop;
  }

  int Lose() {
    Log(scheduler::kLeadershipLostMessage);
    return scheduler::kLeadershipLostExit;
  }

  // Two watches only to wake the passes (a pass reads the pods itself, with their conditions):
  // the scheduler's unbound pods (a pod leaves it when bound) and the scaling pods.
  void StartInformers() {
    informer::InformerOptions io;
    io.hub = o_.watch_hub;
    io.log = [this](const std::string& l) { Log(l); };
    const std::string scaling = "fieldSelector=" + k8s::UrlEscape("metadata.namespace=" + c_.ns) +
                                "&" + ScalingLabelQuery();
    informers_.push_back(std::make_unique<informer::Informer>(
        client_, std::vector<informer::WatchSpec>{{res::kPod, FractionalQuery()}}, io));
    informers_.push_back(std::make_unique<informer::Informer>(
        client_, std::vector<informer::WatchSpec>{{res::kPod, scaling}}, io));
    worlds_.resize(informers_.size());
    for (auto& inf : informers_) inf->Start();
  }

  size_t ApplyDeltas() {
    size_t n = 0;
    for (size_t i = 0; i < informers_.size(); ++i) {
      ClusterChanges changes;
      n += informers_[i]->Apply(worlds_[i], changes);
    }
    return n;
  }

  int Loop() {
    Clock::time_point next_pass = Clock::now();
    bool dirty = true;
    while (!g_stop) {
      informers_[0]->WaitForDeltas(std::chrono::milliseconds(100));
      if (ApplyDeltas() > 0) dirty = true;
      if (lead_.Lost()) return Lose();
      const Clock::time_point now = Clock::now();
      if (now < next_pass && !(dirty && now - last_pass_ >= o_.debounce)) continue;
      dirty = false;
      last_pass_ = now;
      next_pass = now + MeasuredPass();
    }
    return 0;
  }

  // A pass, reported as controller-runtime reports a reconcile (an error when a call failed).
  std::chrono::milliseconds MeasuredPass() {
    const int64_t failures = n_.failures;
    const Clock::time_point started = Clock::now();
    passes_.Active(1);
    const std::chrono::milliseconds next = Pass();
    passes_.Observe(Clock::now() - started, n_.failures > failures
                                                ? serve::ReconcileMetrics::Result::kError
                                                : serve::ReconcileMetrics::Result::kSuccess);
    passes_.Active(-1);
    return next;
  }

  // One level-triggered pass; returns the time until the next one is due anyway.
  std::chrono::milliseconds Pass() {
    ++n_.passes;
    auto pods = ListFacts(k8s::CollectionPath(res::kPod), FractionalQuery());
    auto scaling = ListFacts(k8s::CollectionPath(res::kPod, c_.ns), ScalingLabelQuery());
    if (!pods.ok() || !scaling.ok()) {
      ++n_.failures;
      Log(!pods.ok() ? pods.error().message : scaling.error().message);
      return std::chrono::seconds(2);
    }
    const UnixSeconds now = o_.now();
    const AdjustPlan plan = scaleadjuster::PlanAdjustment(c_, *pods, *scaling, now, last_delete_);
    LogChanged(plan.log);
    if (!Execute(plan, now)) return std::chrono::seconds(2);
    auto wait = o_.resync_period;
    if (plan.cool_down_ends) {
      const auto left = std::chrono::seconds(std::max<UnixSeconds>(*plan.cool_down_ends - now, 0));
      wait = std::min<std::chrono::milliseconds>(wait, left + std::chrono::milliseconds(100));
    }
    return wait;
  }

  std::string FractionalQuery() const {
    return "fieldSelector=" +
           k8s::UrlEscape("spec.schedulerName=" + c_.scheduler_name + ",spec.nodeName=");
  }
  std::string ScalingLabelQuery() const {
    return "labelSelector=" + k8s::UrlEscape(std::string(keys::kAppLabel) + "=" + c_.app_label);
  }

  // The pods of a list; one that cannot be read is logged (naming it and the field) and left out.
  Result<std::vector<PodFacts>> ListFacts(const std::string& path, const std::string& query) {
    std::vector<PodFacts> out;
    k8s::ApiClient::ListCallbacks cb;
    cb.page = [&](const doc::Node& items) {
      for (size_t i = 0; i < items.size(); ++i) {
        auto f = scaleadjuster::ReadPodFacts(items[i], "the API server");
        if (f.ok()) {
          out.push_back(std::move(*f));
        } else {
          Log(f.error().message);
        }
      }
    };
    cb.restart = [&] { out.clear(); };
    auto rv = client_.List(path, query, 500, cb);
    if (!rv.ok()) return Error{"list " + path + ": " + rv.error().message};
    return out;
  }

  // Deletes first (KAI: a failed delete stops the pass), then creations and status.
  bool Execute(const AdjustPlan& plan, UnixSeconds now) {
    for (const auto& d : plan.deletes) {
      if (!Delete(d, now)) return false;
    }
    bool ok = true;
    for (const auto& c : plan.creates) ok = Create(c, now) && ok;
    for (const auto& name : plan.status_patches) ok = PatchStatus(name, now) && ok;
    return ok;
  }

  bool Delete(const scaleadjuster::ScalingPodDelete& d, UnixSeconds now) {
    const std::string path = k8s::ObjectPath(res::kPod, c_.ns, d.name);
    k8s::HttpResponse r = client_.Delete(path);
    if (r.status == 404) return true;  // gone already (a stale list)
    if (!r.ok()) return Failed(k8s::Describe({"DELETE", path}, r));
    last_delete_ = now;
    ++n_.deleted;
    Log("deleted scaling pod " + c_.ns + "/" + d.name + ": " + d.why);
    return true;
  }

  bool Create(const scaleadjuster::ScalingPodCreate& c, UnixSeconds now) {
    const std::string path = k8s::CollectionPath(res::kPod, c_.ns);
    k8s::HttpResponse r = client_.Create(path, c.body);
    if (r.status == 409) return true;  // created meanwhile; the next pass reads it
    if (!r.ok()) return Failed(k8s::Describe({"POST", path + " (" + c.name + ")"}, r));
    ++n_.created;
    Log("created scaling pod " + c_.ns + "/" + c.name + " (" + std::to_string(c.devices) +
        " GPU) for " + c.for_pod);
    return PatchStatus(c.name, now);
  }

  // PodScheduled=False/Unschedulable at once, so an autoscaler acts on it before any scheduler
  // has looked at the pod (as KAI does).
  bool PatchStatus(const std::string& name, UnixSeconds now) {
    const std::string path = k8s::ObjectPath(res::kPod, c_.ns, name, "status");
    const std::string body = k8s::PodConditionPatch("PodScheduled", "False", "Unschedulable",
                                                    "a scaling pod for a GPU-fraction pod", now);
    k8s::HttpResponse r = client_.Patch(path, body, k8s::PatchType::kStrategicMerge);
    if (r.ok() || r.status == 404) return true;
    return Failed(k8s::Describe({"PATCH", path}, r));
  }

  bool Failed(const std::string& what) {
    ++n_.failures;
    Log(what);
    return false;
  }

  // The plan's notes repeat every pass; each is logged when it first appears.
  void LogChanged(const std::vector<std::string>& lines) {
    std::set<std::string> now(lines.begin(), lines.end());
    for (const auto& l : now) {
      if (!last_notes_.count(l)) Log(l);
    }
    last_notes_ = std::move(now);
  }

  // A pass writes on this thread, so nothing writes once the loop returned: the lease goes.
  int Shutdown(int rc) {
    for (auto& inf : informers_) inf->Stop();
    if (servers_) servers_->Stop();
    lead_.Release();
    return rc;
  }

  const ScaleAdjusterOptions& o_;
  const scaleadjuster::AdjusterConfig& c_;
  scheduler::Leadership lead_;  // before client_: the passes write through its fence
  const k8s::ApiClient& client_;
  std::ostream& err_;
  std::mutex log_mu_;
  Counters n_;
  std::atomic<bool> synced_{false};
  std::vector<std::unique_ptr<informer::Informer>> informers_;
  std::vector<ClusterState> worlds_;  // what the watches hold (their bookkeeping only)
  serve::MetricsRegistry registry_;
  serve::ReconcileMetrics passes_{registry_, "scaleadjuster", 1};
  std::unique_ptr<scheduler::Servers> servers_;
  std::optional<UnixSeconds> last_delete_;  // starts the cool-down (KAI: lastScaleUpTime)
  std::set<std::string> last_notes_;
  Clock::time_point last_pass_{};
};

}  // namespace

void RequestScaleAdjusterStop() { g_stop = true; }

int RunScaleAdjuster(const ScaleAdjusterOptions& options, const k8s::ApiClient& client,
                     std::ostream& err) {
  Controller c(options, client, err);
  return c.Run();
}

int RunScaleAdjuster(const ScaleAdjusterOptions& options, std::ostream& err) {
  g_stop = false;  // a process's run (tests run several); `kai run` uses the other entry
  auto config = k8s::ResolveConfig(options.kubeconfig, options.context, k8s::ProcessEnv());
  if (!config.ok()) {
    err << "kai scale-adjuster: error: " << config.error().message << "\n";
    return 2;
  }
  config->qps = options.qps;
  config->burst = options.burst;
  k8s::ApiClient client(*config);
  return RunScaleAdjuster(options, client, err);
}

}  // namespace kai::scaleadjusterd
