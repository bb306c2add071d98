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

#include "kai/core/util/result.h"
#include "kai/kube/serve/metrics.h"

namespace kai::runtime {

struct ServerHooks {
  std::function<bool()> ready;
  const serve::MetricsRegistry* metrics = nullptr;  // null: no /metrics route
  std::function<std::string()> snapshot;            // null: no /debug/snapshot
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

}  // namespace kai::runtime
