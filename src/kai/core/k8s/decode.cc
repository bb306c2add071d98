#include "kai/core/k8s/decode.h"

#include "kai/core/k8s/decode_fields.h"
#include "kai/core/k8s/doc.h"

// The decoder's entry points: documents and Lists to objects of known kinds. Each kind's decoder
// has its own file (decode_fields.h lists them).
namespace kai {
namespace {

using namespace decoding;

struct KindDecoder {
  std::string_view api_version;
  std::string_view kind;
  DecodeFn fn;
};

constexpr KindDecoder kDecoders[] = {
    {"v1", "Node", DecodeNode},
    {"v1", "Pod", DecodePod},
    {"scheduling.run.ai/v2", "Queue", DecodeQueue},
    {"scheduling.run.ai/v2alpha2", "PodGroup", DecodePodGroup},
    {"scheduling.k8s.io/v1", "PriorityClass", DecodePriorityClass},
    {"kai.scheduler/v1alpha1", "Topology", DecodeTopology},
    {"kai.scheduler/v1", "SchedulingShard", DecodeShard},
    {"scheduling.run.ai/v1alpha2", "BindRequest", DecodeBindRequest},
    {"resource.k8s.io/v1", "ResourceClaim", DecodeResourceClaim},
    {"resource.k8s.io/v1beta2", "ResourceClaim", DecodeResourceClaim},
    {"resource.k8s.io/v1beta1", "ResourceClaim", DecodeResourceClaim},
    {"resource.k8s.io/v1", "ResourceClaimTemplate", DecodeResourceClaimTemplate},
    {"resource.k8s.io/v1beta2", "ResourceClaimTemplate", DecodeResourceClaimTemplate},
    {"resource.k8s.io/v1beta1", "ResourceClaimTemplate", DecodeResourceClaimTemplate},
    {"resource.k8s.io/v1", "DeviceClass", DecodeDeviceClass},
    {"resource.k8s.io/v1beta2", "DeviceClass", DecodeDeviceClass},
    {"resource.k8s.io/v1beta1", "DeviceClass", DecodeDeviceClass},
    {"resource.k8s.io/v1", "ResourceSlice", DecodeResourceSlice},
    {"resource.k8s.io/v1beta2", "ResourceSlice", DecodeResourceSlice},
    {"resource.k8s.io/v1beta1", "ResourceSlice", DecodeResourceSlice},
    {"topology.node.k8s.io/v1alpha2", "NodeResourceTopology", DecodeNodeTopology},
    {"v1", "PersistentVolume", DecodePersistentVolume},
    {"v1", "PersistentVolumeClaim", DecodePersistentVolumeClaim},
    {"storage.k8s.io/v1", "StorageClass", DecodeStorageClass},
    {"storage.k8s.io/v1", "CSINode", DecodeCsiNode},
};

void DecodeKind(const doc::Node& doc, std::string_view api, std::string_view kind,
                const std::string& source, ObjectContext& ctx, ClusterState& state) {
  for (const KindDecoder& d : kDecoders) {
    if (d.kind == kind && d.api_version == api) {
      d.fn(doc, source, ctx, state);
      return;
    }
  }
  for (const KindDecoder& d : kDecoders) {
    if (d.kind != kind) continue;
    ctx.Fail("apiVersion", "unsupported apiVersion \"" + std::string(api) + "\" for kind " +
                               std::string(kind) + " (kai reads " + std::string(d.api_version) +
                               ")");
    return;
  }
  state.warnings.push_back(source + ": ignoring object of kind " + std::string(api) + "/" +
                           std::string(kind));
}

void DecodeDocument(const doc::Node& doc, const std::string& source, size_t index,
                    ClusterState& state, std::vector<std::string>& errors, bool in_list = false) {
  if (!doc.IsDefined() || doc.IsNull()) return;
  ObjectContext ctx(source, "document " + std::to_string(index + 1), errors);
  if (!doc.IsMap()) {
    ctx.Fail("(root)", "expected a Kubernetes object (a mapping)");
    return;
  }
  const std::string api = Str(doc, "apiVersion", "", ctx).value_or("");
  const std::string kind = Str(doc, "kind", "", ctx).value_or("");
  if (kind.empty()) {
    ctx.Fail("kind", "missing");
    return;
  }
  if (kind == "List" || kind.ends_with("List")) {
    if (in_list) {
      ctx.Fail("kind", "a List inside a List is not supported");
      return;
    }
    const doc::Node items = doc["items"];
    if (IsSeqOrAbsent(items, "items", ctx)) {
      // The API server's typed lists (PodList, ...) leave kind and apiVersion out of the items.
      const std::string item_kind = kind == "List" ? "" : kind.substr(0, kind.size() - 4);
      for (size_t i = 0; i < items.size(); ++i) {
        if (!item_kind.empty() && items[i].IsMap() && !items[i]["kind"].IsDefined()) {
          ObjectContext item_ctx(source, "document " + std::to_string(i + 1), errors);
          DecodeKind(items[i], api, item_kind, source, item_ctx, state);
        } else {
          DecodeDocument(items[i], source, i, state, errors, true);
        }
      }
    }
    return;
  }
  DecodeKind(doc, api, kind, source, ctx, state);
}

}  // namespace

std::string ObjectMeta::Ref() const {
  return ns.empty() ? kind + " " + name : kind + " " + ns + "/" + name;
}

namespace {

// Every top-level value of a parsed stream, as one document each.
std::vector<std::string> DecodeParsed(const Result<doc::Document>& parsed,
                                      const std::string& source, ClusterState& state) {
  std::vector<std::string> errors;
  if (!parsed.ok()) {
    errors.push_back(source + ": " + parsed.error().message);
    return errors;
  }
  const std::vector<doc::Node> docs = parsed->Roots();
  for (size_t i = 0; i < docs.size(); ++i) DecodeDocument(docs[i], source, i, state, errors);
  return errors;
}

}  // namespace

Status DecodeManifestText(std::string_view text, const std::string& source, ClusterState& state) {
  return Problems(DecodeParsed(doc::ParseYaml(text), source, state));
}

Status DecodeJsonText(std::string_view text, const std::string& source, ClusterState& state) {
  return Problems(DecodeParsed(doc::ParseJson(text), source, state));
}

Status DecodeObject(const doc::Node& object, std::string_view api_version, std::string_view kind,
                    const std::string& source, ClusterState& state) {
  std::vector<std::string> errors;
  ObjectContext ctx(source, std::string(kind), errors);
  if (!object.IsMap()) {
    ctx.Fail("(root)", "expected a Kubernetes object (a mapping)");
    return Problems(errors);
  }
  DecodeKind(object, api_version, kind, source, ctx, state);
  return Problems(errors);
}

Result<ClusterState> CheckDecoded(ClusterState state, Status decoded) {
  if (!decoded.ok()) return decoded.error();
  if (Status valid = ValidateCluster(state); !valid.ok()) return valid.error();
  for (auto& w : QuotaWarnings(state)) state.warnings.push_back(std::move(w));
  return state;
}

}  // namespace kai
