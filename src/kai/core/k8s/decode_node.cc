#include "kai/core/k8s/decode_fields.h"

#include "kai/core/k8s/typed_labels.h"

namespace kai::decoding {
namespace {

void DecodeNodeConditions(const doc::Node& conds, NodeObject& node, ObjectContext& ctx) {
  if (!IsSeqOrAbsent(conds, "status.conditions", ctx)) return;
  for (size_t i = 0; i < conds.size(); ++i) {
    const std::string p = Index("status.conditions", i);
    const std::string type = Str(conds[i], "type", p, ctx).value_or("");
    const std::string st = Str(conds[i], "status", p, ctx).value_or("");
    if (type == "Ready" && st != "True") {
      node.ready = false;
      node.bad_conditions.push_back("NotReady");
    } else if (type != "Ready" && st == "True") {
      node.bad_conditions.push_back(type);
    }
  }
}

}  // namespace

void DecodeNode(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                ClusterState& state) {
  NodeObject node;
  node.meta = DecodeMeta(doc, "Node", false, source, ctx);
  const doc::Node spec = doc["spec"];
  if (IsMapOrAbsent(spec, "spec", ctx)) {
    node.unschedulable = Bool(spec, "unschedulable", "spec", ctx).value_or(false);
    const doc::Node taints = spec["taints"];
    if (IsSeqOrAbsent(taints, "spec.taints", ctx)) {
      for (size_t i = 0; i < taints.size(); ++i) {
        const std::string p = Index("spec.taints", i);
        Taint t{Str(taints[i], "key", p, ctx).value_or(""),
                Str(taints[i], "value", p, ctx).value_or(""),
                Str(taints[i], "effect", p, ctx).value_or("")};
        if (t.key.empty()) ctx.Fail(Join(p, "key"), "missing");
        node.taints.push_back(std::move(t));
      }
    }
  }
  const doc::Node status = doc["status"];
  if (IsMapOrAbsent(status, "status", ctx)) {
    node.capacity = ResourceList(status["capacity"], "status.capacity", ctx);
    const doc::Node alloc = status["allocatable"];
    node.allocatable =
        alloc.IsDefined() ? ResourceList(alloc, "status.allocatable", ctx) : node.capacity;
    DecodeNodeConditions(status["conditions"], node, ctx);
  }
  ReadTypedLabels(node);
  state.nodes.push_back(std::move(node));
}

}  // namespace kai::decoding
