#include "kai/daemons/scheduler/commit.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <mutex>

#include "kai/core/k8s/doc.h"
#include "kai/testing/local_server.h"

namespace kai::scheduler {
namespace {

// A fake API server for one pod: answers the status patch with `patch_status` and the delete
// with the pod, terminating; records every call in order.
class FakeApi {
 public:
  explicit FakeApi(int patch_status)
      : server_([this, patch_status](httplib::Server& server) {
          server.Patch(
              ".*", [this, patch_status](const httplib::Request& req, httplib::Response& res) {
                Record("PATCH " + req.path, req.body);
                res.status = patch_status;
                res.set_content(R"({"kind":"Pod","metadata":{"name":"victim","namespace":"team"}})",
                                "application/json");
              });
          server.Post(".*", [this](const httplib::Request& req, httplib::Response& res) {
            Record("POST " + req.path, req.body);
            res.status = 201;
            res.set_content("{}", "application/json");
          });
          server.Delete(".*", [this](const httplib::Request& req, httplib::Response& res) {
            Record("DELETE " + req.path, req.body);
            res.set_content(
                R"({"kind":"Pod","metadata":{"name":"victim","namespace":"team","uid":"u-1",)"
                R"("deletionTimestamp":"2026-01-01T00:00:00Z"}})",
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

Decisions OneEviction() {
  EvictDecision e;
  e.pod = {"team", "victim", "u-1"};
  e.message = "reclaim for team/trainer: the reclaimer's queue is below its fair share";
  e.action = "reclaim";
  e.preemptor = {"team", "trainer", ""};
  Decisions d;
  d.evictions.push_back(e);
  return d;
}

CommitResult CommitWith(FakeApi& api, bool condition) {
  k8s::RetryPolicy once;
  once.max_attempts = 1;
  k8s::ApiClient client(api.config(), once);
  CommitOptions o;
  if (!condition) o.update_pod_eviction_condition = false;
  Committer c(client, nullptr, o);
  return c.Commit(OneEviction(), 1767225600);
}

TEST(CommitEviction, TheDisruptionTargetConditionIsSetBeforeTheDeleteByDefault) {
  FakeApi api(200);
  const CommitResult r = CommitWith(api, true);
  EXPECT_EQ(r.evictions, 1);
  EXPECT_EQ(r.failed, 0);
  const auto calls = api.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].first, "PATCH /api/v1/namespaces/team/pods/victim/status");
  EXPECT_EQ(calls[1].first, "DELETE /api/v1/namespaces/team/pods/victim");
  auto patch = doc::ParseJson(calls[0].second);
  ASSERT_TRUE(patch.ok()) << calls[0].second;
  const doc::Node cond = patch->Roots()[0]["status"]["conditions"][size_t{0}];
  EXPECT_EQ(cond["type"].Scalar(), "DisruptionTarget");
  EXPECT_EQ(cond["status"].Scalar(), "True");
  EXPECT_EQ(cond["reason"].Scalar(), "PreemptionByScheduler");
  EXPECT_EQ(cond["message"].Scalar(), OneEviction().evictions[0].message);
  EXPECT_NE(calls[1].second.find(R"("uid":"u-1")"), std::string::npos) << calls[1].second;
}

TEST(CommitEviction, TurnedOffThePodIsOnlyDeleted) {
  FakeApi api(200);
  EXPECT_EQ(CommitWith(api, false).evictions, 1);
  const auto calls = api.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].first, "DELETE /api/v1/namespaces/team/pods/victim");
}

TEST(CommitEviction, APodWhoseConditionFailsIsNotDeletedThisCycle) {
  FakeApi api(422);
  const CommitResult r = CommitWith(api, true);
  EXPECT_EQ(r.evictions, 0);
  EXPECT_EQ(r.failed, 1);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("PATCH /api/v1/namespaces/team/pods/victim/status"), std::string::npos)
      << r.errors[0];
  ASSERT_EQ(api.calls().size(), 1u);
}

TEST(CommitEviction, APodAlreadyGoneIsNeitherAnErrorNorDeleted) {
  FakeApi api(404);
  const CommitResult r = CommitWith(api, true);
  EXPECT_EQ(r.evictions, 0);
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(api.calls().size(), 1u);
}

// The events a cycle posted, in order: "reason: message".
std::vector<std::string> Events(FakeApi& api) {
  std::vector<std::string> out;
  for (const auto& [call, body] : api.calls()) {
    if (call != "POST /api/v1/namespaces/team/events") continue;
    auto e = doc::ParseJson(body);
    EXPECT_TRUE(e.ok()) << body;
    if (!e.ok()) continue;
    const doc::Node root = e->Roots()[0];
    out.push_back(std::string(root["reason"].Scalar()) + ": " +
                  std::string(root["message"].Scalar()));
  }
  std::sort(out.begin(), out.end());  // background writers post in any order
  return out;
}

TEST(CommitStatusEvents, PipelinedNotReadyAndStaleJobAreWrittenWhenTheirMessageChanges) {
  FakeApi api(200);
  k8s::ApiClient client(api.config());
  Committer c(client, nullptr, CommitOptions{});
  Decisions d;
  d.pipelined.push_back({{"team", "p", "u-p"}, "n1"});
  PodGroupDecision g;
  g.pod_group = {"team", "g", "u-g"};
  g.not_ready =
      "Job is not ready for scheduling. Waiting for 3 pods, currently 2 exist, 0 are gated";
  g.stale = "Job is stale. 1 pods are active, minMember is 2";
  d.pod_groups.push_back(g);
  const UnixSeconds now = 1767225600;
  c.Commit(d, now);
  ASSERT_TRUE(c.FlushBackground(std::chrono::seconds(10)));
  const std::vector<std::string> first = {"NotReady: " + *g.not_ready,
                                          "Pipelined: Pod team/p was pipelined to node n1",
                                          "StaleJob: " + *g.stale};
  EXPECT_EQ(Events(api), first);
  c.Commit(d, now + 1);  // the same messages: nothing new
  ASSERT_TRUE(c.FlushBackground(std::chrono::seconds(10)));
  EXPECT_EQ(Events(api).size(), 3u);
  d.pipelined[0].node = "n2";
  c.Commit(d, now + 2);
  ASSERT_TRUE(c.FlushBackground(std::chrono::seconds(10)));
  ASSERT_EQ(Events(api).size(), 4u);
  EXPECT_EQ(Events(api)[2], "Pipelined: Pod team/p was pipelined to node n2");
  c.Commit(Decisions{}, now + 3);  // no longer mentioned: forgotten
  EXPECT_EQ(c.Remembered(), 0u);
}

}  // namespace
}  // namespace kai::scheduler
