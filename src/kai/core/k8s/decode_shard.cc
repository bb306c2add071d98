#include "kai/core/k8s/decode_fields.h"

namespace kai::decoding {
namespace {

// spec.scenarioSearchBudgets as written; its durations are checked by ConfigFromShard.
std::optional<SearchBudgetsSetting> SearchBudgets(const doc::Node& spec, ObjectContext& ctx) {
  const doc::Node b = spec["scenarioSearchBudgets"];
  const std::string path = "spec.scenarioSearchBudgets";
  if (!b.IsDefined() || b.IsNull() || !IsMapOrAbsent(b, path, ctx)) return std::nullopt;
  SearchBudgetsSetting out;
  for (const auto& [k, v] :
       StringMap(b["maxActionSearchDuration"], path + ".maxActionSearchDuration", ctx))
    out.max_action[k] = v;
  for (const auto& [k, v] :
       StringMap(b["maxGeneratorSearchDuration"], path + ".maxGeneratorSearchDuration", ctx))
    out.max_generator[k] = v;
  out.max_job = Str(b, "maxJobSearchDuration", path, ctx);
  out.min_job = Str(b, "minJobSearchDuration", path, ctx);
  return out;
}

}  // namespace

void DecodeShard(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                 ClusterState& state) {
  ShardObject s;
  s.meta = DecodeMeta(doc, "SchedulingShard", false, source, ctx);
  const doc::Node spec = doc["spec"];
  if (IsMapOrAbsent(spec, "spec", ctx)) {
    const doc::Node actions = spec["actions"];
    if (IsMapOrAbsent(actions, "spec.actions", ctx)) {
      for (const auto& [key, value] : actions.Entries()) {
        const std::string name(key.Scalar());
        const std::string p = "spec.actions." + name;
        ActionSetting a{name, Bool(value, "enabled", p, ctx), std::nullopt};
        if (auto pr = Int(value, "priority", p, ctx)) a.priority = static_cast<int>(*pr);
        s.actions.push_back(std::move(a));
      }
    }
    const doc::Node plugins = spec["plugins"];
    if (IsMapOrAbsent(plugins, "spec.plugins", ctx)) {
      for (const auto& [key, value] : plugins.Entries()) {
        PluginSetting ps;
        ps.name = std::string(key.Scalar());
        const std::string p = "spec.plugins." + ps.name;
        ps.enabled = Bool(value, "enabled", p, ctx);
        if (auto pr = Int(value, "priority", p, ctx)) ps.priority = static_cast<int>(*pr);
        const doc::Node args = value["arguments"];
        if (args.IsDefined() && !args.IsNull()) {
          ps.has_arguments = true;
          for (const auto& [k, v] : StringMap(args, p + ".arguments", ctx)) ps.arguments[k] = v;
        }
        s.plugins.push_back(std::move(ps));
      }
    }
    const doc::Node placement = spec["placementStrategy"];
    if (IsMapOrAbsent(placement, "spec.placementStrategy", ctx)) {
      s.placement_gpu = Str(placement, "gpu", "spec.placementStrategy", ctx).value_or("");
      s.placement_cpu = Str(placement, "cpu", "spec.placementStrategy", ctx).value_or("");
    }
    s.partition_label_value = Str(spec, "partitionLabelValue", "spec", ctx).value_or("");
    for (const auto& [k, v] : StringMap(spec["args"], "spec.args", ctx)) s.args[k] = v;
    s.search_budgets = SearchBudgets(spec, ctx);
    for (const auto& [k, v] :
         StringMap(spec["queueDepthPerAction"], "spec.queueDepthPerAction", ctx))
      s.queue_depth_per_action[k] = v;
    const doc::Node min_runtime = spec["minRuntime"];
    if (IsMapOrAbsent(min_runtime, "spec.minRuntime", ctx)) {
      s.preempt_min_runtime = Str(min_runtime, "preemptMinRuntime", "spec.minRuntime", ctx);
      s.reclaim_min_runtime = Str(min_runtime, "reclaimMinRuntime", "spec.minRuntime", ctx);
    }
    s.k_value = Str(spec, "kValue", "spec", ctx);
  }
  state.shard = std::move(s);
}

}  // namespace kai::decoding
