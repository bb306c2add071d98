#include "kai/daemons/scheduler/shard_status.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <mutex>
#include <utility>

#include "kai/core/k8s/doc.h"
#include "kai/testing/local_server.h"

namespace kai::scheduler {
namespace {

constexpr UnixSeconds kNow = 1767225600;  // 2026-01-01T00:00:00Z

std::vector<NotApplied> TwoUnknowns() {
  return {{NotApplied::Why::kUnknownName, "api: SchedulingShard default",
           "spec.plugins.mycustomplugin", "unknown plugin \"mycustomplugin\""},
          {NotApplied::Why::kUnknownName, "api: SchedulingShard default", "spec.args.v",
           "unknown scheduler argument"}};
}

doc::Document Parse(const std::string& json) {
  auto d = doc::ParseJson(json);
  EXPECT_TRUE(d.ok()) << json;
  return std::move(d.value());
}

constexpr const char* kShardWithConditions =
    R"({"metadata":{"name":"default","resourceVersion":"42"},"status":{"conditions":[)"
    R"({"type":"Ready","status":"True","reason":"ready","message":"","observedGeneration":3,)"
    R"("lastTransitionTime":"2025-01-01T00:00:00Z"},)"
    R"({"type":"SettingsApplied","status":"False","reason":"not_applied","message":"old",)"
    R"("lastTransitionTime":"2025-06-01T00:00:00Z"}]}})";

TEST(ShardSettingsCondition, NamesTheFieldsAndKeepsOtherConditions) {
  const doc::Document shard = Parse(kShardWithConditions);
  const std::string patch = SettingsConditionPatch(shard.Roots()[0], TwoUnknowns(), kNow);
  const doc::Document p = Parse(patch);
  const doc::Node root = p.Roots()[0];
  EXPECT_EQ(root["metadata"]["resourceVersion"].Scalar(), "42");
  const doc::Node conds = root["status"]["conditions"];
  ASSERT_EQ(conds.size(), 2u);
  EXPECT_EQ(conds[size_t{0}]["type"].Scalar(), "Ready");
  EXPECT_EQ(conds[size_t{0}]["observedGeneration"].Scalar(), "3");
  const doc::Node ours = conds[size_t{1}];
  EXPECT_EQ(ours["type"].Scalar(), "SettingsApplied");
  EXPECT_EQ(ours["status"].Scalar(), "False");
  EXPECT_EQ(ours["reason"].Scalar(), "not_applied");
  EXPECT_EQ(ours["message"].Scalar(),
            "not applied (kai keeps its defaults for them): spec.plugins.mycustomplugin: unknown "
            "plugin \"mycustomplugin\"; spec.args.v: unknown scheduler argument");
  // Still False: the transition time stays.
  EXPECT_EQ(ours["lastTransitionTime"].Scalar(), "2025-06-01T00:00:00Z");
}

TEST(ShardSettingsCondition, TrueWhenEverythingAppliedAndNothingWhenUnchanged) {
  const doc::Document none = Parse(R"({"metadata":{"name":"default","resourceVersion":"1"}})");
  const doc::Document p = Parse(SettingsConditionPatch(none.Roots()[0], {}, kNow));
  const doc::Node ours = p.Roots()[0]["status"]["conditions"][size_t{0}];
  EXPECT_EQ(ours["status"].Scalar(), "True");
  EXPECT_EQ(ours["reason"].Scalar(), "applied");
  EXPECT_EQ(ours["lastTransitionTime"].Scalar(), "2026-01-01T00:00:00Z");
  // Written already: no patch.
  const std::string again =
      R"({"metadata":{"resourceVersion":"2"},"status":{"conditions":[)" +
      std::string(R"({"type":"SettingsApplied","status":"True","reason":"applied","message":")") +
      SettingsMessage({}) + R"(","lastTransitionTime":"2026-01-01T00:00:00Z"}]}})";
  EXPECT_EQ(SettingsConditionPatch(Parse(again).Roots()[0], {}, kNow + 10), "");
}

// A fake API server holding one SchedulingShard; PATCH answers `patch_status`.
class FakeShardApi {
 public:
  FakeShardApi()
      : server_([this](httplib::Server& server) {
          server.Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
            Record("GET " + req.path);
            res.set_content(R"({"metadata":{"name":"default","resourceVersion":"7"}})",
                            "application/json");
          });
          server.Patch(".*", [this](const httplib::Request& req, httplib::Response& res) {
            res.status = Record("PATCH " + req.path);
            res.set_content(R"({"metadata":{"name":"default"}})", "application/json");
          });
        }) {}
  k8s::ClusterConfig config() const { return server_.config(); }
  std::vector<std::string> TakeCalls() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(calls_, {});
  }
  void SetPatchStatus(int s) {
    std::lock_guard<std::mutex> lock(mu_);
    patch_status_ = s;
  }

 private:
  // Records a call; the status a PATCH answers.
  int Record(std::string call) {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(std::move(call));
    return patch_status_;
  }
  std::mutex mu_;
  int patch_status_ = 200;
  std::vector<std::string> calls_;
  testing::LocalServer server_;  // last: it stops before the members its handlers use go
};

TEST(ShardSettingsReport, LogsOnceAndWritesOncePerChange) {
  FakeShardApi api;
  k8s::RetryPolicy once;
  once.max_attempts = 1;
  const k8s::ApiClient client(api.config(), once);
  std::vector<std::string> log;
  ShardSettingsReport report([&log](const std::string& l) { log.push_back(l); });
  const std::string shard_path = "/apis/kai.scheduler/v1/schedulingshards/default";

  // Everything applied from the start: nothing logged, the condition written True once.
  report.Observe({});
  report.Write(client, "default", kNow);
  report.Write(client, "default", kNow);
  EXPECT_TRUE(log.empty());
  EXPECT_EQ(api.TakeCalls(),
            (std::vector<std::string>{"GET " + shard_path, "PATCH " + shard_path + "/status"}));

  // Two settings not applied, observed for three cycles: two log lines, one write.
  api.SetPatchStatus(409);
  for (int cycle = 0; cycle < 3; ++cycle) {
    report.Observe(TwoUnknowns());
    report.Write(client, "default", kNow);
  }
  ASSERT_EQ(log.size(), 3u);  // two items, and the failed write (once)
  EXPECT_NE(log[0].find("spec.plugins.mycustomplugin"), std::string::npos) << log[0];
  EXPECT_NE(log[1].find("spec.args.v"), std::string::npos) << log[1];
  EXPECT_NE(log[2].find("tried again next cycle"), std::string::npos) << log[2];
  EXPECT_EQ(api.TakeCalls().size(), 6u);  // refused: tried every cycle
  api.SetPatchStatus(200);
  report.Write(client, "default", kNow);
  report.Write(client, "default", kNow);
  EXPECT_EQ(api.TakeCalls().size(), 2u);  // written, then left alone

  // Fixed: one line saying so, and the condition written again.
  report.Observe({});
  report.Write(client, "default", kNow);
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[3], "every SchedulingShard setting applied");
  EXPECT_EQ(api.TakeCalls().size(), 2u);
}

}  // namespace
}  // namespace kai::scheduler
