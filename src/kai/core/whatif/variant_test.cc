// Variants: an identical variant changes nothing; more GPUs never make a queue that stays within
// its quota wait longer (p95), over several seeded traces.
#include "kai/core/whatif/variant.h"

#include <gtest/gtest.h>

#include "kai/core/framework/config.h"
#include "kai/core/k8s/decode.h"
#include "kai/core/util/time.h"
#include "kai/core/whatif/engine.h"
#include "kai/core/whatif/metrics.h"

namespace kai::whatif {
namespace {

std::string QueueYaml(const std::string& name, int quota) {
  return "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: " + name +
         "}\nspec:\n  resources:\n    gpu: {quota: " + std::to_string(quota) +
         ", limit: -1, overQuotaWeight: 1}\n    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}\n"
         "    memory: {quota: -1, limit: -1, overQuotaWeight: 1}\n---\n";
}

std::string NodeYaml(int n) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: node-" + std::to_string(n) +
         "}\nstatus:\n  allocatable: {cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"8\", "
         "pods: \"110\"}\n---\n";
}

ClusterState Decode(const std::string& y) {
  ClusterState s;
  const auto errors = ProblemsOf(DecodeManifestText(y, "test.yaml", s));
  EXPECT_TRUE(errors.empty()) << errors.front();
  return s;
}

ClusterState Base() { return Decode(QueueYaml("heavy", 4) + QueueYaml("light", 4) + NodeYaml(0)); }

constexpr const char* kSpec = R"(duration: 1d
queues:
- queue: heavy
  arrivalsPerHour: 3
  pods: {"1": 1, "2": 1}
  gpu: {"1": 1, "2": 1}
  runtime: {distribution: exponential, mean: 2h}
- queue: light
  arrivalsPerHour: 1
  gpu: 1
  runtime: {distribution: exponential, mean: 1h}
)";

RunResult RunOn(ClusterState c, const std::vector<TraceJob>& jobs) {
  auto config = ConfigFromShard(c.shard);
  EXPECT_TRUE(config.ok());
  WhatIfOptions o;
  o.start = *ParseRfc3339("2025-01-06T00:00:00Z");
  o.until_seconds = 86400;
  auto r = RunWhatIf(std::move(c), *config, jobs, o);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? std::move(r.value()) : RunResult{};
}

const QueueSummary* Find(const VariantSummary& v, const std::string& q) {
  for (const QueueSummary& s : v.queues) {
    if (s.name == q) return &s;
  }
  return nullptr;
}

TEST(WhatIfVariant, ReplacesByNameAndAppendsNewObjects) {
  ClusterState v = ApplyVariant(Base(), Decode(QueueYaml("light", 6) + NodeYaml(1)));
  ASSERT_EQ(v.queues.size(), 2u);
  EXPECT_EQ(v.queues[1].meta.name, "light");
  EXPECT_EQ(v.queues[1].gpu.quota, 6000);
  ASSERT_EQ(v.nodes.size(), 2u);
  EXPECT_TRUE(ValidateCluster(v).ok());
}

TEST(WhatIfVariant, IdenticalVariantGivesIdenticalResults) {
  const auto jobs = GenerateTrace(kSpec, "spec.yaml", 3);
  ASSERT_TRUE(jobs.ok());
  // The variant restates objects the base has, unchanged.
  const ClusterState same = ApplyVariant(Base(), Decode(QueueYaml("heavy", 4) + NodeYaml(0)));
  EXPECT_EQ(RunOn(Base(), *jobs), RunOn(same, *jobs));
}

TEST(WhatIfVariant, MoreGpusNeverRaiseP95WaitOfAQueueThatNeverBorrows) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const auto jobs = GenerateTrace(kSpec, "spec.yaml", seed);
    ASSERT_TRUE(jobs.ok());
    const VariantSummary base = Summarize("base", RunOn(Base(), *jobs));
    const VariantSummary more =
        Summarize("more", RunOn(ApplyVariant(Base(), Decode(NodeYaml(1))), *jobs));
    for (const QueueTotals& t : base.run.queues) {
      const QueueTotals* in_more = nullptr;
      for (const QueueTotals& m : more.run.queues) {
        if (m.name == t.name) in_more = &m;
      }
      ASSERT_NE(in_more, nullptr);
      // Never over quota (4 GPUs) in either run.
      if (t.peak_allocated_milli_gpu > 4000 || in_more->peak_allocated_milli_gpu > 4000) continue;
      const QueueSummary* b = Find(base, t.name);
      const QueueSummary* m = Find(more, t.name);
      ASSERT_TRUE(b && m);
      EXPECT_LE(m->wait_p95, b->wait_p95) << "seed " << seed << " queue " << t.name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);  // the light queue stays within its quota
}

}  // namespace
}  // namespace kai::whatif
