#pragma once
// Test helper (header only, for *_test.cc): runs one allocate cycle of `kai simulate`'s engine on
// a YAML world.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "kai/core/framework/config.h"
#include "kai/core/k8s/decode.h"
#include "kai/core/sim/simulator.h"

namespace kai::testutil {

inline constexpr UnixSeconds kTestNow = 1735732800;  // 2025-01-01T12:00:00Z

// Queue "q" with no quota or limit on any resource.
inline constexpr const char* kUnlimitedQueue = R"(apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q}
spec:
  resources:
    gpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    memory: {quota: -1, limit: -1, overQuotaWeight: 1}
---
)";

// Topology "dc": levels zone, then rack (alias "r").
inline constexpr const char* kZoneRackTopology = R"(apiVersion: kai.scheduler/v1alpha1
kind: Topology
metadata: {name: dc}
spec:
  levels:
  - {nodeLabel: zone}
  - {nodeLabel: rack, alias: r}
---
)";

inline sim::CycleReport AllocateOnce(const std::string& yaml) {
  ClusterState state;
  const Status decoded = DecodeManifestText(yaml, "world.yaml", state);
  EXPECT_TRUE(decoded.ok()) << (decoded.ok() ? "" : decoded.error().message);
  auto config = WithActions(ConfigFromShard(std::nullopt).value(), {"allocate"}).value();
  return sim::RunCycle(state, config, sim::SimulateOptions{.now = kTestNow}, 1).value();
}

}  // namespace kai::testutil
