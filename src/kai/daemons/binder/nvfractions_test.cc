#include "kai/daemons/binder/nvfractions.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <mutex>

#include "kai/daemons/binder/plugins.h"
#include "kai/testing/local_server.h"

namespace kai::binder {
namespace {

constexpr const char* kDevices = "nvidia.com/container.worker.gpus.devices";

BindRequestObject Fraction() {
  BindRequestObject b;
  b.meta.ns = "team";
  b.meta.name = "train-0-abc";
  b.pod_name = "train-0";
  b.selected_node = "node-1";
  b.received_resource_type = "Fraction";
  b.selected_gpu_groups = {"g0", "g1"};
  b.gpu_count = 2;
  b.gpu_portion = "0.25";
  return b;
}

// An NvFractions pod (no ConfigMap annotation: admission gives it none).
PodView NvPod() {
  PodView p;
  p.ns = "team";
  p.name = "train-0";
  p.uid = "u-1";
  p.annotations = {{"nvidia.com/container.worker.gpu-memory.request", "4Gi"},
                   {"gpu-fraction-num-devices", "2"}};
  p.containers = {{"side", false}, {"worker", false}};
  return p;
}

// A fake API server answering every PATCH with `status`, each call recorded.
class FakeApi {
 public:
  explicit FakeApi(int status)
      : server_([this, status](httplib::Server& s) {
          auto record = [this, status](const httplib::Request& req, httplib::Response& res) {
            {
              std::lock_guard<std::mutex> lock(mu_);
              calls_.emplace_back(req.method + " " + req.path, req.body);
            }
            res.status = status;
            res.set_content(
                status == 200 ? "{}" : R"({"kind":"Status","reason":"NotFound","code":404})",
                "application/json");
          };
          s.Patch(".*", record);
          s.Post(".*", record);
          s.Delete(".*", record);
          s.Get(".*", record);
        }) {}
  k8s::ClusterConfig config() const { return server_.config(); }
  std::vector<std::pair<std::string, std::string>> calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> calls_;
  testing::LocalServer server_;  // last: it stops before the members its handlers use go
};

struct PluginRun {
  Status status = Ok();
  std::vector<std::pair<std::string, std::string>> calls;
};

enum class Step { kPreBind, kRollback };

PluginRun RunPlugin(const std::string& plugin_name, Step step, const PodView& pod,
                    int status = 200) {
  FakeApi api(status);
  k8s::ApiClient client(api.config());
  std::atomic<bool> stop{false};
  auto config = MergePluginConfig(DefaultPluginConfig(), R"({"hamicore":{"enabled":true}})");
  auto plugins = BuildPlugins(*config, client, stop);
  const BindRequestObject request = Fraction();
  BindContext ctx{pod, request, {"GPU-aaa", "GPU-bbb"}, {}};
  PluginRun out;
  for (const auto& p : *plugins) {
    if (p->Name() != plugin_name) continue;
    out.status = step == Step::kPreBind ? p->PreBind(ctx) : p->Rollback(ctx);
  }
  out.calls = api.calls();
  return out;
}

TEST(NvFractionsBinder, FindsTheContainerOfTheRequest) {
  auto c = NvFractionsContainer(NvPod());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, "worker");
  PodView legacy = NvPod();
  legacy.annotations = {{"gpu-memory", "4096"}};
  EXPECT_EQ(*NvFractionsContainer(legacy), std::nullopt);
  PodView bad = NvPod();
  bad.annotations = {{"nvidia.com/container.ghost.gpu-memory.request", "1Gi"}};
  auto e = NvFractionsContainer(bad);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message,
            "Pod team/train-0: metadata.annotations.nvidia.com/container.ghost.gpu-memory.request: "
            "the pod has no container or init container named \"ghost\"");
  EXPECT_EQ(DevicesValue({"GPU-aaa", "GPU-bbb"}), "GPU-aaa,GPU-bbb");
}

TEST(NvFractionsBinder, PreBindWritesTheDevicesAnnotationAndNoConfigMap) {
  const PluginRun run = RunPlugin("gpusharing", Step::kPreBind, NvPod());
  ASSERT_TRUE(run.status.ok()) << run.status.error().message;
  ASSERT_EQ(run.calls.size(), 1u);
  EXPECT_EQ(run.calls[0].first, "PATCH /api/v1/namespaces/team/pods/train-0");
  EXPECT_EQ(run.calls[0].second, std::string(R"({"metadata":{"annotations":{")") + kDevices +
                                     R"(":"GPU-aaa,GPU-bbb"}}})");
}

TEST(NvFractionsBinder, AnAnnotationAlreadyWrittenIsNotWrittenAgain) {
  PodView pod = NvPod();
  pod.annotations[kDevices] = "GPU-aaa,GPU-bbb";
  const PluginRun run = RunPlugin("gpusharing", Step::kPreBind, pod);
  ASSERT_TRUE(run.status.ok());
  EXPECT_TRUE(run.calls.empty());
}

TEST(NvFractionsBinder, AFailedPatchFailsTheBindNamingTheField) {
  const PluginRun run = RunPlugin("gpusharing", Step::kPreBind, NvPod(), 404);
  ASSERT_FALSE(run.status.ok());
  EXPECT_EQ(run.status.error().message.rfind(
                std::string("Pod team/train-0: metadata.annotations.") + kDevices + ": ", 0),
            0u)
      << run.status.error().message;
}

TEST(NvFractionsBinder, RollbackRemovesTheAnnotation) {
  const PluginRun run = RunPlugin("gpusharing", Step::kRollback, NvPod());
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.calls.size(), 1u);
  EXPECT_EQ(run.calls[0].first, "PATCH /api/v1/namespaces/team/pods/train-0");
  EXPECT_EQ(run.calls[0].second,
            std::string(R"({"metadata":{"annotations":{")") + kDevices + R"(":null}}})");
  // A pod that is gone has nothing to remove.
  EXPECT_TRUE(RunPlugin("gpusharing", Step::kRollback, NvPod(), 404).status.ok());
}

TEST(NvFractionsBinder, HamiCoreLeavesNvFractionsPodsAlone) {
  const PluginRun run = RunPlugin("hamicore", Step::kPreBind, NvPod());
  ASSERT_TRUE(run.status.ok()) << run.status.error().message;
  EXPECT_TRUE(run.calls.empty());
}

TEST(NvFractionsBinder, AnInvalidRequestFailsTheBind) {
  PodView bad = NvPod();
  bad.annotations["gpu-fraction"] = "0.5";
  const PluginRun run = RunPlugin("gpusharing", Step::kPreBind, bad);
  ASSERT_FALSE(run.status.ok());
  EXPECT_NE(run.status.error().message.find("cannot be combined with the gpu-fraction"),
            std::string::npos);
  EXPECT_TRUE(run.calls.empty());
}

}  // namespace
}  // namespace kai::binder
