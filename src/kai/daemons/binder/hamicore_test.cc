#include "kai/daemons/binder/hamicore.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <mutex>

#include "kai/testing/local_server.h"

namespace kai::binder {
namespace {

BindRequestObject Fraction(std::string portion) {
  BindRequestObject b;
  b.meta.ns = "team";
  b.meta.name = "train-0-abc";
  b.pod_name = "train-0";
  b.selected_node = "node-1";
  b.received_resource_type = "Fraction";
  b.selected_gpu_groups = {"g0"};
  b.gpu_count = 1;
  b.gpu_portion = std::move(portion);
  return b;
}

std::optional<std::string> Label(std::string v) { return std::optional<std::string>(v); }

TEST(HamiCoreLimit, IsTheNodesGpuMemoryTimesThePortionRoundedDown) {
  EXPECT_EQ(CudaMemoryLimitMib("n", Label("15360"), Fraction("0.27")).value(), 4147);
  EXPECT_EQ(CudaMemoryLimitMib("n", Label("40960"), Fraction("0.50")).value(), 20480);
  EXPECT_EQ(CudaMemoryLimitMib("n", Label("81920"), Fraction("1.00")).value(), 81920);
  // Exact: 100 * 0.29 is 29 (a float product is 28.999...).
  EXPECT_EQ(CudaMemoryLimitMib("n", Label("100"), Fraction("0.29")).value(), 29);
  EXPECT_EQ(CudaMemoryLimitMib("n", Label("9000000000000000000"), Fraction("0.5")).value(),
            4500000000000000000);
  EXPECT_EQ(CudaMemoryLimitValue(4147), "4147m");
}

TEST(HamiCoreLimit, ErrorsNameTheNodesLabelOrTheRequestsField) {
  const struct {
    std::optional<std::string> label;
    std::string portion, want;
  } cases[] = {
      {std::nullopt, "0.5", "Node n: label nvidia.com/gpu.memory: absent"},
      {Label("16GiB"), "0.5", "Node n: label nvidia.com/gpu.memory: expected a positive integer"},
      {Label("0"), "0.5", "Node n: label nvidia.com/gpu.memory: expected a positive integer"},
      {Label("-5"), "0.5", "Node n: label nvidia.com/gpu.memory: expected a positive integer"},
      {Label("16000"), "", "BindRequest team/train-0-abc: spec.receivedGPU.portion: "},
      {Label("16000"), "half", "BindRequest team/train-0-abc: spec.receivedGPU.portion: "},
      {Label("16000"), "0", "spec.receivedGPU.portion: expected a share of one GPU"},
      {Label("16000"), "1.5", "spec.receivedGPU.portion: expected a share of one GPU"},
      {Label("16000"), "-0.5", "spec.receivedGPU.portion: expected a share of one GPU"},
      {Label("100"), "0.001", "spec.receivedGPU.portion: 0.001 of the 100 MiB of node n's GPU"},
  };
  for (const auto& c : cases) {
    auto r = CudaMemoryLimitMib("n", c.label, Fraction(c.portion));
    ASSERT_FALSE(r.ok()) << c.portion;
    EXPECT_NE(r.error().message.find(c.want), std::string::npos) << r.error().message;
  }
}

TEST(HamiCoreOrder, NeedsGpuSharingEnabledAndFirst) {
  PluginConfig c = DefaultPluginConfig();
  EXPECT_TRUE(CheckHamiCoreOrder(c).ok());  // off by default
  c["hamicore"].enabled = true;
  EXPECT_TRUE(CheckHamiCoreOrder(c).ok());  // gpusharing 100, hamicore 50
  c["gpusharing"].priority = 50;
  auto tie = CheckHamiCoreOrder(c);
  ASSERT_FALSE(tie.ok());
  EXPECT_NE(tie.error().message.find("gpusharing.priority 50 must be above hamicore.priority 50"),
            std::string::npos)
      << tie.error().message;
  c["gpusharing"].priority = 100;
  c["gpusharing"].enabled = false;
  auto off = CheckHamiCoreOrder(c);
  ASSERT_FALSE(off.ok());
  EXPECT_NE(off.error().message.find("needs plugin gpusharing enabled"), std::string::npos);
}

TEST(HamiCoreOrder, BuildPluginsRunsItAfterGpuSharingAndRefusesABadOrder) {
  std::atomic<bool> stop{false};
  k8s::ClusterConfig cfg;
  cfg.server = "http://127.0.0.1:1";
  k8s::ApiClient client(cfg);
  auto on = MergePluginConfig(DefaultPluginConfig(), R"({"hamicore":{"enabled":true}})");
  ASSERT_TRUE(on.ok());
  auto plugins = BuildPlugins(*on, client, stop);
  ASSERT_TRUE(plugins.ok()) << plugins.error().message;
  std::vector<std::string> names;
  for (const auto& p : *plugins) names.emplace_back(p->Name());
  EXPECT_EQ(names, (std::vector<std::string>{"volumebinding", "dynamicresources", "gpusharing",
                                             "hamicore"}));
  auto first =
      MergePluginConfig(DefaultPluginConfig(), R"({"hamicore":{"enabled":true,"priority":500}})");
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(BuildPlugins(*first, client, stop).ok());
}

// A fake API server: the node (with `label` when set) and the ConfigMap patch, recorded.
class FakeApi {
 public:
  FakeApi(std::optional<std::string> label, int patch_status)
      : server_([this, label, patch_status](httplib::Server& s) {
          s.Get(".*", [this, label](const httplib::Request& req, httplib::Response& res) {
            Record("GET " + req.path, "");
            std::string labels = label ? R"({"nvidia.com/gpu.memory":")" + *label + "\"}" : "{}";
            res.set_content(
                R"({"kind":"Node","metadata":{"name":"node-1","labels":)" + labels + "}}",
                "application/json");
          });
          s.Patch(".*", [this, patch_status](const httplib::Request& req, httplib::Response& res) {
            Record("PATCH " + req.path, req.body);
            res.status = patch_status;
            res.set_content(patch_status == 200 ? "{}"
                                                : R"({"kind":"Status","reason":"NotFound",)"
                                                  R"("code":404})",
                            "application/json");
          });
        }) {}
  k8s::ClusterConfig config() const { return server_.config(); }
  std::vector<std::pair<std::string, std::string>> calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

 private:
  void Record(std::string call, std::string body) {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.emplace_back(std::move(call), std::move(body));
  }
  std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> calls_;
  testing::LocalServer server_;  // last: it stops before the members its handlers use go
};

PodView SharingPod() {
  PodView p;
  p.ns = "team";
  p.name = "train-0";
  p.uid = "u-1";
  p.annotations = {{"runai/shared-gpu-configmap", "train-x1-shared-gpu"},
                   {"gpu-fraction-container-name", "worker"}};
  p.containers = {{"side", false}, {"worker", true}};
  return p;
}

struct PreBindRun {
  Status status = Ok();
  std::vector<std::pair<std::string, std::string>> calls;
  std::vector<std::string> logs;
};

PreBindRun RunPreBind(std::optional<std::string> label, int patch_status,
                      const BindRequestObject& request) {
  FakeApi api(std::move(label), patch_status);
  k8s::ApiClient client(api.config());
  PreBindRun out;
  auto plugin = MakeHamiCore(client, [&](const std::string& l) { out.logs.push_back(l); });
  const PodView pod = SharingPod();
  BindContext ctx{pod, request, {"GPU-1"}, {}};
  out.status = plugin->PreBind(ctx);
  out.calls = api.calls();
  return out;
}

TEST(HamiCorePreBind, WritesTheLimitIntoTheFractionContainersCapabilitiesMap) {
  const PreBindRun run = RunPreBind("15360", 200, Fraction("0.27"));
  ASSERT_TRUE(run.status.ok()) << run.status.error().message;
  ASSERT_EQ(run.calls.size(), 2u);
  EXPECT_EQ(run.calls[0].first, "GET /api/v1/nodes/node-1");
  EXPECT_EQ(run.calls[1].first, "PATCH /api/v1/namespaces/team/configmaps/train-x1-shared-gpu-1");
  EXPECT_EQ(run.calls[1].second, R"({"data":{"CUDA_DEVICE_MEMORY_LIMIT":"4147m"}})");
  EXPECT_TRUE(run.logs.empty());
}

TEST(HamiCorePreBind, ANodeWithoutTheLabelBindsWithoutALimitAndSaysWhy) {
  const PreBindRun run = RunPreBind(std::nullopt, 200, Fraction("0.5"));
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.calls.size(), 1u);  // the node only
  ASSERT_EQ(run.logs.size(), 1u);
  EXPECT_EQ(run.logs[0],
            "pod team/train-0 gets no CUDA_DEVICE_MEMORY_LIMIT: Node node-1: label "
            "nvidia.com/gpu.memory: absent (the GPU's memory in MiB, set by GPU feature "
            "discovery)");
}

TEST(HamiCorePreBind, WholeGpuBindsAreLeftAloneAndAMissingMapFailsTheBind) {
  BindRequestObject whole = Fraction("1.00");
  whole.received_resource_type = "Regular";
  k8s::ClusterConfig nowhere;  // any call would fail
  nowhere.server = "http://127.0.0.1:1";
  k8s::ApiClient client(nowhere);
  const PodView pod = SharingPod();
  BindContext ctx{pod, whole, {}, {}};
  EXPECT_TRUE(MakeHamiCore(client, {})->PreBind(ctx).ok());

  const PreBindRun missing = RunPreBind("15360", 404, Fraction("0.5"));
  ASSERT_FALSE(missing.status.ok());
  EXPECT_EQ(missing.status.error().message.rfind(
                "ConfigMap team/train-x1-shared-gpu-1: data.CUDA_DEVICE_MEMORY_LIMIT: ", 0),
            0u)
      << missing.status.error().message;
}

}  // namespace
}  // namespace kai::binder
