#pragma once
// Factories of the built-in plugins (one folder each under plugins/).
#include <memory>

#include "kai/core/framework/plugin.h"

namespace kai::plugins {

std::unique_ptr<Plugin> MakePriority();
std::unique_ptr<Plugin> MakeElastic();
std::unique_ptr<Plugin> MakeTaskOrder();
std::unique_ptr<Plugin> MakeSubGroupOrder();
// subgrouporder's comparison of two SubGroups by satisfied members against their minimums.
int CompareByAllocationRatio(int l_count, int l_min, int r_count, int r_min);
std::unique_ptr<Plugin> MakeKubeflow();
std::unique_ptr<Plugin> MakeRay();
std::unique_ptr<Plugin> MakeNodeAvailability();
std::unique_ptr<Plugin> MakeResourceType();
std::unique_ptr<Plugin> MakeNominatedNode();
std::unique_ptr<Plugin> MakePredicates();
Result<std::unique_ptr<Plugin>> MakeNodePlacement(const PluginArguments& args);
Result<std::unique_ptr<Plugin>> MakeProportion(const PluginArguments& args);
Result<std::unique_ptr<Plugin>> MakeMinRuntime(const PluginArguments& args);
// GPU order for shared GPUs: pack (prefer the fullest shared GPU) or spread.
std::unique_ptr<Plugin> MakeGpuOrder(bool pack);
std::unique_ptr<Plugin> MakeGpuSharingOrder();
std::unique_ptr<Plugin> MakeTopology();
std::unique_ptr<Plugin> MakePodAffinity();
std::unique_ptr<Plugin> MakeDynamicResources();
Result<std::unique_ptr<Plugin>> MakeNuma(const PluginArguments& args);
// A KAI plugin whose behaviour kai does not model yet (see docs/deviations.md).
std::unique_ptr<Plugin> MakePending();

}  // namespace kai::plugins
