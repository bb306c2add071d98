// deploy/rbac/podgrouper.yaml against the kinds the pod grouper reads: every owner kind of the
// hub may be read (get), and the ClusterRole names nothing the code does not call.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "kai/core/podgrouper/hub.h"

namespace kai::podgrouper {
namespace {

using Rule = std::tuple<std::string, std::string, std::string>;  // group, resource, verb

std::set<Rule> ClusterRoleRules() {
  std::set<Rule> rules;
  for (const YAML::Node& doc :
       YAML::LoadAllFromFile(std::string(KAI_SOURCE_DIR) + "/deploy/rbac/podgrouper.yaml")) {
    if (doc["kind"].as<std::string>() != "ClusterRole") continue;
    for (const YAML::Node& r : doc["rules"]) {
      for (const auto& g : r["apiGroups"])
        for (const auto& res : r["resources"])
          for (const auto& v : r["verbs"])
            rules.insert({g.as<std::string>(), res.as<std::string>(), v.as<std::string>()});
    }
  }
  return rules;
}

std::string Plural(std::string kind) {
  std::transform(kind.begin(), kind.end(), kind.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return kind + "s";
}

TEST(PodGrouperRbac, TheClusterRoleIsExactlyWhatThePodGrouperCalls) {
  std::set<Rule> want = {{"", "pods", "get"},
                         {"", "pods", "list"},
                         {"", "pods", "watch"},
                         {"", "pods", "patch"},
                         {"", "configmaps", "get"},
                         {"", "events", "create"},  // PodGrouperWarning
                         {"scheduling.k8s.io", "priorityclasses", "get"},
                         {"scheduling.run.ai", "podgroups", "get"},
                         {"scheduling.run.ai", "podgroups", "list"},
                         {"scheduling.run.ai", "podgroups", "create"},
                         {"scheduling.run.ai", "podgroups", "update"},
                         // Knative's owner chain passes through these on its way to the Service.
                         {"serving.knative.dev", "configurations", "get"},
                         {"serving.knative.dev", "revisions", "get"},
                         // Grove: the owner chain below a PodCliqueSet, and the PodGang read.
                         {"grove.io", "podcliques", "get"},
                         {"grove.io", "podcliquescalinggroups", "get"},
                         {"scheduler.grove.io", "podgangs", "get"},
                         // The Karta of a kind the hub has no grouper for (karta.cc).
                         {"run.ai", "kartas", "list"}};
  for (const auto& [group, version, kind] : DefaultHub().Kinds()) {
    if (group.empty()) continue;  // Pod: above
    want.insert({group, Plural(kind), "get"});
  }
  EXPECT_EQ(ClusterRoleRules(), want);
}

}  // namespace
}  // namespace kai::podgrouper
