#include "kai/core/k8s/decode_fields.h"

namespace kai::decoding {

void DecodePriorityClass(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                         ClusterState& state) {
  PriorityClassObject pc;
  pc.meta = DecodeMeta(doc, "PriorityClass", false, source, ctx);
  auto v = Int(doc, "value", "", ctx);
  if (!v) ctx.Fail("value", "missing");
  pc.value = static_cast<int>(v.value_or(0));
  pc.global_default = Bool(doc, "globalDefault", "", ctx).value_or(false);
  state.priority_classes.push_back(std::move(pc));
}

void DecodeTopology(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                    ClusterState& state) {
  TopologyObject t;
  t.meta = DecodeMeta(doc, "Topology", false, source, ctx);
  const doc::Node levels = doc["spec"]["levels"];
  if (IsSeqOrAbsent(levels, "spec.levels", ctx)) {
    for (size_t i = 0; i < levels.size(); ++i) {
      const std::string p = Index("spec.levels", i);
      TopologyLevel l{Str(levels[i], "nodeLabel", p, ctx).value_or(""),
                      Str(levels[i], "alias", p, ctx).value_or("")};
      if (l.node_label.empty()) ctx.Fail(Join(p, "nodeLabel"), "missing");
      t.levels.push_back(std::move(l));
    }
  }
  if (t.levels.empty()) ctx.Fail("spec.levels", "a Topology needs at least one level");
  state.topologies.push_back(std::move(t));
}

void DecodeBindRequest(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                       ClusterState& state) {
  BindRequestObject b;
  b.meta = DecodeMeta(doc, "BindRequest", true, source, ctx);
  const doc::Node spec = doc["spec"];
  if (!IsMapOrAbsent(spec, "spec", ctx)) {
    ctx.Fail("spec", "missing");
    return;
  }
  b.pod_name = Str(spec, "podName", "spec", ctx).value_or("");
  b.selected_node = Str(spec, "selectedNode", "spec", ctx).value_or("");
  b.received_resource_type = Str(spec, "receivedResourceType", "spec", ctx).value_or("");
  b.selected_gpu_groups = StringList(spec["selectedGPUGroups"], "spec.selectedGPUGroups", ctx);
  if (const doc::Node gpu = spec["receivedGPU"]; IsMapOrAbsent(gpu, "spec.receivedGPU", ctx)) {
    b.gpu_count = static_cast<int>(Int(gpu, "count", "spec.receivedGPU", ctx).value_or(0));
    b.gpu_portion = Str(gpu, "portion", "spec.receivedGPU", ctx).value_or("");
  }
  DecodeBindRequestAllocations(spec, b, ctx);
  b.numa_zones = DecodeNumaRecord(spec["predictedNUMAZones"], "spec.predictedNUMAZones", ctx);
  if (b.pod_name.empty()) ctx.Fail("spec.podName", "missing");
  if (b.selected_node.empty()) ctx.Fail("spec.selectedNode", "missing");
  const doc::Node status = doc["status"];
  if (auto v = Int(spec, "backoffLimit", "spec", ctx)) b.backoff_limit = static_cast<int>(*v);
  if (IsMapOrAbsent(status, "status", ctx)) {
    b.phase = Str(status, "phase", "status", ctx).value_or("");
    b.failed_attempts = static_cast<int>(Int(status, "failedAttempts", "status", ctx).value_or(0));
  }
  state.bind_requests.push_back(std::move(b));
}

}  // namespace kai::decoding
