#include "kai/core/k8s/typed_labels.h"

#include <charconv>
#include <optional>
#include <string_view>

#include "kai/core/k8s/decode.h"
#include "kai/core/k8s/keys.h"

namespace kai {
namespace {

// The whole of `text` as an integer, else nothing.
std::optional<int64_t> WholeInt(std::string_view text) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

const std::string* Find(const Labels& labels, std::string_view key) {
  auto it = labels.find(key);
  return it == labels.end() ? nullptr : &it->second;
}

MigStrategy StrategyNamed(std::string_view name) {
  if (name == "single") return MigStrategy::kSingle;
  if (name == "mixed") return MigStrategy::kMixed;
  return MigStrategy::kNone;
}

// KAI's task order keys: master/launcher pods of kubeflow jobs first, then ray heads.
int8_t RoleRank(const Labels& labels) {
  const std::string* role = Find(labels, keys::kKubeflowJobRole);
  if (role && (*role == "master" || *role == "launcher")) return 0;
  const std::string* ray = Find(labels, keys::kRayNodeType);
  return ray && *ray == "head" ? 1 : 2;
}

}  // namespace

void ReadTypedLabels(NodeObject& n) {
  n.gpu_memory_mib = NodeGpuMemoryMib(n);
  const std::string* count = Find(n.meta.labels, keys::kNodeGpuCount);
  n.gpu_count = count ? WholeInt(*count) : std::nullopt;
  const std::string* mig = Find(n.meta.labels, keys::kMigEnabledLabel);
  n.mig_enabled =
      mig ? std::optional<bool>(*mig == "true" || *mig == "True" || *mig == "1") : std::nullopt;
  const std::string* strategy = Find(n.meta.labels, keys::kMigStrategyLabel);
  n.mig_strategy = strategy ? StrategyNamed(*strategy) : MigStrategy::kNone;
}

void ReadTypedLabels(PodObject& p) {
  p.task_priority.reset();
  p.task_priority_invalid = false;
  if (const std::string* v = Find(p.meta.labels, keys::kTaskPriorityLabel)) {
    p.task_priority = WholeInt(*v);
    p.task_priority_invalid = !p.task_priority;
  }
  p.role_rank = RoleRank(p.meta.labels);
  const std::string* app = Find(p.meta.labels, "app");
  p.reservation = app && *app == keys::kReservationAppLabel;
  const std::string* background = Find(p.meta.labels, keys::kBackgroundLabel);
  p.background = background && *background == "true";
  p.legacy_mig = {};
  for (const auto& [k, v] : p.meta.annotations) {
    if (!k.view().starts_with(keys::kMigResourcePrefix)) continue;
    if (const auto count = WholeInt(v)) p.legacy_mig.push_back({std::string(k.view()), *count});
  }
}

}  // namespace kai
