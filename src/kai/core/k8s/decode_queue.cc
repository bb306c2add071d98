#include "kai/core/k8s/decode_fields.h"

#include "kai/core/resource/quantity.h"

namespace kai::decoding {
namespace {

// Queue amounts: gpu in devices (-> milli-GPU), cpu in millicores, memory in MB (-> bytes).
std::optional<int64_t> QueueAmount(const doc::Node& n, std::string_view key, int scale,
                                   std::string_view path, ObjectContext& ctx) {
  auto s = Str(n, key, path, ctx);
  if (!s) return std::nullopt;
  auto r = ParseQuantity(*s, 0);
  if (r.ok() && r.value() == -1 && s->find('.') == std::string::npos) return -1;
  r = ParseQuantity(*s, scale);
  if (!r.ok()) {
    ctx.Fail(Join(path, key), r.error().message);
    return std::nullopt;
  }
  const int64_t v = r.value();
  if (v < 0) {
    ctx.Fail(Join(path, key), "must be -1 (unlimited) or a non-negative number, got " + *s);
    return std::nullopt;
  }
  if (v > kMaxAmount) {
    ctx.Fail(Join(path, key), "too large: " + *s);
    return std::nullopt;
  }
  return v;
}

QueueResource DecodeQueueResource(const doc::Node& n, std::string_view name, int scale,
                                  ObjectContext& ctx) {
  QueueResource q;
  const std::string path = "spec.resources." + std::string(name);
  if (!IsMapOrAbsent(n, path, ctx)) return q;
  q.quota = QueueAmount(n, "quota", scale, path, ctx).value_or(0);
  q.limit = QueueAmount(n, "limit", scale, path, ctx).value_or(0);
  auto w = QueueAmount(n, "overQuotaWeight", 3, path, ctx).value_or(0);
  q.weight_milli = w < 0 ? -kMilliPerUnit : w;
  return q;
}

}  // namespace

void DecodeQueue(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                 ClusterState& state) {
  QueueObject q;
  q.meta = DecodeMeta(doc, "Queue", false, source, ctx);
  const doc::Node spec = doc["spec"];
  if (IsMapOrAbsent(spec, "spec", ctx)) {
    q.parent = Str(spec, "parentQueue", "spec", ctx).value_or("");
    q.display_name = Str(spec, "displayName", "spec", ctx).value_or("");
    if (auto p = Int(spec, "priority", "spec", ctx)) q.priority = static_cast<int>(*p);
    q.preempt_min_runtime = Duration(spec, "preemptMinRuntime", "spec", ctx);
    q.reclaim_min_runtime = Duration(spec, "reclaimMinRuntime", "spec", ctx);
    const doc::Node res = spec["resources"];
    if (IsMapOrAbsent(res, "spec.resources", ctx)) {
      q.has_resources = true;
      q.gpu = DecodeQueueResource(res["gpu"], "gpu", 3, ctx);
      q.cpu = DecodeQueueResource(res["cpu"], "cpu", 0, ctx);
      q.memory = DecodeQueueResource(res["memory"], "memory", 6, ctx);
    }
  }
  state.queues.push_back(std::move(q));
}

}  // namespace kai::decoding
