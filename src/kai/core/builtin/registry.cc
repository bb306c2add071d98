// The one static registry of plugins and actions (docs/design.md rule 3), declared by the framework
// (framework/plugin.h) and defined here, above both plugins/ and actions/, so that the framework
// never includes either. Default priorities are KAI's (schedulingshard_types.go); plugins
// register hooks in priority order, highest first.
#include <algorithm>

#include "kai/core/actions/builtin.h"
#include "kai/core/framework/plugin.h"
#include "kai/core/plugins/builtin.h"

namespace kai {
namespace {

template <class F>
std::function<Result<std::unique_ptr<Plugin>>(const PluginArguments&)> NoArgs(F make) {
  return [make](const PluginArguments&) -> Result<std::unique_ptr<Plugin>> { return make(); };
}

std::vector<PluginInfo> BuildPlugins() {
  using namespace plugins;
  return {
      {"predicates", 1900, {}, NoArgs(MakePredicates)},
      {"proportion",
       1800,
       {"kValue", "relcaimerSaturationMultiplier", "reclaimerUtilizationMultiplier",
        "queuePriorityInQuotaReclaim"},
       MakeProportion},
      {"priority", 1700, {}, NoArgs(MakePriority)},
      {"nodeavailability", 1600, {}, NoArgs(MakeNodeAvailability)},
      {"resourcetype", 1500, {}, NoArgs(MakeResourceType)},
      {"podaffinity", 1400, {}, NoArgs(MakePodAffinity)},
      {"elastic", 1300, {}, NoArgs(MakeElastic)},
      {"kubeflow", 1200, {}, NoArgs(MakeKubeflow)},
      {"ray", 1100, {}, NoArgs(MakeRay)},
      {"subgrouporder", 1000, {}, NoArgs(MakeSubGroupOrder)},
      {"taskorder", 900, {}, NoArgs(MakeTaskOrder)},
      {"nominatednode", 800, {}, NoArgs(MakeNominatedNode)},
      {"dynamicresources", 700, {}, NoArgs(MakeDynamicResources)},
      {"minruntime",
       600,
       {"defaultPreemptMinRuntime", "defaultReclaimMinRuntime", "reclaimResolveMethod"},
       MakeMinRuntime},
      {"topology", 500, {}, NoArgs(MakeTopology)},
      {"numa", 450, {"ignoreList", "reconstructAvailable"}, MakeNuma},  // opt-in (config.cc)
      {"snapshot", 400, {}, NoArgs(MakePending)},
      {"sg-nodelocalgreedy", 360, {}, NoArgs(MakePending)},
      {"sg-multinodegang", 350, {}, NoArgs(MakePending)},
      {"gpupack", 300, {}, NoArgs([] { return MakeGpuOrder(true); })},
      {"gpuspread", 300, {}, NoArgs([] { return MakeGpuOrder(false); })},
      {"nodeplacement", 200, {"gpu", "cpu"}, MakeNodePlacement},
      {"gpusharingorder", 100, {}, NoArgs(MakeGpuSharingOrder)},
  };
}

std::vector<ActionInfo> BuildActions() {
  using namespace actions;
  return {
      {"allocate", 500, MakeAllocate},
      {"consolidation", 400, MakeConsolidation},
      {"reclaim", 300, MakeReclaim},
      {"preempt", 200, MakePreempt},
      {"stalegangeviction", 100, MakeStaleGangEviction},
  };
}

}  // namespace

const std::vector<PluginInfo>& AllPlugins() {
  static const std::vector<PluginInfo> plugins = BuildPlugins();
  return plugins;
}

const std::vector<ActionInfo>& AllActions() {
  static const std::vector<ActionInfo> actions = BuildActions();
  return actions;
}

const PluginInfo* FindPlugin(std::string_view name) {
  const auto& all = AllPlugins();
  auto it =
      std::find_if(all.begin(), all.end(), [&](const PluginInfo& p) { return p.name == name; });
  return it == all.end() ? nullptr : &*it;
}

const ActionInfo* FindAction(std::string_view name) {
  const auto& all = AllActions();
  auto it =
      std::find_if(all.begin(), all.end(), [&](const ActionInfo& a) { return a.name == name; });
  return it == all.end() ? nullptr : &*it;
}

}  // namespace kai
