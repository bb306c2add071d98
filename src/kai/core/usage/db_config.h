#pragma once
// The SchedulingShard's spec.usageDBConfig (kai-semantics.md §1.6, §3.8) with KAI's defaults, and
// the Prometheus queries it implies. kai's embedded store (--usage-dir) reads only usageParams;
// clientType prometheus reads the history from Prometheus, as KAI does.
#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/k8s/doc.h"
#include "kai/core/usage/usage_store.h"
#include "kai/core/util/result.h"

namespace kai::usage {

struct UsageDbConfig {
  std::string client_type, connection_string, connection_string_env_var;
  UsageParams params;              // halfLifePeriod (<= 0: no decay), windowSize
  std::string window_text = "1w";  // windowSize as written: the PromQL range
  int64_t fetch_interval_seconds = 60;
  int64_t staleness_seconds = 300;      // never below the fetch interval (KAI raises it)
  int64_t wait_timeout_millis = 60000;  // how long the start waits for the first answer
  int64_t query_timeout_millis = 10000;
  int64_t query_resolution_seconds = 60;
  // Per resource, cpu, memory, gpu (extraParams {cpu,memory,gpu}{Allocation,Capacity}Metric).
  std::array<std::string, 3> allocation_metrics = {"kai_queue_allocated_cpu_cores",
                                                   "kai_queue_allocated_memory_bytes",
                                                   "kai_queue_allocated_gpus"};
  std::array<std::string, 3> capacity_metrics = {
      "sum(kube_node_status_capacity{resource=\"cpu\"})",
      "sum(kube_node_status_capacity{resource=\"memory\"})",
      "sum(kube_node_status_capacity{resource=\"nvidia_com_gpu\"})"};
};

// Decodes `spec.usageDBConfig` of a shard's spec; none when absent. Errors name the field
// (`source`: the shard). Tumbling and cron windows are refused (kai keeps a sliding window).
Result<std::optional<UsageDbConfig>> ParseUsageDbConfig(const doc::Node& spec,
                                                        const std::string& source);

// A Prometheus duration ("1w", "7d", "1h30m", "90s", "500ms"; units y w d h m s ms, each at most
// once, largest first), in seconds (milliseconds truncated).
std::optional<int64_t> ParsePrometheusDuration(std::string_view text);

// The instant query KAI sends for one metric on a sliding window at `now`:
//   sum_over_time(((m) * (0.5^((now - time()) / h)))[window:resolution])   (no decay factor
// without a half-life).
std::string SlidingWindowQuery(const UsageDbConfig& c, const std::string& metric, UnixSeconds now);

struct Sample {
  std::string queue;  // the series' queue_name label ("" for an aggregate)
  double value = 0;
};

// The samples of a Prometheus /api/v1/query answer of result type vector; errors for a failed
// query (naming Prometheus's error) or another result type.
Result<std::vector<Sample>> ParseVectorAnswer(std::string_view body);

}  // namespace kai::usage
