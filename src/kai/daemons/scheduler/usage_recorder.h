#pragma once
// Time-based fair share for `kai scheduler` (kai-semantics.md §3.8): the Loop's one object for
// usage. Each cycle it records what every queue holds (as KAI's kai_queue_allocated_* gauges
// count it: every queue, parents rolled up) and the cluster's capacity into a bounded history,
// kept on disk under --usage-dir, and gives the cycle's snapshot the usage of that history, or of
// Prometheus when one is configured. A failing source never stops scheduling: it is logged and
// the last good usage (or none) is used.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "kai/core/k8s/doc.h"
#include "kai/core/model/cluster.h"
#include "kai/core/snapshot/snapshot.h"
#include "kai/core/usage/db_config.h"
#include "kai/core/usage/history.h"
#include "kai/kube/serve/metrics.h"

namespace kai::usage {
class UsageDir;
}

namespace kai::scheduler {

struct UsageOptions {
  std::string usage_dir;       // "" = no file store (and no recording)
  std::string prometheus_url;  // "" = the shard's connection, if its clientType is prometheus
  std::chrono::milliseconds save_interval{60000};
  std::function<void(const std::string&)> log;
  std::function<std::optional<std::string>(const std::string&)> env;  // connectionStringEnvVar
  std::function<void(double)> on_fetch_millis;  // each usage database fetch's duration
};

class PrometheusUsage;  // usage_recorder.cc

class UsageRecorder {
 public:
  // Null when neither a usage dir, a Prometheus URL nor the shard's usageDBConfig asks for usage.
  // `spec`: the shard's spec (undefined without a shard). Errors: bad configuration, naming it.
  static Result<std::unique_ptr<UsageRecorder>> Open(const UsageOptions& o, const doc::Node& spec,
                                                     const std::string& shard_source,
                                                     UnixSeconds now);
  ~UsageRecorder();

  // Before the session: every queue's usage in the cycle's snapshot.
  void Apply(Snapshot& snap, UnixSeconds now);
  // After the session: what the queues hold now (and the capacity of `world`'s nodes).
  void Record(const Snapshot& snap, const ClusterState& world, UnixSeconds now);
  // A last save (on shutdown).
  void Close();
  // The recorder's counters (names prefixed with `ns`).
  std::vector<prometheus::MetricFamily> Metrics(const std::string& ns) const;

 private:
  UsageRecorder(const UsageOptions& o, std::optional<usage::UsageDbConfig> config);
  void Log(const std::string& line) const;
  void Save(bool force);

  UsageOptions o_;
  usage::UsageDbConfig config_;  // KAI's defaults when the shard has none
  std::unique_ptr<usage::UsageDir> dir_;
  std::unique_ptr<PrometheusUsage> prometheus_;
  mutable std::mutex mu_;  // guards the counters and history_ (read by /metrics)
  usage::UsageHistory history_;
  std::chrono::steady_clock::time_point last_save_{};
  bool dirty_ = false;
  int64_t corrupt_files_ = 0, saves_ = 0, save_errors_ = 0;
};

}  // namespace kai::scheduler
