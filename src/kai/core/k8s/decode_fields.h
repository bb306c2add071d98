#pragma once
// Internal to the decoder (k8s/decode*.cc): the field readers every kind's decoder shares, and the
// decoder of each kind (one file per kind or group of small kinds). Each reader reports what it
// rejects through the object's ObjectContext, naming source, object and field.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/k8s/doc.h"
#include "kai/core/model/cluster.h"
#include "kai/core/util/time.h"

namespace kai::decoding {

// Collects errors for one object; every message names source, object and field.
class ObjectContext {
 public:
  ObjectContext(const std::string& source, std::string ref, std::vector<std::string>& errors)
      : source_(source), ref_(std::move(ref)), errors_(errors) {}
  void Fail(std::string_view field, std::string_view message) {
    errors_.push_back(source_ + ": " + ref_ + ": " + std::string(field) + ": " +
                      std::string(message));
  }
  void SetRef(std::string ref) { ref_ = std::move(ref); }
  size_t ErrorCount() const { return errors_.size(); }

 private:
  const std::string& source_;
  std::string ref_;
  std::vector<std::string>& errors_;
};

inline std::string Join(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  return std::string(a) + "." + std::string(b);
}

// Larger amounts are rejected so that sums over a cluster can never overflow int64.
constexpr int64_t kMaxAmount = int64_t{1} << 50;

inline std::string Index(std::string_view a, size_t i) {
  return std::string(a) + "[" + std::to_string(i) + "]";
}

// Field readers (decode_fields.cc). Absent or null fields read as nullopt / empty, silently.
std::optional<std::string> Str(const doc::Node& parent, std::string_view key, std::string_view path,
                               ObjectContext& ctx);
bool IsMapOrAbsent(const doc::Node& n, std::string_view path, ObjectContext& ctx);
bool IsSeqOrAbsent(const doc::Node& n, std::string_view path, ObjectContext& ctx);
// A whole decimal integer (no sign other than '-', no unit, nothing after it); nullopt otherwise.
std::optional<int64_t> ParseWholeInteger(std::string_view text);
std::optional<int64_t> Int(const doc::Node& parent, std::string_view key, std::string_view path,
                           ObjectContext& ctx);
std::optional<bool> Bool(const doc::Node& parent, std::string_view key, std::string_view path,
                         ObjectContext& ctx);
std::optional<UnixSeconds> Time(const doc::Node& parent, std::string_view key,
                                std::string_view path, ObjectContext& ctx);
std::optional<int64_t> Duration(const doc::Node& parent, std::string_view key,
                                std::string_view path, ObjectContext& ctx);
Labels StringMap(const doc::Node& n, std::string_view path, ObjectContext& ctx);
std::vector<std::string> StringList(const doc::Node& n, std::string_view path, ObjectContext& ctx);
Resources ResourceList(const doc::Node& n, std::string_view path, ObjectContext& ctx);
// Adds one quantity of resource `name` (kai units) to `res`; false (and an error) when malformed.
bool AddQuantity(Resources& res, std::string_view name, const std::string& text,
                 std::string_view path, ObjectContext& ctx);
// A container's effective request: requests, defaulted per resource from limits (decode_pod.cc).
Resources ContainerRequest(const doc::Node& c, std::string_view path, ObjectContext& ctx);
ObjectMeta DecodeMeta(const doc::Node& doc, const std::string& kind, bool namespaced,
                      const std::string& source, ObjectContext& ctx);

// One decoder per kind: decodes `doc` into a new object of `state`.
using DecodeFn = void (*)(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                          ClusterState& state);
void DecodePod(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
               ClusterState& state);  // decode_pod.cc
void DecodeNode(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                ClusterState& state);  // decode_node.cc
void DecodePodGroup(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                    ClusterState& state);  // decode_podgroup.cc
void DecodeQueue(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                 ClusterState& state);  // decode_queue.cc
// decode_dra.cc: resource.k8s.io kinds, and a pod's spec.resourceClaims (with the names
// status.resourceClaimStatuses gives claims made from templates).
void DecodeResourceClaim(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                         ClusterState& state);
void DecodeResourceClaimTemplate(const doc::Node& doc, const std::string& source,
                                 ObjectContext& ctx, ClusterState& state);
void DecodeDeviceClass(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                       ClusterState& state);
void DecodeResourceSlice(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                         ClusterState& state);
// A BindRequest's spec.resourceClaimAllocations and spec.extendedResourceClaimAllocation.
void DecodeBindRequestAllocations(const doc::Node& spec, BindRequestObject& b, ObjectContext& ctx);
CompactVector<PodClaimRef> PodResourceClaims(const doc::Node& spec, const doc::Node& status,
                                             ObjectContext& ctx);
// A node selector's requirements and terms (decode_pod.cc): unknown operators are refused.
std::vector<SelectorRequirement> Requirements(const doc::Node& n, std::string_view path,
                                              ObjectContext& ctx);
std::vector<NodeSelectorTerm> NodeSelectorTerms(const doc::Node& terms, std::string_view path,
                                                ObjectContext& ctx);
// decode_storage.cc: PersistentVolumes, claims, StorageClasses, CSINodes, and a pod's claims
// (persistentVolumeClaim and ephemeral volumes) and host ports.
void DecodePersistentVolume(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                            ClusterState& state);
void DecodePersistentVolumeClaim(const doc::Node& doc, const std::string& source,
                                 ObjectContext& ctx, ClusterState& state);
void DecodeStorageClass(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                        ClusterState& state);
void DecodeCsiNode(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                   ClusterState& state);
void DecodePodStorage(const doc::Node& spec, PodObject& pod, ObjectContext& ctx);
void DecodeShard(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                 ClusterState& state);  // decode_shard.cc
// decode_small_kinds.cc: kinds of a few fields each.
void DecodePriorityClass(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                         ClusterState& state);
void DecodeTopology(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                    ClusterState& state);
void DecodeBindRequest(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                       ClusterState& state);
// decode_numa.cc: NodeResourceTopology objects, a pod's NUMA request and placement records, a
// BindRequest's spec.predictedNUMAZones.
void DecodeNodeTopology(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                        ClusterState& state);
void DecodePodNuma(const doc::Node& doc, PodObject& pod, ObjectContext& ctx);
NumaPlacementRecord DecodeNumaRecord(const doc::Node& n, std::string_view path, ObjectContext& ctx);

}  // namespace kai::decoding
