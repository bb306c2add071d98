#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "kai/core/k8s/doc.h"
#include "kai/daemons/binder/controller.h"
#include "kai/daemons/binder/objects.h"
#include "kai/daemons/binder/plugins.h"
#include "kai/daemons/binder/reservation.h"
#include "kai/kube/runtime/workqueue.h"

namespace kai::binder {
namespace {

using namespace std::chrono_literals;

struct FakeClock {
  runtime::Clock::time_point t{};
  runtime::NowFn fn() {
    return [this] { return t; };
  }
};

TEST(BinderWorkQueue, KeyQueuedOnceAndNeverToTwoWorkers) {
  FakeClock c;
  runtime::WorkQueue q({}, c.fn());
  q.Add("a");
  q.Add("a");
  EXPECT_EQ(q.Len(), 1u);
  auto k = q.Get(0ms);
  ASSERT_TRUE(k);
  q.Add("a");  // while processing: dirty, not handed out again
  EXPECT_FALSE(q.Get(0ms));
  q.Done("a");
  EXPECT_EQ(q.Get(0ms).value_or(""), "a");
}

// A worker reconciles each key, retries a failure after its delay and reports both to the work
// queue's and the reconciler's metrics (client-go's and controller-runtime's names).
TEST(BinderWorkQueue, RunWorkerRetriesFailuresAndReportsThem) {
  FakeClock c;
  runtime::WorkQueue q({}, c.fn());
  serve::MetricsRegistry r;
  q.SetMetrics(std::make_shared<serve::WorkQueueMetrics>(r, "test"));
  serve::ReconcileMetrics reconciles(r, "test", 1);
  q.Add("ok");
  q.Add("fails");
  std::vector<std::string> seen;
  runtime::RunWorker(
      q,
      [&](const std::string& key) {
        seen.push_back(key);
        return key == "ok";
      },
      [] { return true; }, [&](const std::string&) { return &reconciles; });
  EXPECT_EQ(seen, (std::vector<std::string>{"ok", "fails"}));
  EXPECT_EQ(q.Failures("fails"), 1);
  EXPECT_EQ(q.Waiting(), 1u);  // the failure waits for its delay
  const std::string text = r.Text();
  for (const char* line :
       {"workqueue_adds_total{name=\"test\"} 2", "workqueue_retries_total{name=\"test\"} 1",
        "workqueue_work_duration_seconds_count{name=\"test\"} 2",
        "controller_runtime_reconcile_errors_total{controller=\"test\"} 1",
        "controller_runtime_active_workers{controller=\"test\"} 0"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
}

TEST(BinderWorkQueue, DelayedKeysWaitForTheClockEarliestWins) {
  FakeClock c;
  runtime::WorkQueue q({}, c.fn());
  q.AddAfter("a", 4000ms);
  q.AddAfter("a", 2000ms);  // earlier: replaces
  q.AddAfter("a", 9000ms);  // later: ignored
  EXPECT_FALSE(q.Get(0ms));
  c.t += 1999ms;
  EXPECT_FALSE(q.Get(0ms));
  c.t += 1ms;
  EXPECT_EQ(q.Get(0ms).value_or(""), "a");
  q.Done("a");
  c.t += 10s;
  EXPECT_FALSE(q.Get(0ms));
}

TEST(BinderWorkQueue, FailureDelaysDoubleToTheMaxUntilForgotten) {
  FakeClock c;
  runtime::WorkQueue q({1000ms, 4000ms}, c.fn());
  std::vector<int64_t> delays;
  for (int i = 0; i < 5; ++i) {
    q.AddRateLimited("k");
    int64_t waited = 0;
    while (!q.Get(0ms)) {
      c.t += 100ms;
      waited += 100;
    }
    q.Done("k");
    delays.push_back(waited);
  }
  EXPECT_EQ(delays, (std::vector<int64_t>{1000, 2000, 4000, 4000, 4000}));
  q.Forget("k");
  EXPECT_EQ(q.Failures("k"), 0);
}

BindRequestObject Request(std::optional<int> limit, int attempts, std::string phase = "") {
  BindRequestObject b;
  b.backoff_limit = limit;
  b.failed_attempts = attempts;
  b.phase = std::move(phase);
  return b;
}

TEST(BinderBackoff, WithoutALimitTheFirstFailureIsFinal) {
  const FailureOutcome f = OnFailure(Request(std::nullopt, 0));
  EXPECT_EQ(f.failed_attempts, 0);
  EXPECT_FALSE(f.retry_after);
  EXPECT_FALSE(PendingRetry(Request(std::nullopt, 0, "Failed")));
}

TEST(BinderBackoff, RetriesAfterTwoToTheAttemptsWhileUnderTheLimit) {
  FailureOutcome f = OnFailure(Request(3, 0));
  EXPECT_EQ(f.failed_attempts, 1);
  EXPECT_EQ(f.retry_after, 1s);
  f = OnFailure(Request(3, 1));
  EXPECT_EQ(f.failed_attempts, 2);
  EXPECT_EQ(f.retry_after, 2s);
  f = OnFailure(Request(3, 2));  // reaches the limit: final (the scheduler deletes it)
  EXPECT_EQ(f.failed_attempts, 3);
  EXPECT_FALSE(f.retry_after);
  // After a restart the status alone tells what is still due.
  EXPECT_EQ(PendingRetry(Request(3, 1, "Failed")), 1s);
  EXPECT_EQ(PendingRetry(Request(3, 2, "Failed")), 2s);
  EXPECT_FALSE(PendingRetry(Request(3, 3, "Failed")));
  EXPECT_FALSE(PendingRetry(Request(3, 1, "Pending")));
}

TEST(BinderPlugins, RunInPriorityOrderAndRejectUnknownOrBadArguments) {
  std::atomic<bool> stop{false};
  k8s::ClusterConfig cfg;
  cfg.server = "http://127.0.0.1:1";
  k8s::ApiClient client(cfg);
  auto plugins = BuildPlugins(DefaultPluginConfig(), client, stop);
  ASSERT_TRUE(plugins.ok()) << plugins.error().message;
  std::vector<std::string> names;
  for (auto& p : *plugins) names.emplace_back(p->Name());
  EXPECT_EQ(names, (std::vector<std::string>{"volumebinding", "dynamicresources", "gpusharing"}));

  auto reordered = MergePluginConfig(DefaultPluginConfig(), R"({"gpusharing":{"priority":500}})");
  ASSERT_TRUE(reordered.ok());
  plugins = BuildPlugins(*reordered, client, stop);
  ASSERT_TRUE(plugins.ok());
  EXPECT_EQ((*plugins)[0]->Name(), "gpusharing");

  auto unknown = MergePluginConfig(DefaultPluginConfig(), R"({"magic":{}})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("unknown binder plugin \"magic\""), std::string::npos);
  auto bad = MergePluginConfig(DefaultPluginConfig(),
                               R"({"volumebinding":{"arguments":{"bindTimeoutSeconds":"-3"}}})");
  ASSERT_TRUE(bad.ok());
  auto built = BuildPlugins(*bad, client, stop);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.error().message.find("bindTimeoutSeconds"), std::string::npos);
  auto hami = MergePluginConfig(DefaultPluginConfig(),
                                R"({"hamicore":{"enabled":true},"gpusharing":{"enabled":false}})");
  ASSERT_TRUE(hami.ok());
  EXPECT_FALSE(BuildPlugins(*hami, client, stop).ok());  // hamicore needs gpusharing
}

constexpr const char* kPod = R"({
  "metadata": {"name": "p", "namespace": "ns", "uid": "u1", "resourceVersion": "7",
               "labels": {"runai-gpu-group": "g0", "runai-gpu-group/g1": "g1"},
               "annotations": {"runai/shared-gpu-configmap": "job-x-shared-gpu",
                               "gpu-fraction-container-name": "worker",
                               "gpu-fraction-num-devices": "2"},
               "ownerReferences": [{"name": "job"}]},
  "spec": {"initContainers": [{"name": "init"}],
           "containers": [{"name": "side"},
                          {"name": "worker", "env": [{"name": "NVIDIA_VISIBLE_DEVICES",
                            "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}]}],
           "tolerations": [{"key": "a", "operator": "Exists", "effect": "NoExecute",
                            "tolerationSeconds": 30}],
           "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}},
                       {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
                       {"name": "cfg", "configMap": {"name": "c"}}]},
  "status": {"phase": "Pending",
             "conditions": [{"type": "PodBound", "status": "False", "reason": "BindingError"}]}
})";

TEST(BinderObjects, ReadsWhatTheBindNeeds) {
  auto p = ParsePod(kPod);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->uid, "u1");
  EXPECT_EQ(p->owner_name, "job");
  EXPECT_EQ(p->GpuGroups(), (std::vector<std::string>{"g0", "g1"}));
  EXPECT_TRUE(p->MultiFraction());
  // An ephemeral volume's claim is "<pod>-<volume>".
  EXPECT_EQ(p->claim_names, (std::vector<std::string>{"data", "p-scratch"}));
  EXPECT_EQ(p->tolerations_json,
            R"([{"key":"a","operator":"Exists","effect":"NoExecute","tolerationSeconds":30}])");
  EXPECT_EQ(p->bound_reason, "BindingError");
  auto c = FractionContainer(*p);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->index, 1);
  EXPECT_FALSE(c->init);
  EXPECT_TRUE(c->container->visible_devices_from_config_map);
  auto names = SharingConfigMapNames(*p, *c);
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(names->capabilities, "job-x-shared-gpu-1");
  EXPECT_EQ(names->direct_env, "job-x-shared-gpu-1-evar");
}

TEST(BinderObjects, ErrorsNameThePodAndField) {
  auto p = ParsePod(kPod);
  ASSERT_TRUE(p.ok());
  p->annotations["gpu-fraction-container-name"] = "nope";
  auto c = FractionContainer(*p);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("ns/p"), std::string::npos);
  EXPECT_NE(c.error().message.find("no container named nope"), std::string::npos);
  p->annotations.erase("gpu-fraction-container-name");
  p->annotations.erase("runai/shared-gpu-configmap");
  auto first = FractionContainer(*p);
  ASSERT_TRUE(first.ok());
  auto names = SharingConfigMapNames(*p, *first);
  ASSERT_FALSE(names.ok());
  EXPECT_NE(names.error().message.find("runai/shared-gpu-configmap"), std::string::npos);
  EXPECT_FALSE(ParsePod(R"({"metadata":{"name":"x"}})").ok());
}

TEST(BinderReservation, PodNameIsStablePerNodeAndGroup) {
  const std::string a = ReservationPodName("node-1", "g");
  EXPECT_EQ(a, ReservationPodName("node-1", "g"));
  EXPECT_NE(a, ReservationPodName("node-2", "g"));
  EXPECT_EQ(a.rfind("gpu-reservation-", 0), 0u);
  EXPECT_EQ(a.size(), std::string("gpu-reservation-").size() + 16);
  // sha256("n/g") starts with these 8 bytes.
  EXPECT_EQ(ReservationPodName("n", "g"), "gpu-reservation-" + std::string("9bcc03168826c629"));
}

// The reservation pod's body, parsed.
struct ReservationPod {
  doc::Document d;
  doc::Node pod, container;
};
ReservationPod BodyOf(const ReservationOptions& o) {
  auto d = doc::ParseJson(ReservationPodBody(o, "gpu-reservation-x", "node-1", "g-1", "[]"));
  EXPECT_TRUE(d.ok());
  ReservationPod r{std::move(*d), {}, {}};
  r.pod = r.d.Roots()[0];
  r.container = r.pod["spec"]["containers"][size_t{0}];
  return r;
}

// What the `restricted` Pod Security level checks of a pod with one container.
void ExpectRestricted(const ReservationPod& r) {
  const doc::Node psc = r.pod["spec"]["securityContext"], csc = r.container["securityContext"];
  EXPECT_TRUE(psc["runAsNonRoot"].Scalar() == "true" || csc["runAsNonRoot"].Scalar() == "true");
  const std::string_view user =
      csc["runAsUser"].IsDefined() ? csc["runAsUser"].Scalar() : psc["runAsUser"].Scalar();
  EXPECT_FALSE(user.empty() || user == "0") << user;
  EXPECT_EQ(csc["allowPrivilegeEscalation"].Scalar(), "false");
  EXPECT_EQ(csc["capabilities"]["drop"].size(), 1u);
  EXPECT_EQ(csc["capabilities"]["drop"][size_t{0}].Scalar(), "ALL");
  EXPECT_FALSE(csc["capabilities"]["add"].IsDefined());
  EXPECT_FALSE(csc["privileged"].Scalar() == "true");
  EXPECT_TRUE(psc["seccompProfile"]["type"].Scalar() == "RuntimeDefault" ||
              csc["seccompProfile"]["type"].Scalar() == "RuntimeDefault");
}

// A binder in FIPS mode runs its reservation pods' program in FIPS mode too.
TEST(BinderReservation, TheProgramRunsInTheBindersFipsMode) {
  ReservationOptions o;
  EXPECT_EQ(BodyOf(o).container["args"].size(), 1u);
  o.fips_mode = true;
  const ReservationPod r = BodyOf(o);
  ASSERT_EQ(r.container["args"].size(), 2u);
  EXPECT_EQ(r.container["args"][size_t{0}].Scalar(), "resource-reservation");
  EXPECT_EQ(r.container["args"][size_t{1}].Scalar(), "--fips-mode");
}

TEST(BinderReservation, ThePodIsRestrictedAndSmallByDefault) {
  ReservationOptions o;
  const ReservationPod r = BodyOf(o);
  ExpectRestricted(r);
  EXPECT_EQ(r.pod["spec"]["securityContext"]["runAsUser"].Scalar(), "65532");
  const doc::Node res = r.container["resources"];
  EXPECT_EQ(res["limits"]["nvidia.com/gpu"].Scalar(), "1");
  EXPECT_EQ(res["requests"]["nvidia.com/gpu"].Scalar(), "1");
  EXPECT_EQ(res["requests"]["cpu"].Scalar(), "10m");
  EXPECT_EQ(res["requests"]["memory"].Scalar(), "64Mi");
  EXPECT_EQ(res["limits"]["cpu"].Scalar(), "100m");
  EXPECT_EQ(res["limits"]["memory"].Scalar(), "256Mi");
  EXPECT_EQ(r.container["args"][size_t{0}].Scalar(), "resource-reservation");
  EXPECT_EQ(r.pod["metadata"]["namespace"].Scalar(), "kai-resource-reservation");
  EXPECT_EQ(r.pod["spec"]["nodeName"].Scalar(), "node-1");
  o.fake_gpu_nodes = true;  // the sleeping test pod is restricted too
  ExpectRestricted(BodyOf(o));
}

TEST(BinderReservation, TheFlagsReplaceResourcesAndSecurityContextsAsKais) {
  ReservationOptions o;
  const Status s = ApplyReservationPodFlags(
      {R"({"requests":{"cpu":"50m","nvidia.com/gpu":"4"},"limits":{"memory":"1Gi"}})",
       R"({"runAsNonRoot":true, "runAsUser":1000, "seccompProfile":{"type":"RuntimeDefault"}})",
       ""},
      o.shape);
  ASSERT_TRUE(s.ok()) << s.error().message;
  const ReservationPod r = BodyOf(o);
  const doc::Node res = r.container["resources"];
  EXPECT_EQ(res["requests"]["cpu"].Scalar(), "50m");
  EXPECT_FALSE(res["requests"]["memory"].IsDefined());  // the flag's requests replace the default
  EXPECT_EQ(res["requests"]["nvidia.com/gpu"].Scalar(), "1");  // always one GPU
  EXPECT_EQ(res["limits"]["memory"].Scalar(), "1Gi");
  EXPECT_FALSE(res["limits"]["cpu"].IsDefined());
  EXPECT_EQ(r.pod["spec"]["securityContext"]["runAsUser"].Scalar(), "1000");
  ExpectRestricted(r);  // the container's default stays
  EXPECT_EQ(r.container["securityContext"]["runAsUser"].Scalar(), "65532");
}

TEST(BinderReservation, ABadFlagIsAnErrorNamingTheFlagAndField) {
  const auto error = [](ReservationPodFlags f) {
    ReservationPodShape shape;
    const Status s = ApplyReservationPodFlags(f, shape);
    EXPECT_EQ(shape.requests, ReservationPodShape{}.requests) << "unchanged on an error";
    return s.ok() ? std::string() : s.error().message;
  };
  EXPECT_NE(error({R"({"requests":{"cpu":"ten"}})", "", ""})
                .find("--resource-reservation-pod-resources: requests.cpu: "),
            std::string::npos);
  EXPECT_NE(error({R"({"requests":{"cpu":"-1"}})", "", ""}).find("must not be negative"),
            std::string::npos);
  EXPECT_NE(error({R"({"request":{}})", "", ""}).find("unknown field \"request\""),
            std::string::npos);
  EXPECT_NE(error({R"({"limits":{"memory":1}})", "", ""}).find("limits.memory"), std::string::npos);
  EXPECT_NE(error({"", "[1]", ""}).find("--resource-reservation-pod-security-context: must be"),
            std::string::npos);
  EXPECT_NE(error({"", "", R"({"a":1} {"b":2})"})
                .find("--resource-reservation-container-security-context: not one JSON document"),
            std::string::npos);
  EXPECT_EQ(error({"", "", ""}), "");
}

}  // namespace
}  // namespace kai::binder
