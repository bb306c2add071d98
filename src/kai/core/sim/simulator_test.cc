// The simulator's world model between cycles: a pending pod pipelined onto room a reclaim freed
// keeps that node as its nominated node for one cycle, and allocate serves it first.
#include "kai/core/sim/simulator.h"

#include <gtest/gtest.h>

#include <string>

#include "kai/core/framework/config.h"
#include "kai/core/k8s/decode.h"
#include "kai/core/util/time.h"
#include "kai/kube/io/manifest_files.h"

namespace kai {
namespace {

// Reclaim evicts victim2-0 for reclaimer-0; allocate's queue order prefers the victim's queue.
ClusterState LoadReclaimWorld() {
  const std::string file = std::string(KAI_SOURCE_DIR) +
                           "/tests/scenarios/reclaim/beneficiary-binds-no-ping-pong/scenario.yaml";
  auto state = LoadManifests({file});
  EXPECT_TRUE(state.ok()) << state.error().message;
  return state.ok() ? *state : ClusterState{};
}

sim::SimulateOptions Options() {
  sim::SimulateOptions options;
  options.now = *ParseRfc3339("2025-01-01T12:00:00Z");
  return options;
}

PodObject& Pod(ClusterState& world, const std::string& name) {
  for (PodObject& p : world.pods) {
    if (p.meta.name == name) return p;
  }
  ADD_FAILURE() << "no pod " << name;
  return world.pods.front();
}

sim::CycleReport Cycle(ClusterState& world, const std::vector<std::string>& actions, int n) {
  auto config = ConfigFromShard(world.shard).value();
  if (!actions.empty()) config.actions = actions;
  auto report = sim::RunCycle(world, config, Options(), n);
  EXPECT_TRUE(report.ok());
  return report.ok() ? report.value() : sim::CycleReport{};
}

TEST(SimulatorTest, PipelinedBeneficiaryIsNominatedAndBindsNextCycle) {
  ClusterState world = LoadReclaimWorld();
  const sim::CycleReport first = Cycle(world, {}, 1);
  EXPECT_EQ(first.counts.evictions, 1);
  EXPECT_EQ(Pod(world, "reclaimer-0").phase, "Pending");
  EXPECT_EQ(Pod(world, "reclaimer-0").nominated_node, "n0");
  EXPECT_EQ(Pod(world, "victim2-0").phase, "Pending");  // recreated: a new pod, not nominated
  EXPECT_EQ(Pod(world, "victim2-0").nominated_node, "");

  const sim::CycleReport second = Cycle(world, {}, 2);
  EXPECT_EQ(second.counts.evictions, 0);
  EXPECT_EQ(second.counts.binds, 1);
  EXPECT_EQ(Pod(world, "reclaimer-0").phase, "Running");
  EXPECT_EQ(Pod(world, "reclaimer-0").node_name, "n0");
  EXPECT_EQ(Pod(world, "reclaimer-0").nominated_node, "");  // cleared once it runs
  EXPECT_EQ(Pod(world, "victim2-0").phase, "Pending");

  for (int c = 3; c <= 5; ++c) {
    const sim::CycleReport later = Cycle(world, {}, c);
    EXPECT_EQ(later.counts.evictions + later.counts.binds + later.counts.pipelines, 0) << c;
  }
}

// Without the nomination the queue order (KAI's) gives the freed GPU back to the victim.
TEST(SimulatorTest, AllocateServesNominatedJobsFirst) {
  ClusterState world = LoadReclaimWorld();
  Cycle(world, {}, 1);
  ClusterState unnominated = world;
  Pod(unnominated, "reclaimer-0").nominated_node.clear();

  Cycle(world, {"allocate"}, 2);
  EXPECT_EQ(Pod(world, "reclaimer-0").phase, "Running");
  EXPECT_EQ(Pod(world, "victim2-0").phase, "Pending");

  Cycle(unnominated, {"allocate"}, 2);
  EXPECT_EQ(Pod(unnominated, "reclaimer-0").phase, "Pending");
  EXPECT_EQ(Pod(unnominated, "victim2-0").phase, "Running");
}

// A nomination lasts one cycle: a nominated pod that ends the next cycle neither bound nor
// pipelined loses it, so it cannot jump the queue forever.
TEST(SimulatorTest, NominationExpiresWhenNotPipelinedAgain) {
  ClusterState world = LoadReclaimWorld();
  Cycle(world, {}, 1);
  ASSERT_EQ(Pod(world, "reclaimer-0").nominated_node, "n0");
  Cycle(world, {"preempt"}, 2);  // nothing for preempt to do: the pod stays Pending
  EXPECT_EQ(Pod(world, "reclaimer-0").phase, "Pending");
  EXPECT_EQ(Pod(world, "reclaimer-0").nominated_node, "");
}

}  // namespace
}  // namespace kai
