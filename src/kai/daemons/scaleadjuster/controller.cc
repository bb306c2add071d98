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
#include "kai/kube/informer/informer.h"
#include "kai/kube/runtime/manager.h"
#include "kai/kube/serve/controller_metrics.h"
#include "kai/kube/serve/metrics.h"

namespace kai::scaleadjusterd {
namespace {

namespace res = k8s::resources;
using scaleadjuster::AdjustPlan;
using scaleadjuster::PodFacts;
using Clock = std::chrono::steady_clock;

struct Counters {
  std::atomic<int64_t> passes{0}, created{0}, deleted{0}, failures{0};
};

class Controller final : public runtime::Component {
 public:
  Controller(const ScaleAdjusterOptions& o, runtime::Manager& m)
      : o_(o), c_(o.adjuster), m_(m), client_(m.client()) {
    registry_.AddSource([this] { return Metrics(); });
  }

  Status Start() override {
    StartInformers();
    return Ok();
  }

  Status Sync(std::chrono::milliseconds timeout) override {
    for (auto& inf : informers_) {
      if (!inf->WaitForFirstLists(timeout)) {
        return Error{
            "the pod watches did not sync within the time-out (is the API server reachable?)"};
      }
    }
    return Ok();
  }

  bool Synced() const override {
    return std::all_of(informers_.begin(), informers_.end(),
                       [](const auto& inf) { return inf->Synced(); });
  }

  void Standby() override { ApplyDeltas(); }

  int Run() override {
    Log("started: scaling pods in " + c_.ns + " for the fractional pods of " + c_.scheduler_name);
    Clock::time_point next_pass = Clock::now();
    bool dirty = true;
    while (!m_.Stopping()) {
      informers_[0]->WaitForDeltas(std::chrono::milliseconds(100));
      if (ApplyDeltas() > 0) dirty = true;
      const Clock::time_point now = Clock::now();
      if (now < next_pass && !(dirty && now - last_pass_ >= o_.debounce)) continue;
      dirty = false;
      last_pass_ = now;
      next_pass = now + MeasuredPass();
    }
    return 0;
  }

  // A pass writes on the Run thread, so nothing writes once Run returned.
  void Stop(bool) override {
    for (auto& inf : informers_) inf->Stop();
  }

 private:
  void Log(const std::string& line) { m_.Log(line); }

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

  // Two watches only to wake the passes (a pass reads the pods itself, with their conditions):
  // the scheduler's unbound pods (a pod leaves it when bound) and the scaling pods.
  void StartInformers() {
    informer::InformerOptions io;
    io.hub = o_.watch_hub;
    io.log = m_.Logger();
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

  const ScaleAdjusterOptions& o_;
  const scaleadjuster::AdjusterConfig& c_;
  runtime::Manager& m_;
  const k8s::ApiClient& client_;  // the manager's, fenced by the lease
  Counters n_;
  std::vector<std::unique_ptr<informer::Informer>> informers_;
  std::vector<ClusterState> worlds_;  // what the watches hold (their bookkeeping only)
  serve::MetricsRegistry& registry_ = m_.registry();
  serve::ReconcileMetrics passes_{registry_, "scaleadjuster", 1};
  std::optional<UnixSeconds> last_delete_;  // starts the cool-down (KAI: lastScaleUpTime)
  std::set<std::string> last_notes_;
  Clock::time_point last_pass_{};
};

}  // namespace

int RunScaleAdjuster(const ScaleAdjusterOptions& options, const k8s::ApiClient& client,
                     std::ostream& err, const std::atomic<bool>* also_stop) {
  return runtime::RunComponent(
      client, runtime::ManagerOptionsOf("scale-adjuster", options), err,
      [&](runtime::Manager& m) { return std::make_unique<Controller>(options, m); }, also_stop);
}

int RunScaleAdjuster(const ScaleAdjusterOptions& options, std::ostream& err) {
  return runtime::RunComponent(
      runtime::ClientOptionsOf(options), runtime::ManagerOptionsOf("scale-adjuster", options), err,
      [&](runtime::Manager& m) { return std::make_unique<Controller>(options, m); });
}

}  // namespace kai::scaleadjusterd
