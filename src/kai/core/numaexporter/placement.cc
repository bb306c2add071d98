#include "kai/core/numaexporter/placement.h"

#include <limits>

#include "kai/core/k8s/json_body.h"

namespace kai::numaexporter {
namespace {

constexpr int64_t kMaxAmount = std::numeric_limits<int64_t>::max();

std::string ZoneName(int64_t numa_node) { return "node-" + std::to_string(numa_node); }

// The one NUMA node of a resource; nullopt when it names none or several.
std::optional<int64_t> SingleNode(const std::vector<int64_t>& nodes) {
  if (nodes.size() != 1) return std::nullopt;
  return nodes.front();
}

void Add(Placement& p, int64_t numa_node, const std::string& resource, int64_t amount) {
  if (amount <= 0) return;
  int64_t& have = p[ZoneName(numa_node)][resource];
  have = amount > kMaxAmount - have ? kMaxAmount : have + amount;
}

void AddDevices(Placement& p, const ContainerAllocation& c) {
  for (const DeviceAllocation& d : c.devices) {
    if (const auto node = SingleNode(d.numa_nodes)) Add(p, *node, d.resource, d.device_count);
  }
}

void AddCpus(Placement& p, const ContainerAllocation& c, const CpuToNuma& cpus) {
  for (int64_t id : c.cpu_ids) {
    const auto it = cpus.find(id);
    if (it != cpus.end()) Add(p, it->second, "cpu", 1);
  }
}

void AddMemory(Placement& p, const ContainerAllocation& c) {
  for (const MemoryAllocation& m : c.memory) {
    const auto node = SingleNode(m.numa_nodes);
    if (!node) continue;
    const int64_t bytes =
        m.size > static_cast<uint64_t>(kMaxAmount) ? kMaxAmount : static_cast<int64_t>(m.size);
    Add(p, *node, m.memory_type.empty() ? "memory" : m.memory_type, bytes);
  }
}

}  // namespace

Placement ComputePlacement(const PodAllocation& pod, const CpuToNuma& cpus) {
  Placement p;
  for (const ContainerAllocation& c : pod.containers) {
    AddDevices(p, c);
    AddCpus(p, c, cpus);
    AddMemory(p, c);
  }
  return p;
}

std::string DecimalQuantity(int64_t value) {
  static constexpr const char* kSuffixes[] = {"", "k", "M", "G", "T", "P", "E"};
  size_t exponent = 0;
  while (value != 0 && value % 1000 == 0 && exponent + 1 < std::size(kSuffixes)) {
    value /= 1000;
    ++exponent;
  }
  return std::to_string(value) + kSuffixes[exponent];
}

std::string PlacementText(const Placement& placement) {
  return k8s::Json([&](k8s::JsonWriter& w) {
    w.StartArray();
    for (const auto& [zone, amounts] : placement) {
      w.StartObject();
      k8s::KeyStr(w, "zone", zone);
      k8s::Str(w, "amount");
      w.StartObject();
      for (const auto& [resource, amount] : amounts) {
        k8s::KeyStr(w, resource, DecimalQuantity(amount));
      }
      w.EndObject();
      w.EndObject();
    }
    w.EndArray();
  });
}

}  // namespace kai::numaexporter
