#include "kai/core/admission/review.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace kai::admission {
namespace {

constexpr const char* kReview = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
  "request":{"uid":"u-1","kind":{"group":"","version":"v1","kind":"Pod"},"operation":"UPDATE",
  "namespace":"team-a","name":"p","object":{"metadata":{"name":"p"}},
  "userInfo":{"username":"system:serviceaccount:kai-scheduler:kai-binder","groups":["x"]},
  "oldObject":{"metadata":{"name":"p","labels":{"x":"y"}}}}})";

TEST(AdmissionReview, ReadsTheRequestAndKeepsItsObjectsAlive) {
  auto r = ParseReview(kReview);
  ASSERT_TRUE(r.ok()) << r.error().message;
  Review moved = std::move(r.value());  // the objects still point into the (moved) review
  EXPECT_EQ(moved.uid, "u-1");
  EXPECT_EQ(moved.kind, "Pod");
  EXPECT_EQ(moved.request.operation, Operation::kUpdate);
  EXPECT_EQ(moved.request.ns, "team-a");
  EXPECT_EQ(moved.request.object["metadata"]["name"].Scalar(), "p");
  EXPECT_EQ(moved.request.old_object["metadata"]["labels"]["x"].Scalar(), "y");
  EXPECT_EQ(moved.request.username, "system:serviceaccount:kai-scheduler:kai-binder");
}

TEST(AdmissionReview, ErrorsNameTheField) {
  EXPECT_NE(ParseReview("{").error().message.find("AdmissionReview"), std::string::npos);
  EXPECT_NE(ParseReview(R"({"request":{}})").error().message.find("request.uid"),
            std::string::npos);
  auto bad = ParseReview(R"({"request":{"uid":"u","operation":"CONNECT"}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("request.operation"), std::string::npos);
}

TEST(AdmissionReview, AnswersADenialWithItsMessageAndAPatchAsBase64) {
  EXPECT_EQ(ReviewResponse("u", Verdict::Deny("Pod a/b: f: rule")),
            R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":)"
            R"({"uid":"u","allowed":false,"status":{"code":403,"reason":"Forbidden",)"
            R"("message":"Pod a/b: f: rule"}}})");
  Verdict v;
  v.patch.push_back({"add", "/metadata/labels", "{}"});
  v.warnings.push_back("careful");
  const std::string out = ReviewResponse("u", v);
  EXPECT_NE(out.find(R"("allowed":true)"), std::string::npos);
  EXPECT_NE(out.find(R"("patchType":"JSONPatch","patch":")" + Base64(PatchJson(v.patch)) + "\""),
            std::string::npos);
  EXPECT_NE(out.find(R"("warnings":["careful"])"), std::string::npos);
}

TEST(AdmissionReview, Base64PadsAsRfc4648) {
  EXPECT_EQ(Base64(""), "");
  EXPECT_EQ(Base64("f"), "Zg==");
  EXPECT_EQ(Base64("fo"), "Zm8=");
  EXPECT_EQ(Base64("foo"), "Zm9v");
  EXPECT_EQ(Base64("foobar"), "Zm9vYmFy");
}

TEST(AdmissionReview, TheWebhookConfigurationNamesEveryRoute) {
  const auto config = WebhookConfigYaml("https://10.0.0.1:9443/", "PEM", "kai-scheduler");
  ASSERT_TRUE(config.ok()) << config.error().message;
  const std::string& y = *config;
  for (const char* route :
       {"/mutate-pod", "/validate-pod", "/validate-queue", "/validate-podgroup"}) {
    EXPECT_NE(y.find(std::string("url: https://10.0.0.1:9443") + route + "\n"), std::string::npos)
        << route;
  }
  EXPECT_NE(y.find("caBundle: " + Base64("PEM")), std::string::npos);
  EXPECT_NE(y.find("kind: MutatingWebhookConfiguration"), std::string::npos);
  EXPECT_NE(y.find("kind: ValidatingWebhookConfiguration"), std::string::npos);
  EXPECT_NE(
      y.find("values: [kube-system, kai-scheduler, kai-resource-reservation, kai-scale-adjust]"),
      std::string::npos);
}

TEST(AdmissionReview, TheServiceConfigurationNamesTheServiceAndEveryRoute) {
  const auto config =
      WebhookServiceConfigYaml({"kai-scheduler", "kai-admission", 443}, "PEM", "kai-scheduler");
  ASSERT_TRUE(config.ok()) << config.error().message;
  const std::string& y = *config;
  for (const char* route :
       {"/mutate-pod", "/validate-pod", "/validate-queue", "/validate-podgroup"}) {
    EXPECT_NE(y.find(std::string("    service:\n      namespace: kai-scheduler\n      name: "
                                 "kai-admission\n      port: 443\n      path: ") +
                     route + "\n"),
              std::string::npos)
        << route;
  }
  EXPECT_EQ(y.find("url:"), std::string::npos);
}

// The hooks of one configuration document, by name.
std::map<std::string, doc::Node> HooksOf(const doc::Document& d, std::string_view kind) {
  std::map<std::string, doc::Node> hooks;
  for (const doc::Node& root : d.Roots()) {
    if (root["kind"].Scalar() != kind) continue;
    const doc::Node list = root["webhooks"];
    for (size_t i = 0; i < list.size(); ++i) hooks[std::string(list[i]["name"].Scalar())] = list[i];
  }
  return hooks;
}

TEST(AdmissionReview, PodHooksAreCalledOnlyForPodsOfKaisSchedulerAsKais) {
  const auto config = WebhookConfigYaml("https://10.0.0.1:9443", "PEM", "gpu-scheduler");
  ASSERT_TRUE(config.ok()) << config.error().message;
  auto d = doc::ParseYaml(*config);
  ASSERT_TRUE(d.ok()) << d.error().message;
  auto mutating = HooksOf(*d, "MutatingWebhookConfiguration");
  auto validating = HooksOf(*d, "ValidatingWebhookConfiguration");
  ASSERT_EQ(mutating.size(), 1u);
  ASSERT_EQ(validating.size(), 3u);
  for (const doc::Node& pod_hook :
       {mutating["pods.mutate.kai.scheduler"], validating["pods.validate.kai.scheduler"]}) {
    const doc::Node cond = pod_hook["matchConditions"][size_t{0}];
    EXPECT_EQ(cond["name"].Scalar(), "scheduler-name-match");
    EXPECT_EQ(cond["expression"].Scalar(), "object.spec.schedulerName == 'gpu-scheduler'");
    EXPECT_EQ(pod_hook["matchConditions"].size(), 1u);
    const doc::Node excluded = pod_hook["namespaceSelector"]["matchExpressions"][size_t{0}];
    EXPECT_EQ(excluded["key"].Scalar(), "kubernetes.io/metadata.name");
    EXPECT_EQ(excluded["operator"].Scalar(), "NotIn");
    std::vector<std::string> names;
    for (size_t i = 0; i < excluded["values"].size(); ++i) {
      names.emplace_back(excluded["values"][i].Scalar());
    }
    EXPECT_EQ(names, (std::vector<std::string>{"kube-system", "kai-scheduler",
                                               "kai-resource-reservation", "kai-scale-adjust"}));
  }
  EXPECT_EQ(mutating["pods.mutate.kai.scheduler"]["reinvocationPolicy"].Scalar(), "IfNeeded");
  EXPECT_FALSE(validating["pods.validate.kai.scheduler"]["reinvocationPolicy"].IsDefined());
  // Queues and PodGroups are kai's own kinds: every one of them is checked, in any namespace.
  for (const char* name : {"queues.validate.kai.scheduler", "podgroups.validate.kai.scheduler"}) {
    EXPECT_FALSE(validating[name]["matchConditions"].IsDefined()) << name;
    EXPECT_FALSE(validating[name]["namespaceSelector"].IsDefined()) << name;
  }
  for (auto* hooks : {&mutating, &validating}) {
    for (const auto& [name, h] : *hooks) {
      EXPECT_EQ(h["failurePolicy"].Scalar(), "Fail") << name;
      EXPECT_EQ(h["timeoutSeconds"].Scalar(), "10") << name;
      EXPECT_EQ(h["sideEffects"].Scalar(), "None") << name;
    }
  }
}

TEST(AdmissionReview, ASchedulerNameNoPodCanCarryIsAnErrorNamingIt) {
  for (const char* bad : {"", "Kai", "kai' || true || '", "-kai", "kai-", "a b"}) {
    const auto config = WebhookConfigYaml("https://10.0.0.1:9443", "PEM", bad);
    ASSERT_FALSE(config.ok()) << bad;
    EXPECT_NE(config.error().message.find(std::string("scheduler name \"") + bad + "\""),
              std::string::npos)
        << config.error().message;
  }
  EXPECT_FALSE(WebhookServiceConfigYaml({}, "PEM", std::string(254, 'a')).ok());
  EXPECT_TRUE(WebhookServiceConfigYaml({}, "PEM", "kai.scheduler-2").ok());
}

}  // namespace
}  // namespace kai::admission
