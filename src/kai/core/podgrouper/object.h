#pragma once
// kai podgrouper's view of a Kubernetes object of any kind: a pod, one of its owners, or what a
// grouper looks up (a Revision, a RayCluster, a PodGroup, a ConfigMap). The metadata is decoded;
// the rest (spec, status) stays a doc::Node that the groupers read by path, since every workload
// kind keeps its sizes somewhere else. A reader that meets a malformed field fails with a message
// naming the object and the field ("PyTorchJob team/train: spec.pytorchReplicaSpecs.Worker.
// replicas: expected an integer, got \"two\"").
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/k8s/doc.h"
#include "kai/core/model/labels.h"
#include "kai/core/util/result.h"

namespace kai::podgrouper {

struct OwnerReference {
  std::string api_version, kind, name, uid;
  friend bool operator==(const OwnerReference&, const OwnerReference&) = default;
};

struct Object {
  std::string api_version;  // "batch/v1"; "v1" for the core group
  std::string kind;
  std::string name, ns, uid;
  Labels labels, annotations;
  std::vector<OwnerReference> owner_refs;  // metadata.ownerReferences, in order
  bool deleting = false;                   // metadata.deletionTimestamp is set
  // The whole object; valid while `document` lives (every copy of the Object shares it).
  doc::Node node;
  std::shared_ptr<const doc::Document> document;

  std::string_view Group() const;    // "" for the core group
  std::string_view Version() const;  // "v1"
  // Kubernetes' GroupKind.String(): "Deployment.apps"; "Pod" for the core group.
  std::string GroupKind() const;
  // "Kind namespace/name" (or "Kind name" when cluster-scoped), for messages.
  std::string Ref() const;
  // A label's or annotation's value; nullptr when absent (an empty value is present).
  const std::string* Label(std::string_view key) const;
  const std::string* Annotation(std::string_view key) const;
};

// Decodes one object. `default_api_version` and `default_kind` stand in when the object states
// none (the items of an API list response carry neither). The error names the object and field.
Result<Object> DecodeObject(doc::Node node, std::shared_ptr<const doc::Document> document,
                            std::string_view default_api_version = "",
                            std::string_view default_kind = "");
// Every object of a parsed manifest stream (the items of a `kind: List` document included).
Result<std::vector<Object>> DecodeObjects(std::shared_ptr<const doc::Document> document);
// ParseYaml + DecodeObjects; `source` prefixes a parse error.
Result<std::vector<Object>> ParseObjects(std::string_view yaml, std::string_view source);

// A node of an object with its path from the object's root ("spec.replicatedJobs[1]"), the start
// of a nested read.
struct Field {
  doc::Node node;
  std::string path;
};
inline Field Root(const Object& o) { return {o.node, ""}; }

// Nested reads in the manner of Kubernetes' unstructured.Nested*: `keys` walks maps from `from`.
// An absent (or null) field reads as nullopt; an intermediate that is not a map, or a value of the
// wrong type, is an error naming the object and the full path.
using Keys = std::initializer_list<std::string_view>;
Result<std::optional<Field>> NestedField(const Object& o, const Field& from, Keys keys);
Result<std::optional<std::string>> NestedString(const Object& o, const Field& from, Keys keys);
// A whole decimal number that fits in 32 bits (every count a workload states is an int32).
Result<std::optional<int64_t>> NestedInt(const Object& o, const Field& from, Keys keys);
Result<std::optional<bool>> NestedBool(const Object& o, const Field& from, Keys keys);
// A map: the field itself; a sequence: its elements, each with its indexed path.
Result<std::optional<Field>> NestedMap(const Object& o, const Field& from, Keys keys);
Result<std::optional<std::vector<Field>>> NestedSequence(const Object& o, const Field& from,
                                                         Keys keys);
// A string-valued field read leniently: its text when a scalar, "" otherwise (pod spec fields
// the API server has validated, such as spec.schedulerName).
std::string ScalarAt(const Object& o, Keys keys);

// An error about `o`: "<Kind ns/name>: <path>: <message>" (no path: "<Kind ns/name>: <message>").
Error FieldError(const Object& o, std::string_view path, std::string_view message);

}  // namespace kai::podgrouper
