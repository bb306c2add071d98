#pragma once
// Exact resource vectors (docs/design.md rule 1): every amount is an int64 in a fixed unit.
//   cpu: millicores; memory: bytes; gpu: milli-GPU (1000 = one device); pods: count;
//   other (extended) resources, e.g. nvidia.com/mig-1g.5gb: base units, keyed by interned id.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kai {

using ResourceId = uint32_t;

// Dense ids for extended resource names. Ids are stable for the life of the process (names are
// never freed: a small vocabulary). Both are thread-safe; ResourceName takes no lock.
ResourceId InternResource(std::string_view name);
const std::string& ResourceName(ResourceId id);

inline constexpr int64_t kMilliPerUnit = 1000;

// The four resources KAI accounts for on every pod and node, plus extended resources.
enum class CoreResource : uint8_t { kCpu, kMemory, kGpu, kPods };
std::string_view CoreResourceName(CoreResource r);

struct Resources {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  int64_t milli_gpu = 0;
  int64_t pods = 0;
  // Sorted by id; zero amounts are not stored.
  std::vector<std::pair<ResourceId, int64_t>> scalars;

  int64_t Get(CoreResource r) const { return const_cast<Resources*>(this)->Mutable(r); }
  int64_t& Mutable(CoreResource r) {
    switch (r) {
      case CoreResource::kCpu:
        return milli_cpu;
      case CoreResource::kMemory:
        return memory;
      case CoreResource::kGpu:
        return milli_gpu;
      default:
        return pods;
    }
  }
  int64_t Scalar(ResourceId id) const;
  void SetScalar(ResourceId id, int64_t amount);

  // Saturating (see SatAdd); inline: node and queue accounting add vectors on every placement.
  Resources& operator+=(const Resources& o);
  Resources& operator-=(const Resources& o);
  bool IsZero() const;
  // True when no core resource and no scalar is requested (a best-effort pod, `pods` aside).
  bool IsBestEffort() const {
    return milli_cpu == 0 && memory == 0 && milli_gpu == 0 && scalars.empty();
  }
  friend bool operator==(const Resources&, const Resources&) = default;
};

namespace resource_detail {

// Saturating arithmetic: amounts are capped at load time (2^50), so saturation only guards
// against pathological inputs (thousands of maximal pods on one node).
inline int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
  return r;
}
inline int64_t SatSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? INT64_MAX : INT64_MIN;
  return r;
}
// a += b and a -= b on sorted scalar lists (saturating; zero amounts dropped).
void AddScalars(std::vector<std::pair<ResourceId, int64_t>>& a,
                const std::vector<std::pair<ResourceId, int64_t>>& b);
void SubScalars(std::vector<std::pair<ResourceId, int64_t>>& a,
                const std::vector<std::pair<ResourceId, int64_t>>& b);

}  // namespace resource_detail

inline Resources& Resources::operator+=(const Resources& o) {
  using resource_detail::SatAdd;
  milli_cpu = SatAdd(milli_cpu, o.milli_cpu);
  memory = SatAdd(memory, o.memory);
  milli_gpu = SatAdd(milli_gpu, o.milli_gpu);
  pods = SatAdd(pods, o.pods);
  if (!o.scalars.empty()) resource_detail::AddScalars(scalars, o.scalars);
  return *this;
}

inline Resources& Resources::operator-=(const Resources& o) {
  using resource_detail::SatSub;
  milli_cpu = SatSub(milli_cpu, o.milli_cpu);
  memory = SatSub(memory, o.memory);
  milli_gpu = SatSub(milli_gpu, o.milli_gpu);
  pods = SatSub(pods, o.pods);
  if (!o.scalars.empty()) resource_detail::SubScalars(scalars, o.scalars);
  return *this;
}

Resources operator+(Resources a, const Resources& b);
Resources operator-(Resources a, const Resources& b);
Resources Max(const Resources& a, const Resources& b);

// A resource that is short when placing `need` into `have`.
struct Shortage {
  bool is_core = true;
  CoreResource core = CoreResource::kCpu;
  ResourceId scalar = 0;
  int64_t need = 0;
  int64_t have = 0;
  std::string Name() const;
};

// Returns true when `need` fits in `have` on every resource; otherwise fills the first shortage in
// the fixed order gpu, cpu, memory, pods, scalars (GPU first: it is the scarce one users ask
// about).
bool FitsIn(const Resources& need, const Resources& have, Shortage* shortage = nullptr);

// Exact human forms: cpu and gpu as decimals ("1.5"), memory with a binary or decimal suffix
// when it divides exactly ("32Gi", "20G"), else bytes.
std::string FormatAmount(CoreResource r, int64_t amount);
std::string FormatBytes(int64_t bytes);
std::string FormatScalar(ResourceId id, int64_t amount);
std::string ToString(const Resources& r);

}  // namespace kai
