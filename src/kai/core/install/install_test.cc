#include "kai/core/install/install.h"

#include <gtest/gtest.h>

#include <set>

#include "kai/core/k8s/doc.h"

namespace kai::install {
namespace {

constexpr std::string_view kNs = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kai\n";

std::vector<EmbeddedFile> Files(std::initializer_list<EmbeddedFile> f) { return f; }

TEST(Install, AnObjectTwoFilesHoldIsKeptOnce) {
  const std::string rbac = std::string(kNs) +
                           "---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: a\n"
                           "  namespace: kai\n";
  const auto files = Files({{"deploy/rbac/a.yaml", rbac}, {"deploy/rbac/b.yaml", kNs}});
  auto m = CollectManifests(files, {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[0].kind, "Namespace");
  EXPECT_EQ((*m)[0].source, "deploy/rbac/a.yaml");
}

TEST(Install, TwoDifferentTextsForOneObjectNameBothFiles) {
  const std::string other = std::string(kNs) + "  labels: {x: y}\n";
  const auto files = Files({{"deploy/rbac/a.yaml", kNs}, {"deploy/rbac/b.yaml", other}});
  auto m = CollectManifests(files, {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message,
            "deploy/rbac/b.yaml: Namespace kai differs from the one in deploy/rbac/a.yaml");
}

TEST(Install, KindsGoInTheOrderTheServerAcceptsInOnePass) {
  const auto files =
      Files({{"deploy/crds/q.yaml",
              "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"
              "  name: queues.scheduling.run.ai\n"},
             {"deploy/defaults/q.yaml",
              "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n"
              "  name: default-queue\n"},
             {"deploy/install/d.yaml",
              "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n"
              "  namespace: kai\n"},
             {"deploy/rbac/r.yaml", kNs}});
  InstallOptions o;
  o.extra_documents = {
      "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
      "metadata:\n  name: w\n"};
  auto m = CollectManifests(files, o);
  ASSERT_TRUE(m.ok()) << m.error().message;
  std::vector<std::string> kinds;
  for (const auto& x : *m) kinds.push_back(x.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"Namespace", "CustomResourceDefinition", "Deployment",
                                             "ValidatingWebhookConfiguration"}));
  o.crds = false;
  EXPECT_EQ(CollectManifests(files, o)->size(), 3u);
  o.defaults_only = true;  // the default queues and shard, for once the CRDs serve
  auto defaults = CollectManifests(files, o);
  ASSERT_EQ(defaults->size(), 1u);
  EXPECT_EQ((*defaults)[0].kind, "Queue");
}

TEST(Install, TheImageReplacesTheDefaultInDeploymentsOnly) {
  const auto files =
      Files({{"deploy/install/d.yaml",
              "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  x:\n"
              "    image: kai:latest\n    args: [--resource-reservation-pod-image=kai:latest]\n"}});
  InstallOptions o;
  o.image = "registry.example.com/kai:v1.2@sha256:abc";
  auto y = RenderInstall(files, o);
  ASSERT_TRUE(y.ok()) << y.error().message;
  EXPECT_NE(y->find("image: registry.example.com/kai:v1.2@sha256:abc\n"), std::string::npos);
  EXPECT_NE(y->find("-image=registry.example.com/kai:v1.2@sha256:abc]"), std::string::npos);
  EXPECT_EQ(y->find("kai:latest"), std::string::npos);
  o.image = "kai:v1 # no";
  auto bad = RenderInstall(files, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "--image: \"kai:v1 # no\" is not an image reference");
}

TEST(Install, ADocumentWithoutANameIsAnErrorNamingTheFile) {
  const auto files = Files({{"deploy/rbac/x.yaml", "apiVersion: v1\nkind: ServiceAccount\n"}});
  auto m = CollectManifests(files, {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message,
            "deploy/rbac/x.yaml: an object without apiVersion, kind or metadata.name");
}

// The real deploy/: it renders, every document parses, and every Deployment runs as a
// ServiceAccount the stream creates.
TEST(Install, TheEmbeddedInstallationIsComplete) {
  auto m = CollectManifests(EmbeddedDeployFiles(), {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  std::set<std::string> accounts, deployments, kinds;
  for (const Manifest& x : *m) {
    kinds.insert(x.kind);
    if (x.kind == "ServiceAccount") accounts.insert(x.ns + "/" + x.name);
    if (x.kind != "Deployment") continue;
    auto d = doc::ParseYaml(x.text);
    ASSERT_TRUE(d.ok());
    const auto spec = d->Roots()[0]["spec"]["template"]["spec"];
    deployments.insert(x.ns + "/" + std::string(spec["serviceAccountName"].Scalar()));
    EXPECT_TRUE(spec["containers"][0]["resources"]["requests"].IsMap()) << x.name;
    EXPECT_TRUE(spec["containers"][0]["readinessProbe"].IsMap()) << x.name;
  }
  for (const std::string& sa : deployments) EXPECT_TRUE(accounts.count(sa)) << sa;
  EXPECT_GE(deployments.size(), 4u);
  for (const char* k : {"Namespace", "CustomResourceDefinition", "ClusterRole", "Deployment",
                        "Service", "PriorityClass"}) {
    EXPECT_TRUE(kinds.count(k)) << k;
  }
  // No object of kai's own CRDs: kubectl could not map it before the CRDs it installs serve.
  EXPECT_FALSE(kinds.count("Queue") || kinds.count("SchedulingShard"));
  auto defaults = DefaultObjects(EmbeddedDeployFiles());
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  std::vector<std::string> names;
  for (const Manifest& x : *defaults) names.push_back(x.kind + "/" + x.name);
  EXPECT_EQ(names, (std::vector<std::string>{"Queue/default-parent-queue", "Queue/default-queue",
                                             "SchedulingShard/default"}));
}

TEST(Install, TheTlsSecretHoldsThePairAndTheCa) {
  const std::string y = TlsSecretYaml("kai-scheduler", "tls", "CERT", "KEY", "CA");
  EXPECT_EQ(y,
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: tls\n  namespace: kai-scheduler\n"
            "type: kubernetes.io/tls\ndata:\n  tls.crt: Q0VSVA==\n  tls.key: S0VZ\n"
            "  ca.crt: Q0E=\n");
}

}  // namespace
}  // namespace kai::install
