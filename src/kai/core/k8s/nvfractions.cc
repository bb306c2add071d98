#include "kai/core/k8s/nvfractions.h"

#include <algorithm>

#include "kai/core/k8s/keys.h"
#include "kai/core/resource/quantity.h"

namespace kai::nvfractions {
namespace {

constexpr int64_t kBytesPerMib = int64_t{1} << 20;

enum class Part { kRequest, kLimit };

struct Entry {
  std::string_view container, key, value;
  Part part;
};

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The container between the prefix and `suffix`; nullopt when `key` is not of that form.
std::optional<std::string_view> Between(std::string_view key, std::string_view suffix) {
  if (key.size() <= kKeyPrefix.size() + suffix.size()) return std::nullopt;
  if (key.substr(0, kKeyPrefix.size()) != kKeyPrefix || !EndsWith(key, suffix)) {
    return std::nullopt;
  }
  return key.substr(kKeyPrefix.size(), key.size() - kKeyPrefix.size() - suffix.size());
}

std::optional<Entry> EntryOf(const Annotation& a) {
  if (auto c = Between(a.key, kRequestSuffix)) return Entry{*c, a.key, a.value, Part::kRequest};
  if (auto c = Between(a.key, kLimitSuffix)) return Entry{*c, a.key, a.value, Part::kLimit};
  return std::nullopt;
}

std::vector<Entry> Entries(const std::vector<Annotation>& annotations) {
  std::vector<Entry> out;
  for (const Annotation& a : annotations) {
    if (auto e = EntryOf(a)) out.push_back(*e);
  }
  return out;
}

std::string Field(std::string_view key) { return "metadata.annotations." + std::string(key); }

FieldError Fail(std::string_view key, std::string message) {
  return {Field(key), std::move(message)};
}

const Annotation* Find(const PodFacts& pod, std::string_view key) {
  const auto it = std::find_if(pod.annotations.begin(), pod.annotations.end(),
                               [&](const Annotation& a) { return a.key == key; });
  return it == pod.annotations.end() ? nullptr : &*it;
}

std::optional<FieldError> OneContainer(const std::vector<Entry>& entries) {
  for (const Entry& e : entries) {
    if (e.container == entries.front().container) continue;
    return Fail(e.key, "NvFractions annotations name containers \"" +
                           std::string(entries.front().container) + "\" and \"" +
                           std::string(e.container) +
                           "\"; only one container of a pod may request a GPU fraction");
  }
  return std::nullopt;
}

std::optional<FieldError> ContainerExists(const PodFacts& pod, const Entry& e) {
  const auto& names = pod.containers;
  if (std::find(names.begin(), names.end(), e.container) != names.end()) return std::nullopt;
  return Fail(e.key, "the pod has no container or init container named \"" +
                         std::string(e.container) + "\"");
}

std::optional<FieldError> LegacyConflict(const PodFacts& pod, const Entry& e) {
  for (std::string_view legacy : {keys::kGpuFraction, keys::kGpuMemory}) {
    if (!Find(pod, legacy)) continue;
    return Fail(e.key, "NvFractions cannot be combined with the " + std::string(legacy) +
                           " annotation (ask for the GPU share one way)");
  }
  const Annotation* named = Find(pod, keys::kGpuFractionContainerName);
  if (named && named->value != e.container) {
    return Fail(keys::kGpuFractionContainerName,
                "names container \"" + std::string(named->value) +
                    "\", but the NvFractions annotations are for container \"" +
                    std::string(e.container) + "\"");
  }
  if (pod.whole_gpu) {
    return Fail(e.key,
                "a pod asking for GPU memory through NvFractions must not also request "
                "nvidia.com/gpu");
  }
  return std::nullopt;
}

// A request or limit read: its bytes (rounded up) and whole MiB (rounded up).
struct Amount {
  const Entry* entry = nullptr;
  int64_t bytes = 0, mib = 0;
};

std::optional<FieldError> Read(const Entry& e, Amount& out) {
  const Result<int64_t> b = ParseQuantity(e.value, 0);
  if (!b.ok() || b.value() <= 0) {
    return Fail(e.key, "must be a positive memory quantity (such as 7680Mi), got \"" +
                           std::string(e.value) + "\"");
  }
  out = {&e, b.value(), b.value() / kBytesPerMib + (b.value() % kBytesPerMib != 0 ? 1 : 0)};
  return std::nullopt;
}

std::optional<FieldError> ReadAmounts(const std::vector<Entry>& entries, Request& out) {
  Amount request, limit;
  for (const Entry& e : entries) {
    if (auto err = Read(e, e.part == Part::kRequest ? request : limit)) return err;
  }
  if (request.entry && limit.entry && request.bytes > limit.bytes) {
    return Fail(request.entry->key, "the request " + std::string(request.entry->value) +
                                        " is above the limit " + std::string(limit.entry->value));
  }
  out.request_mib = request.entry ? request.mib : limit.mib;
  out.limit_mib = limit.entry ? limit.mib : request.mib;
  return std::nullopt;
}

}  // namespace

std::string RequestKey(std::string_view container) {
  return std::string(kKeyPrefix) + std::string(container) + std::string(kRequestSuffix);
}
std::string LimitKey(std::string_view container) {
  return std::string(kKeyPrefix) + std::string(container) + std::string(kLimitSuffix);
}
std::string DevicesKey(std::string_view container) {
  return std::string(kKeyPrefix) + std::string(container) + std::string(kDevicesSuffix);
}

std::optional<std::string_view> DevicesContainer(std::string_view key) {
  return Between(key, kDevicesSuffix);
}

bool Relevant(std::string_view key) {
  return key == keys::kGpuFraction || key == keys::kGpuMemory ||
         key == keys::kGpuFractionContainerName ||
         (key.substr(0, kKeyPrefix.size()) == kKeyPrefix &&
          (EndsWith(key, kRequestSuffix) || EndsWith(key, kLimitSuffix)));
}

bool HasNvFractions(const std::vector<Annotation>& annotations) {
  return std::any_of(annotations.begin(), annotations.end(),
                     [](const Annotation& a) { return EntryOf(a).has_value(); });
}

Parsed ParseNvFractions(const PodFacts& pod) {
  const std::vector<Entry> entries = Entries(pod.annotations);
  if (entries.empty()) return {};
  if (auto e = OneContainer(entries)) return {std::nullopt, std::move(e)};
  if (auto e = ContainerExists(pod, entries.front())) return {std::nullopt, std::move(e)};
  if (auto e = LegacyConflict(pod, entries.front())) return {std::nullopt, std::move(e)};
  Request out;
  if (auto e = ReadAmounts(entries, out)) return {std::nullopt, std::move(e)};
  out.container = std::string(entries.front().container);
  return {std::move(out), std::nullopt};
}

}  // namespace kai::nvfractions
