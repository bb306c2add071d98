#pragma once
// The components' HTTP endpoints (serve/http_server.h, bounded as every kai server): /metrics in
// Prometheus text format with KAI's metric names (docs/metrics of KAI, kai-semantics §8.2),
// /healthz, /readyz (ready once the caches synced) and, on an address of its own (loopback by
// default), the scheduler's /debug/snapshot (the cache's objects as multi-document YAML that
// `kai simulate -f` reads, so a live cycle can be replayed offline).
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "kai/scheduler/commit.h"
#include "kai/sim/simulator.h"
#include "kai/util/result.h"

namespace kai::scheduler {

class SchedulerMetrics {
 public:
  void ObserveCycle(std::chrono::steady_clock::duration d);
  void ObserveActions(const std::vector<std::pair<std::string, double>>& millis);
  void ObserveCommit(const Decisions& d, const CommitResult& r);
  void ObserveQueues(const Snapshot& snap);
  // Drops evicted-pods series of PodGroups that no longer exist (bounded memory).
  void KeepPodGroups(const std::vector<PodGroupObject>& pod_groups);
  // The fields of the SchedulingShard kai did not apply (framework/config.h ApplyShard).
  void ObserveShardSettings(const std::vector<std::string>& not_applied_fields);
  std::string Render() const;

 private:
  mutable std::mutex mu_;
  double e2e_ms_ = 0;
  int64_t cycles_ = 0, binds_ = 0, evictions_ = 0, write_failures_ = 0;
  std::map<std::string, double> action_ms_;
  std::vector<std::string> shard_not_applied_;
  // podgroup, namespace, uid, nodepool, action -> count
  std::map<std::array<std::string, 5>, int64_t> evicted_pods_;
  struct QueueLine {
    double fair_gpu = 0, fair_cpu = 0, fair_mem_gb = 0, use_gpu = 0, use_cpu = 0, use_mem_gb = 0;
  };
  std::map<std::string, QueueLine> queues_;
  std::string node_pool_ = "default";
};

struct ServerHooks {
  std::function<bool()> ready;
  std::function<std::string()> metrics;
  std::function<std::string()> snapshot;  // null: no /debug/snapshot
};

class Servers {
 public:
  explicit Servers(ServerHooks hooks);
  ~Servers();
  // Starts the endpoints ("" = that server off; addresses may be shared). Every address is
  // tried; the error names each one that could not be bound.
  Status Listen(const std::string& metrics_address, const std::string& health_address,
                const std::string& snapshot_address = "");
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The world as multi-document YAML (k8s/encode.h), for /debug/snapshot.
std::string DumpWorld(const ClusterState& world);

}  // namespace kai::scheduler
