#pragma once
// `kai scheduler`: the scheduling core on a live cluster. The informer keeps a ClusterState
// current; every period the loop applies the watches' changes, runs the shard's actions on the
// incremental snapshot, writes the decisions (commit.h) and waits for the server's answers.
#include <atomic>
#include <chrono>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>

#include "kai/core/model/cluster.h"
#include "kai/core/util/result.h"
#include "kai/core/util/time.h"
#include "kai/core/util/trace.h"
#include "kai/kube/client/api_client.h"

namespace kai::informer {
class WatchHub;
}

namespace kai::scheduler {

struct SchedulerOptions {
  std::string kubeconfig, context;
  double qps = 0;  // --qps and --burst: the API client's rate limit (qps 0: none)
  int burst = 300;
  std::string scheduler_name = "kai-scheduler";
  std::string shard;  // SchedulingShard name; "" = none (KAI's defaults, every node)
  std::string node_pool_key = "kai.scheduler/node-pool";
  // --partition-label-value: the node pool scheduled, over the shard's partitionLabelValue.
  std::string partition_label_value;
  // KAI's scheduler arguments given as flags (--full-hierarchy-fairness=false): the shard's
  // spec.args, which win over them (as the shard's schedulePeriod wins over --schedule-period).
  std::map<std::string, std::string> args;
  std::optional<std::chrono::milliseconds> period;  // --schedule-period (else the shard's, 1 s)
  bool once = false;
  bool dry_run = false;
  std::string output = "table";    // table | json | yaml (with --once / --dry-run)
  std::optional<UnixSeconds> now;  // a fixed clock (tests); else the wall clock each cycle
  int max_in_flight = 32;
  std::chrono::milliseconds status_write_deferral{10000};  // CommitOptions::background_deferral
  bool update_pod_eviction_condition = true;  // DisruptionTarget before a delete (KAI: off)
  std::chrono::milliseconds sync_timeout{60000};
  // How often an optional kind the cluster does not serve (DRA, NodeResourceTopology) is listed
  // again, so that installing it later needs no restart.
  std::chrono::milliseconds unserved_recheck{60000};
  // Leader election on a coordination.k8s.io/v1 Lease.
  bool leader_elect = false;
  std::string leader_elect_namespace = "kai-scheduler";
  std::string leader_elect_id = "kai-scheduler";
  std::string identity;  // holder identity; default hostname_pid
  std::chrono::milliseconds lease_duration{15000}, renew_deadline{10000}, retry_period{2000};
  std::string metrics_address;            // host:port for /metrics; "" = off
  std::string metrics_namespace = "kai";  // the metric names' prefix (KAI's default)
  std::string health_address;             // host:port for /healthz, /readyz; "" = off
  // host:port for /debug/snapshot (every object the scheduler sees, unauthenticated): loopback
  // by default; "" = off. Not served with --once or --dry-run.
  std::string snapshot_address = "127.0.0.1:8083";
  // Checks every cycle that the incremental snapshot equals a full build of the same world; a
  // difference is logged (naming the first differing fields) and the snapshot rebuilt.
  bool verify_snapshot_cache = false;
  // Time-based fair share: the recorded history's directory ("" = none), a Prometheus to read
  // the history from instead ("" = the shard's usageDBConfig, if it names one), and how often
  // the history is saved (and on shutdown).
  std::string usage_dir;
  std::string usage_prometheus_url;
  std::chrono::milliseconds usage_save_interval{60000};
  int max_cycles = 0;          // stop after this many cycles (0 = run until stopped; tests)
  TraceSink* trace = nullptr;  // the cycles' diagnostic trace (KAI_DEBUG); not owned, optional
  // kai run's shared watch cache; null: the component lists and watches on its own.
  informer::WatchHub* watch_hub = nullptr;
};

// Runs the scheduler on the component runtime (kube/runtime/manager.h); returns the process
// exit code (0, 1 for a runtime failure or a lost lease, 2 for bad configuration, naming it).
// `out` receives --once / --dry-run output, `err` the log.
int RunScheduler(const SchedulerOptions& options, std::ostream& out, std::ostream& err);
// The same on a client the caller shares (`kai run`; options.kubeconfig is not read), also
// stopping when `also_stop` is set.
int RunScheduler(const SchedulerOptions& options, const k8s::ApiClient& client, std::ostream& out,
                 std::ostream& err, const std::atomic<bool>* also_stop = nullptr);

// The shard's world as the scheduler sees it after its first lists (`kai queues --kubeconfig`):
// the same watches, read once. `options`: kubeconfig, context, shard, node_pool_key,
// scheduler_name, sync_timeout.
Result<ClusterState> ReadLiveWorld(const SchedulerOptions& options);

}  // namespace kai::scheduler
