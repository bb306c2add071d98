#include "kai/daemons/numaexporter/exporter.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kai/core/numaexporter/reconcile.h"
#include "kai/daemons/numaexporter/podresources_client.h"
#include "kai/daemons/numaexporter/sysfs.h"
#include "kai/kube/runtime/manager.h"
#include "kai/kube/serve/metrics.h"

namespace kai::numaexporterd {
namespace {

namespace res = k8s::resources;
using numaexporter::ObservedPod;
using numaexporter::PodAllocation;
using Clock = std::chrono::steady_clock;

struct Counters {
  std::atomic<int64_t> polls{0}, drift_passes{0}, written{0}, repaired{0}, failures{0};
};

class Exporter final : public runtime::Component {
 public:
  Exporter(const NumaExporterOptions& o, runtime::Manager& m)
      : o_(o),
        m_(m),
        client_(m.client()),
        resources_({o.podresources_socket, o.podresources_timeout}) {
    m_.registry().AddSource([this] { return Metrics(); });
  }

  Status Start() override {
    auto cpus = LoadCpuToNuma(o_.sysfs_root);
    if (!cpus.ok()) return Error{"loading the CPU topology: " + cpus.error().message};
    cpus_ = std::move(*cpus);
    Log("CPU topology: " + std::to_string(cpus_.size()) + " CPUs from " + o_.sysfs_root);
    return Ok();
  }
  // Nothing to sync: each pass reads what it needs.
  Status Sync(std::chrono::milliseconds) override { return Ok(); }
  bool Synced() const override { return true; }

  int Run() override {
    Log("started on node " + o_.node_name + ": pod resources from " + o_.podresources_socket);
    Poll();
    Due due{Clock::now() + o_.poll_interval, NextDrift()};
    while (!m_.Stopping()) {
      m_.Sleep(UntilDue(due));
      if (!m_.Stopping()) RunDue(due);
    }
    return 0;
  }

  // The passes write on the Run thread, so nothing writes once Run returned.
  void Stop(bool) override {}

 private:
  void Log(const std::string& line) { m_.Log(line); }

  // When each pass is due next; no drift time when --drift-resync-interval is 0.
  struct Due {
    Clock::time_point poll;
    std::optional<Clock::time_point> drift;
  };
  std::optional<Clock::time_point> NextDrift() const {
    if (o_.drift_resync_interval.count() <= 0) return std::nullopt;
    return Clock::now() + o_.drift_resync_interval;
  }
  static Clock::duration UntilDue(const Due& due) {
    const Clock::time_point next = due.drift ? std::min(due.poll, *due.drift) : due.poll;
    return std::max<Clock::duration>(next - Clock::now(), Clock::duration::zero());
  }
  void RunDue(Due& due) {
    if (Clock::now() >= due.poll) {
      Poll();
      due.poll = Clock::now() + o_.poll_interval;
    }
    if (due.drift && Clock::now() >= *due.drift) {
      Drift();
      due.drift = NextDrift();
    }
  }

  std::vector<prometheus::MetricFamily> Metrics() const {
    const auto n = [](int64_t v) { return static_cast<double>(v); };
    return {
        serve::CounterOf("kai_numa_exporter_poll_passes_total", "Pod-resources passes.",
                         n(n_.polls)),
        serve::CounterOf("kai_numa_exporter_drift_passes_total",
                         "Passes against the API server's pods.", n(n_.drift_passes)),
        serve::CounterOf("kai_numa_exporter_placements_written_total",
                         "Placement annotations written.", n(n_.written)),
        serve::CounterOf("kai_numa_exporter_drift_repaired_total",
                         "Placement annotations written again after they drifted.", n(n_.repaired)),
        serve::CounterOf("kai_numa_exporter_failures_total",
                         "Failed pod-resources calls and API calls.", n(n_.failures))};
  }

  // What the kubelet says now; nullopt when it did not answer. A failure is logged when it first
  // appears (not every poll while the kubelet is down), and so is the recovery.
  std::optional<std::vector<PodAllocation>> ListAllocations() {
    auto listed = resources_.List();
    if (listed.ok()) {
      if (!last_list_error_.empty()) Log("pod resources answer again on " + o_.podresources_socket);
      last_list_error_.clear();
      return std::move(*listed);
    }
    ++n_.failures;
    if (listed.error().message != last_list_error_) Log(listed.error().message);
    last_list_error_ = listed.error().message;
    return std::nullopt;
  }

  // The poll pass: pods whose placement changed since this process wrote it.
  void Poll() {
    ++n_.polls;
    auto listed = ListAllocations();
    if (!listed) return;
    const auto observed = numaexporter::ObservePods(*listed, cpus_);
    for (const ObservedPod& pod : numaexporter::PollPatches(observed, cache_)) {
      if (Write(pod)) ++n_.written;
    }
    numaexporter::PruneCache(cache_, *listed);
  }

  // The drift pass: pods of the node whose live annotation differs from the observed placement.
  void Drift() {
    ++n_.drift_passes;
    auto listed = ListAllocations();
    if (!listed) return;
    const auto observed = numaexporter::ObservePods(*listed, cpus_);
    if (observed.empty()) return;
    auto live = ListNodePods();
    if (!live.ok()) {
      Failed(live.error().message);
      return;
    }
    const numaexporter::DriftPlan plan = numaexporter::PlanDrift(observed, *live);
    for (const ObservedPod& pod : plan.in_sync) {
      cache_[numaexporter::PodKey(pod.ns, pod.name)] = pod.value;
    }
    for (const ObservedPod& pod : plan.patches) {
      if (!Write(pod)) continue;
      ++n_.repaired;
      Log("repaired the NUMA placement of " + pod.ns + "/" + pod.name);
    }
  }

  Result<std::vector<numaexporter::LivePod>> ListNodePods() {
    std::vector<numaexporter::LivePod> out;
    k8s::ApiClient::ListCallbacks cb;
    cb.page = [&](const doc::Node& items) {
      for (size_t i = 0; i < items.size(); ++i) {
        auto pod = numaexporter::ReadLivePod(items[i]);
        if (pod.ok()) out.push_back(std::move(*pod));
      }
    };
    cb.restart = [&] { out.clear(); };
    const std::string query = "fieldSelector=" + k8s::UrlEscape("spec.nodeName=" + o_.node_name);
    auto rv = client_.List(k8s::CollectionPath(res::kPod), query, 500, cb);
    if (!rv.ok()) return Error{"list the pods of node " + o_.node_name + ": " + rv.error().message};
    return out;
  }

  // Patches the pod's annotation; true when written (the cache then holds it). A pod the API
  // server does not have (yet, or any more) is skipped quietly: the next pass tries again.
  bool Write(const ObservedPod& pod) {
    const std::string path = k8s::ObjectPath(res::kPod, pod.ns, pod.name);
    k8s::HttpResponse r =
        client_.Patch(path, numaexporter::AnnotationPatch(pod.value), k8s::PatchType::kMerge);
    if (r.status == 404) return false;
    if (!r.ok()) return Failed(k8s::Describe({"PATCH", path}, r));
    cache_[numaexporter::PodKey(pod.ns, pod.name)] = pod.value;
    Log("NUMA placement of " + pod.ns + "/" + pod.name + ": " + pod.value);
    return true;
  }

  bool Failed(const std::string& what) {
    ++n_.failures;
    Log(what);
    return false;
  }

  const NumaExporterOptions& o_;
  runtime::Manager& m_;
  const k8s::ApiClient& client_;
  PodResourcesClient resources_;
  numaexporter::CpuToNuma cpus_;
  numaexporter::WriteCache cache_;  // the Run thread's only
  std::string last_list_error_;     // the pod-resources failure last logged ("" after a success)
  Counters n_;
};

runtime::ManagerOptions ManagerOptionsOf(const NumaExporterOptions& o) {
  runtime::ManagerOptions m;
  m.name = "numa-exporter";
  m.metrics_address = o.metrics_address;
  m.health_address = o.health_address;
  return m;
}

}  // namespace

int RunNumaExporter(const NumaExporterOptions& options, const k8s::ApiClient& client,
                    std::ostream& err, const std::atomic<bool>* also_stop) {
  return runtime::RunComponent(
      client, ManagerOptionsOf(options), err,
      [&](runtime::Manager& m) { return std::make_unique<Exporter>(options, m); }, also_stop);
}

int RunNumaExporter(const NumaExporterOptions& options, std::ostream& err) {
  return runtime::RunComponent(
      {options.kubeconfig, options.context, options.qps, options.burst}, ManagerOptionsOf(options),
      err, [&](runtime::Manager& m) { return std::make_unique<Exporter>(options, m); });
}

}  // namespace kai::numaexporterd
