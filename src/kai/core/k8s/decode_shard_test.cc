// SchedulingShard fields beyond plugins and actions: decoded as written, encoded back unchanged.
#include <gtest/gtest.h>

#include <string>

#include "kai/core/k8s/decode.h"
#include "kai/core/k8s/encode.h"

namespace kai {
namespace {

constexpr const char* kShard =
    "apiVersion: kai.scheduler/v1\nkind: SchedulingShard\nmetadata: {name: pool-a}\nspec:\n"
    "  queueDepthPerAction: {allocate: 100, reclaim: 20}\n"
    "  minRuntime: {preemptMinRuntime: 5m, reclaimMinRuntime: 15m}\n"
    "  kValue: 1.5\n"
    "  args: {v: \"0\"}\n"
    "  plugins: {mycustomplugin: {priority: 50}}\n";

TEST(DecodeShardTest, MinRuntimeKValueAndQueueDepthsAreRead) {
  ClusterState state;
  const Status st = DecodeManifestText(kShard, "shard.yaml", state);
  ASSERT_TRUE(st.ok()) << st.error().message;
  ASSERT_TRUE(state.shard);
  const ShardObject& s = *state.shard;
  EXPECT_EQ(s.queue_depth_per_action,
            (std::map<std::string, std::string>{{"allocate", "100"}, {"reclaim", "20"}}));
  EXPECT_EQ(s.preempt_min_runtime, "5m");
  EXPECT_EQ(s.reclaim_min_runtime, "15m");
  EXPECT_EQ(s.k_value, "1.5");
  // Unknown names decode; the configuration reports them (framework/config.h).
  EXPECT_EQ(s.args.at("v"), "0");
  ASSERT_EQ(s.plugins.size(), 1u);
  EXPECT_EQ(s.plugins[0].name, "mycustomplugin");
}

TEST(DecodeShardTest, AbsentFieldsStayAbsent) {
  ClusterState state;
  ASSERT_TRUE(DecodeManifestText("apiVersion: kai.scheduler/v1\nkind: SchedulingShard\n"
                                 "metadata: {name: x}\nspec: {}\n",
                                 "shard.yaml", state)
                  .ok());
  ASSERT_TRUE(state.shard);
  EXPECT_TRUE(state.shard->queue_depth_per_action.empty());
  EXPECT_FALSE(state.shard->preempt_min_runtime);
  EXPECT_FALSE(state.shard->reclaim_min_runtime);
  EXPECT_FALSE(state.shard->k_value);
}

TEST(DecodeShardTest, MalformedShapesNameTheField) {
  for (const auto& [spec, field] : std::vector<std::pair<std::string, std::string>>{
           {"  queueDepthPerAction: [1]\n", "spec.queueDepthPerAction"},
           {"  minRuntime: 5m\n", "spec.minRuntime"},
           {"  minRuntime: {preemptMinRuntime: [1]}\n", "spec.minRuntime.preemptMinRuntime"},
           {"  kValue: {a: 1}\n", "spec.kValue"}}) {
    ClusterState state;
    const Status st = DecodeManifestText(
        "apiVersion: kai.scheduler/v1\nkind: SchedulingShard\nmetadata: {name: x}\nspec:\n" + spec,
        "shard.yaml", state);
    ASSERT_FALSE(st.ok()) << spec;
    EXPECT_NE(st.error().message.find(field), std::string::npos) << st.error().message;
  }
}

TEST(DecodeShardTest, NewFieldsSurviveTheRoundTrip) {
  ClusterState a;
  ASSERT_TRUE(DecodeManifestText(kShard, "a", a).ok());
  ClusterState b;
  const std::string encoded = EncodeManifests(a);
  ASSERT_TRUE(DecodeManifestText(encoded, "b", b).ok()) << encoded;
  ASSERT_TRUE(b.shard);
  EXPECT_EQ(b.shard->queue_depth_per_action, a.shard->queue_depth_per_action);
  EXPECT_EQ(b.shard->preempt_min_runtime, a.shard->preempt_min_runtime);
  EXPECT_EQ(b.shard->reclaim_min_runtime, a.shard->reclaim_min_runtime);
  EXPECT_EQ(b.shard->k_value, a.shard->k_value);
}

}  // namespace
}  // namespace kai
