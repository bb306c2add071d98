#include "kai/admission/review.h"

#include <gtest/gtest.h>

namespace kai::admission {
namespace {

constexpr const char* kReview = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
  "request":{"uid":"u-1","kind":{"group":"","version":"v1","kind":"Pod"},"operation":"UPDATE",
  "namespace":"team-a","name":"p","object":{"metadata":{"name":"p"}},
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
  const std::string y = WebhookConfigYaml("https://10.0.0.1:9443/", "PEM");
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
  const std::string y = WebhookServiceConfigYaml({"kai-scheduler", "kai-admission", 443}, "PEM");
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

}  // namespace
}  // namespace kai::admission
