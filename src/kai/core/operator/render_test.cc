#include "kai/core/operator/render.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "kai/core/operator/json_tree.h"

namespace kai::op {
namespace {

std::string ConfigJson(const std::string& spec) {
  return R"({"apiVersion":"kai.scheduler/v1","kind":"Config",)"
         R"("metadata":{"name":"kai-config","uid":"c-1","generation":1},"spec":)" +
         spec + "}";
}

struct World {
  Rendered r;
  const Desired* Find(std::string_view kind, std::string_view name) const {
    for (const Desired& d : r.objects) {
      if (d.kind == kind && d.name == name) return &d;
    }
    return nullptr;
  }
  JsonDoc Doc(std::string_view kind, std::string_view name) const {
    const Desired* d = Find(kind, name);
    EXPECT_NE(d, nullptr) << kind << " " << name;
    JsonDoc doc;
    if (d != nullptr) doc.Parse(d->json.c_str());
    return doc;
  }
  std::vector<std::string> Args(std::string_view deployment) const {
    JsonDoc d = Doc("Deployment", deployment);
    std::vector<std::string> out;
    const Json* args = FindPath(d, {"spec", "template", "spec", "containers"});
    if (args == nullptr || !args->IsArray() || args->Empty()) return out;
    const Json* a = op::Find((*args)[0], "args");
    for (const auto& v : a->GetArray()) out.emplace_back(v.GetString());
    return out;
  }
};

World RenderOf(const std::string& spec, std::vector<Shard> shards = {{"default", "s-1", "", ""}}) {
  RenderInput in;
  in.config_json = ConfigJson(spec);
  in.shards = std::move(shards);
  in.tls = Tls{"CA", "CERT", "KEY"};
  in.default_image = "registry.example/kai:1.0";
  auto r = Render(install::EmbeddedDeployFiles(), in);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return {r.ok() ? std::move(*r) : Rendered{}};
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string Str(const JsonDoc& d, std::initializer_list<std::string_view> path) {
  const Json* v = FindPath(d, path);
  return v && v->IsString() ? v->GetString() : "";
}

TEST(OperatorRender, ABudgetIsMadeOnlyWhenEnabledAndMoreThanOneReplicaRuns) {
  const std::string budget = R"("podDisruptionBudget":{"enabled":true,"maxUnavailable":2})";
  const World w = RenderOf(R"({"global":{"replicaCount":3},)"
                           R"("scheduler":{"service":{)" +
                           budget +
                           R"(}},)"
                           R"("admission":{"service":{)" +
                           budget +
                           R"(}},)"
                           R"("podGrouper":{"replicas":1,"service":{)" +
                           budget + "}}}");
  for (const char* name : {"kai-scheduler-default", "kai-admission"}) {
    const JsonDoc d = w.Doc("PodDisruptionBudget", name);
    EXPECT_EQ(FindPath(d, {"spec", "maxUnavailable"})->GetInt64(), 2) << name;
    EXPECT_EQ(FindPath(d, {"spec", "minAvailable"}), nullptr) << name;
    EXPECT_EQ(Str(d, {"spec", "selector", "matchLabels", "app.kubernetes.io/name"}), name);
  }
  const JsonDoc shard_budget = w.Doc("PodDisruptionBudget", "kai-scheduler-default");
  EXPECT_STREQ(
      FindPath(shard_budget, {"metadata", "ownerReferences"})->GetArray()[0]["kind"].GetString(),
      "Config");
  EXPECT_EQ(w.Find("PodDisruptionBudget", "kai-podgrouper"), nullptr);  // one replica

  const World off = RenderOf(R"({"global":{"replicaCount":3}})");
  EXPECT_EQ(off.Find("PodDisruptionBudget", "kai-admission"), nullptr);  // not enabled
}

TEST(OperatorRender, AnEmptyConfigDeploysEveryComponentOwnedByIt) {
  const World w = RenderOf("{}");
  for (const char* name : {"kai-binder", "kai-podgrouper", "kai-controllers", "kai-admission",
                           "kai-scale-adjuster", "kai-scheduler-default"}) {
    ASSERT_NE(w.Find("Deployment", name), nullptr) << name;
  }
  EXPECT_EQ(w.Find("Deployment", "kai-scheduler"), nullptr);  // one per shard instead
  ASSERT_NE(w.Find("Secret", "kai-admission-tls"), nullptr);
  ASSERT_NE(w.Find("ValidatingWebhookConfiguration", "kai-admission"), nullptr);
  ASSERT_NE(w.Find("MutatingWebhookConfiguration", "kai-admission"), nullptr);
  const JsonDoc binder = w.Doc("Deployment", "kai-binder");
  EXPECT_EQ(Str(binder, {"metadata", "namespace"}), "kai-scheduler");
  const Json* owner = FindPath(binder, {"metadata", "ownerReferences"});
  ASSERT_TRUE(owner && owner->IsArray() && owner->Size() == 1);
  EXPECT_EQ(Str(binder, {"metadata", "labels", "app.kubernetes.io/managed-by"}), "kai-operator");
  EXPECT_EQ(std::string((*owner)[0]["kind"].GetString()), "Config");
  EXPECT_EQ(std::string((*owner)[0]["uid"].GetString()), "c-1");
  const JsonDoc sched = w.Doc("Deployment", "kai-scheduler-default");
  EXPECT_EQ(
      std::string(
          FindPath(sched, {"metadata", "ownerReferences"})->GetArray()[0]["kind"].GetString()),
      "Config");  // helm uninstall keeps the shard, not its scheduler
  const Json* image = FindPath(sched, {"spec", "template", "spec", "containers"});
  EXPECT_EQ(std::string((*image)[0]["image"].GetString()), "registry.example/kai:1.0");
  // Namespaces and priority classes outlive the Config.
  for (const Desired& d : w.r.objects) {
    if (d.kind == "Namespace" || d.kind == "PriorityClass") {
      EXPECT_FALSE(d.owned) << d.kind << " " << d.name;
      EXPECT_EQ(d.json.find("ownerReferences"), std::string::npos) << d.name;
    }
  }
  // Namespaces first, the webhook configurations last; each object once.
  EXPECT_EQ(w.r.objects.front().kind, "Namespace");
  EXPECT_NE(w.r.objects.back().kind.find("WebhookConfiguration"), std::string::npos);
  for (size_t i = 0; i < w.r.objects.size(); ++i) {
    for (size_t j = i + 1; j < w.r.objects.size(); ++j) {
      const Desired &a = w.r.objects[i], &b = w.r.objects[j];
      EXPECT_FALSE(a.kind == b.kind && a.ns == b.ns && a.name == b.name) << a.kind << " " << a.name;
    }
  }
  EXPECT_TRUE(w.r.ignored.empty());
}

TEST(OperatorRender, TheConfigsSectionsChangeTheDeployments) {
  const World w = RenderOf(R"({
    "global": {"nodeSelector": {"gpu-node": "true"}, "replicaCount": 2,
               "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "true",
                                "effect": "NoSchedule"}],
               "priorityClassName": "system-cluster-critical", "imagesPullSecret": "regcred",
               "securityContext": {"runAsUser": 10000}, "jsonLog": true,
               "queueLabelKey": "team.example/queue"},
    "binder": {"replicas": 3, "maxConcurrentReconciles": 20,
               "service": {"image": {"repository": "nvcr.io/nvidia", "name": "kai", "tag": "0.18",
                                     "pullPolicy": "Always"},
                           "resources": {"requests": {"cpu": "2"}, "limits": {"memory": "4Gi"}}}},
    "admission": {"gpuSharing": true},
    "queueController": {"limitDescendentsOverSubscription": "block"},
    "podGrouper": {"args": {"gangScheduleKnative": false}}})");
  const JsonDoc binder = w.Doc("Deployment", "kai-binder");
  EXPECT_EQ(FindPath(binder, {"spec", "replicas"})->GetInt64(), 3);
  EXPECT_EQ(w.Doc("Deployment", "kai-podgrouper")["spec"]["replicas"].GetInt64(), 2);
  const Json& pod = binder["spec"]["template"]["spec"];
  // A string that reads as a boolean stays a string (the API server refuses a boolean there).
  ASSERT_TRUE(pod["nodeSelector"]["gpu-node"].IsString());
  ASSERT_TRUE(pod["tolerations"][0]["value"].IsString());
  EXPECT_EQ(std::string(pod["priorityClassName"].GetString()), "system-cluster-critical");
  EXPECT_EQ(std::string(pod["imagePullSecrets"][0]["name"].GetString()), "regcred");
  const Json& c = pod["containers"][0];
  EXPECT_EQ(std::string(c["image"].GetString()), "nvcr.io/nvidia/kai:0.18");
  EXPECT_EQ(std::string(c["imagePullPolicy"].GetString()), "Always");
  EXPECT_EQ(std::string(c["resources"]["requests"]["cpu"].GetString()), "2");
  EXPECT_FALSE(c["resources"].HasMember("limits") && c["resources"]["limits"].HasMember("cpu"));
  EXPECT_EQ(c["securityContext"]["runAsUser"].GetInt64(), 10000);
  EXPECT_TRUE(c["securityContext"]["readOnlyRootFilesystem"].GetBool());  // deploy/'s kept
  const auto binder_args = w.Args("kai-binder");
  EXPECT_TRUE(Has(binder_args, "--max-concurrent=20"));
  EXPECT_TRUE(Has(binder_args, "--log-json"));
  EXPECT_TRUE(Has(w.Args("kai-admission"), "--gpu-sharing-enabled=true"));
  EXPECT_TRUE(Has(w.Args("kai-admission"), "--limit-descendents-over-subscription=block"));
  EXPECT_TRUE(Has(w.Args("kai-podgrouper"), "--knative-gang-schedule=false"));
  EXPECT_TRUE(Has(w.Args("kai-podgrouper"), "--queue-label-key=team.example/queue"));
  EXPECT_TRUE(Has(w.Args("kai-scheduler-default"), "--queue-label-key=team.example/queue"));
}

// KAI's operator: the binder's --plugins are spec.binder.plugins with volumeBindingTimeoutSeconds
// and cdiEnabled as default arguments; a hamicore plugin turned on gives admission
// --hami-core-enabled; the pod grouper's Karta fallback is passed on.
TEST(OperatorRender, BinderPluginsHamiCoreAndTheKartaFallbackArePassedOn) {
  const World w = RenderOf(R"({
    "binder": {"volumeBindingTimeoutSeconds": 30, "cdiEnabled": true,
               "plugins": {"hamicore": {"enabled": true},
                           "dynamicresources": {"arguments": {"bindTimeoutSeconds": "45"}}}},
    "podGrouper": {"args": {"genericKartaFallback": false}}})");
  const auto binder = w.Args("kai-binder");
  const auto plugins = std::find_if(binder.begin(), binder.end(), [](const std::string& a) {
    return a.starts_with("--plugins=");
  });
  ASSERT_NE(plugins, binder.end());
  JsonDoc d;
  d.Parse(plugins->c_str() + std::string_view("--plugins=").size());
  ASSERT_FALSE(d.HasParseError()) << *plugins;
  EXPECT_TRUE(d["hamicore"]["enabled"].GetBool());
  EXPECT_EQ(std::string(d["volumebinding"]["arguments"]["bindTimeoutSeconds"].GetString()), "30");
  EXPECT_EQ(std::string(d["dynamicresources"]["arguments"]["bindTimeoutSeconds"].GetString()),
            "45");  // the plugin's own arguments replace the defaults, as in KAI
  EXPECT_EQ(std::string(d["gpusharing"]["arguments"]["cdiEnabled"].GetString()), "true");
  EXPECT_TRUE(Has(w.Args("kai-admission"), "--hami-core-enabled=true"));
  EXPECT_TRUE(Has(w.Args("kai-podgrouper"), "--generic-karta-fallback=false"));
  EXPECT_TRUE(w.r.ignored.empty());
  // Nothing set: the binder's defaults (KAI's), no flag.
  const World plain = RenderOf("{}");
  for (const std::string& a : plain.Args("kai-binder")) EXPECT_FALSE(a.starts_with("--plugins"));
  EXPECT_FALSE(Has(plain.Args("kai-admission"), "--hami-core-enabled=true"));
}

TEST(OperatorRender, AnEmptyRuntimeClassIsPassedAsNone) {
  // The chart's --set admission.gpuFractionRuntimeClassName=null: fractional pods get no
  // runtimeClassName; an empty flag value, not a bare flag that would swallow the next one.
  const World w = RenderOf(R"({"admission": {"gpuFractionRuntimeClassName": ""}})");
  EXPECT_TRUE(Has(w.Args("kai-admission"), "--gpu-fraction-runtime-class-name="));
}

TEST(OperatorRender, ATurnedOffComponentIsNotRendered) {
  const World w = RenderOf(R"({"podGrouper": {"service": {"enabled": false}},
                               "queueController": {"service": {"enabled": false}}})");
  EXPECT_EQ(w.Find("Deployment", "kai-podgrouper"), nullptr);
  EXPECT_EQ(w.Find("ServiceAccount", "kai-podgrouper"), nullptr);
  // kai controllers serves the pod group controller too, which is still on.
  EXPECT_NE(w.Find("Deployment", "kai-controllers"), nullptr);
  const World none = RenderOf(R"({"admission": {"service": {"enabled": false}}})");
  EXPECT_EQ(none.Find("Secret", "kai-admission-tls"), nullptr);
  EXPECT_EQ(none.Find("ValidatingWebhookConfiguration", "kai-admission"), nullptr);
}

TEST(OperatorRender, AnotherNamespaceMovesEveryObjectAndLease) {
  const World w = RenderOf(R"({"namespace": "kai-system"})");
  const JsonDoc binder = w.Doc("Deployment", "kai-binder");
  EXPECT_EQ(Str(binder, {"metadata", "namespace"}), "kai-system");
  EXPECT_TRUE(Has(w.Args("kai-binder"), "--leader-elect-namespace=kai-system"));
  EXPECT_TRUE(Has(w.Args("kai-admission"),
                  "--nvfractions-devices-writer=system:serviceaccount:kai-system:kai-binder"));
  const JsonDoc binding = w.Doc("ClusterRoleBinding", "kai-binder");
  EXPECT_EQ(std::string(binding["subjects"][0]["namespace"].GetString()), "kai-system");
  EXPECT_NE(w.Find("Namespace", "kai-system"), nullptr);
  EXPECT_EQ(w.Find("Namespace", "kai-scheduler"), nullptr);
  const JsonDoc hooks = w.Doc("ValidatingWebhookConfiguration", "kai-admission");
  EXPECT_EQ(std::string(hooks["webhooks"][0]["clientConfig"]["service"]["namespace"].GetString()),
            "kai-system");
}

TEST(OperatorRender, EachShardGetsItsSchedulerAndLease) {
  const World w = RenderOf("{}", {{"default", "s-1", "", ""}, {"pool-a", "s-2", "a", ""}});
  const auto a = w.Args("kai-scheduler-pool-a");
  EXPECT_TRUE(Has(a, "--shard=pool-a"));
  EXPECT_TRUE(Has(a, "--leader-elect-id=kai-scheduler-a"));
  EXPECT_TRUE(Has(w.Args("kai-scheduler-default"), "--leader-elect-id=kai-scheduler"));
  const JsonDoc d = w.Doc("Deployment", "kai-scheduler-pool-a");
  EXPECT_EQ(std::string(d["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"].GetString()),
            "kai-scheduler-pool-a");
  EXPECT_EQ(std::string(
                d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"].GetString()),
            "kai-scheduler-pool-a");
  EXPECT_EQ(RenderOf("{}", {}).Find("Deployment", "kai-scheduler-default"), nullptr);
}

TEST(OperatorRender, WhatCannotBeAppliedIsAnErrorOrListed) {
  RenderInput in;
  in.config_json = ConfigJson(R"({"binder": {"replicas": "three"}})");
  auto r = Render(install::EmbeddedDeployFiles(), in);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "Config: binder.replicas: expected a non-negative integer, got \"three\"");
  in.config_json = ConfigJson(R"({"binder": {"service": {"image": {"tag": "a b"}}}})");
  r = Render(install::EmbeddedDeployFiles(), in);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("binder.service.image"), std::string::npos);
  in.config_json = "{not json";
  EXPECT_FALSE(Render(install::EmbeddedDeployFiles(), in).ok());
  const World w = RenderOf(R"({"global": {"vpa": {"enabled": true}}, "scheduler": {"GOGC": 200}})");
  ASSERT_EQ(w.r.ignored.size(), 2u);
  EXPECT_EQ(w.r.ignored[0], "spec.global.vpa: kai makes no VerticalPodAutoscaler");
}

// --- FIPS mode (docs/fips.md) ----------------------------------------------------------------

constexpr const char* kDeployments[] = {"kai-binder",         "kai-podgrouper",
                                        "kai-controllers",    "kai-admission",
                                        "kai-scale-adjuster", "kai-scheduler-default"};

World RenderWith(const std::string& default_image, bool fips_mode) {
  RenderInput in;
  in.config_json = ConfigJson("{}");
  in.shards = {{"default", "s-1", "", ""}};
  in.default_image = default_image;
  in.fips_mode = fips_mode;
  auto r = Render(install::EmbeddedDeployFiles(), in);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return {r.ok() ? std::move(*r) : Rendered{}};
}

TEST(OperatorRender, FipsImagesAreThoseTaggedFips) {
  EXPECT_TRUE(IsFipsImage("registry.example/kai:1.0-fips"));
  EXPECT_TRUE(IsFipsImage("localhost:5000/kai:v0.18.0-fips"));
  EXPECT_TRUE(IsFipsImage("kai:1.0-fips@sha256:0123abcd"));
  EXPECT_FALSE(IsFipsImage("registry.example/kai:1.0"));
  EXPECT_FALSE(IsFipsImage("registry.example/kai-fips"));  // no tag
  EXPECT_FALSE(IsFipsImage("localhost:5000-fips/kai"));    // a port, not a tag
  EXPECT_FALSE(IsFipsImage("kai:fips-1.0"));
}

// KAI's chart with global.fipsMode "on" tags every image -fips: each such component gets
// --fips-mode, the others do not.
TEST(OperatorRender, AComponentOfAFipsImageRunsInFipsMode) {
  const World w = RenderOf(R"({"binder":{"service":{"image":{"tag":"1.0-fips"}}}})");
  EXPECT_TRUE(Has(w.Args("kai-binder"), "--fips-mode"));
  EXPECT_FALSE(Has(w.Args("kai-podgrouper"), "--fips-mode"));
  EXPECT_FALSE(Has(w.Args("kai-scheduler-default"), "--fips-mode"));
  const World all = RenderWith("registry.example/kai:1.0-fips", false);
  for (const char* name : kDeployments) {
    const auto args = all.Args(name);
    EXPECT_EQ(std::count(args.begin(), args.end(), "--fips-mode"), 1) << name;
  }
}

TEST(OperatorRender, AnOperatorInFipsModeRunsEveryComponentInIt) {
  const World w = RenderWith("registry.example/kai:1.0", true);
  for (const char* name : kDeployments) EXPECT_TRUE(Has(w.Args(name), "--fips-mode")) << name;
  const World off = RenderWith("registry.example/kai:1.0", false);
  for (const char* name : kDeployments) EXPECT_FALSE(Has(off.Args(name), "--fips-mode")) << name;
}

}  // namespace
}  // namespace kai::op
