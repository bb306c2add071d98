#include "kai/core/resource/resources.h"

#include <array>
#include <atomic>
#include <climits>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "kai/core/resource/quantity.h"

namespace kai {
namespace {

// Extended resource names: a small vocabulary (the cluster's device plugins and MIG profiles),
// kept for the life of the process because ids index dense vectors. Interning runs on the
// informer's reflector threads, several at once, so it takes a mutex; reading a name (on the
// scheduler's per-node paths) does not: names sit in chunks that never move, and an id is
// published (count) only after its name is written.
constexpr size_t kChunk = 256, kChunks = 256;
using Chunk = std::array<std::string, kChunk>;

struct Interner {
  std::mutex mu;
  std::unordered_map<std::string, ResourceId> ids;  // under mu
  std::array<std::atomic<Chunk*>, kChunks> chunks{};
  std::atomic<size_t> count{0};
};

// Never destroyed: names may be read by static destructors elsewhere.
Interner& GlobalInterner() {
  static Interner* interner = new Interner();
  return *interner;
}

template <class Op>
void CombineScalars(std::vector<std::pair<ResourceId, int64_t>>& a,
                    const std::vector<std::pair<ResourceId, int64_t>>& b, Op op) {
  for (const auto& [id, amount] : b) {
    auto it = std::lower_bound(a.begin(), a.end(), id,
                               [](const auto& e, ResourceId key) { return e.first < key; });
    if (it != a.end() && it->first == id) {
      it->second = op(it->second, amount);
      if (it->second == 0) a.erase(it);
    } else {
      const int64_t v = op(0, amount);
      if (v != 0) a.insert(it, {id, v});
    }
  }
}

}  // namespace

ResourceId InternResource(std::string_view name) {
  Interner& in = GlobalInterner();
  std::lock_guard<std::mutex> lock(in.mu);
  auto it = in.ids.find(std::string(name));
  if (it != in.ids.end()) return it->second;
  const size_t id = in.count.load(std::memory_order_relaxed);
  if (id >= kChunk * kChunks) throw std::length_error("more than 65536 resource names");
  std::atomic<Chunk*>& slot = in.chunks[id / kChunk];
  if (!slot.load(std::memory_order_relaxed)) slot.store(new Chunk(), std::memory_order_release);
  (*slot.load(std::memory_order_relaxed))[id % kChunk] = std::string(name);
  in.ids.emplace(std::string(name), static_cast<ResourceId>(id));
  in.count.store(id + 1, std::memory_order_release);
  return static_cast<ResourceId>(id);
}

const std::string& ResourceName(ResourceId id) {
  const Interner& in = GlobalInterner();
  if (id >= in.count.load(std::memory_order_acquire)) {
    throw std::out_of_range("ResourceName: unknown resource id " + std::to_string(id));
  }
  return (*in.chunks[id / kChunk].load(std::memory_order_acquire))[id % kChunk];
}

std::string_view CoreResourceName(CoreResource r) {
  switch (r) {
    case CoreResource::kCpu:
      return "cpu";
    case CoreResource::kMemory:
      return "memory";
    case CoreResource::kGpu:
      return "nvidia.com/gpu";
    case CoreResource::kPods:
      return "pods";
  }
  return "?";
}

int64_t Resources::Scalar(ResourceId id) const {
  for (const auto& [sid, amount] : scalars) {
    if (sid == id) return amount;
  }
  return 0;
}

void Resources::SetScalar(ResourceId id, int64_t amount) {
  auto it = std::lower_bound(scalars.begin(), scalars.end(), id,
                             [](const auto& e, ResourceId key) { return e.first < key; });
  if (it != scalars.end() && it->first == id) {
    if (amount == 0) {
      scalars.erase(it);
    } else {
      it->second = amount;
    }
  } else if (amount != 0) {
    scalars.insert(it, {id, amount});
  }
}

namespace resource_detail {

void AddScalars(std::vector<std::pair<ResourceId, int64_t>>& a,
                const std::vector<std::pair<ResourceId, int64_t>>& b) {
  CombineScalars(a, b, SatAdd);
}

void SubScalars(std::vector<std::pair<ResourceId, int64_t>>& a,
                const std::vector<std::pair<ResourceId, int64_t>>& b) {
  CombineScalars(a, b, SatSub);
}

}  // namespace resource_detail

bool Resources::IsZero() const {
  return milli_cpu == 0 && memory == 0 && milli_gpu == 0 && pods == 0 && scalars.empty();
}

Resources operator+(Resources a, const Resources& b) { return a += b; }
Resources operator-(Resources a, const Resources& b) { return a -= b; }

Resources Max(const Resources& a, const Resources& b) {
  Resources r = a;
  r.milli_cpu = std::max(a.milli_cpu, b.milli_cpu);
  r.memory = std::max(a.memory, b.memory);
  r.milli_gpu = std::max(a.milli_gpu, b.milli_gpu);
  r.pods = std::max(a.pods, b.pods);
  for (const auto& [id, amount] : b.scalars) r.SetScalar(id, std::max(a.Scalar(id), amount));
  return r;
}

std::string Shortage::Name() const {
  return is_core ? std::string(CoreResourceName(core)) : ResourceName(scalar);
}

bool FitsIn(const Resources& need, const Resources& have, Shortage* shortage) {
  static constexpr CoreResource kOrder[] = {CoreResource::kGpu, CoreResource::kCpu,
                                            CoreResource::kMemory, CoreResource::kPods};
  for (CoreResource r : kOrder) {
    const int64_t n = need.Get(r);
    if (n > 0 && n > have.Get(r)) {
      if (shortage) *shortage = Shortage{true, r, 0, n, have.Get(r)};
      return false;
    }
  }
  for (const auto& [id, amount] : need.scalars) {
    const int64_t h = have.Scalar(id);
    if (amount > 0 && amount > h) {
      if (shortage) *shortage = Shortage{false, CoreResource::kCpu, id, amount, h};
      return false;
    }
  }
  return true;
}

std::string FormatBytes(int64_t bytes) {
  static constexpr std::pair<int64_t, const char*> kUnits[] = {
      {int64_t{1} << 40, "Ti"}, {int64_t{1} << 30, "Gi"}, {int64_t{1} << 20, "Mi"},
      {1000000000000, "T"},     {1000000000, "G"},        {1000000, "M"}};
  if (bytes == 0) return "0";
  for (const auto& [unit, suffix] : kUnits) {
    if (bytes % unit == 0) return std::to_string(bytes / unit) + suffix;
  }
  return std::to_string(bytes);
}

std::string FormatAmount(CoreResource r, int64_t amount) {
  switch (r) {
    case CoreResource::kCpu:
    case CoreResource::kGpu:
      return FormatMilli(amount);
    case CoreResource::kMemory:
      return FormatBytes(amount);
    case CoreResource::kPods:
      break;
  }
  return std::to_string(amount);
}

std::string FormatScalar(ResourceId, int64_t amount) { return std::to_string(amount); }

std::string ToString(const Resources& r) {
  std::string s = "cpu=" + FormatMilli(r.milli_cpu) + " memory=" + std::to_string(r.memory) +
                  " gpu=" + FormatMilli(r.milli_gpu) + " pods=" + std::to_string(r.pods);
  for (const auto& [id, amount] : r.scalars)
    s += " " + ResourceName(id) + "=" + std::to_string(amount);
  return s;
}

}  // namespace kai
