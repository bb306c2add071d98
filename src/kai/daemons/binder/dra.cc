// dynamicresources: the binder's half of DRA. The scheduler chose each claim's devices (the
// BindRequest's spec.resourceClaimAllocations); before the pod is bound, each claim gets that
// allocation (unless it has one: its devices, node selector and driver configuration, e.g. an
// IMEX channel's ComputeDomain) and the pod in status.reservedFor, so the kubelet prepares the
// devices. DRA-backed extended resources (spec.extendedResourceClaimAllocation) get a claim of
// their own, made here: annotated resource.kubernetes.io/extended-resource-claim, owned by the
// pod (so it goes with it), allocated and reserved the same way, and named in the pod's
// status.extendedResourceClaimStatus. A retried bind finds the claim it made before.
#include <rapidjson/document.h>

#include "kai/core/k8s/json_body.h"
#include "kai/daemons/binder/plugins.h"

namespace kai::binder {
namespace {

using k8s::JsonWriter;
using k8s::KeyStr;
using k8s::Str;

constexpr k8s::ResourceType kResourceClaims{"resource.k8s.io/v1", "ResourceClaim", "resourceclaims",
                                            true};
constexpr int kConflictAttempts = 5;
constexpr std::string_view kDeleteProtection = "resource.kubernetes.io/delete-protection";

struct Consumer {
  std::string api_group, resource, name, uid;
};

std::vector<Consumer> ReservedFor(const doc::Node& claim) {
  std::vector<Consumer> out;
  const doc::Node r = claim["status"]["reservedFor"];
  for (size_t i = 0; i < r.size(); ++i) {
    out.push_back({std::string(r[i]["apiGroup"].Scalar()), std::string(r[i]["resource"].Scalar()),
                   std::string(r[i]["name"].Scalar()), std::string(r[i]["uid"].Scalar())});
  }
  return out;
}

// What a claim is to be given: the devices, their driver configuration, the node.
struct Allocation {
  const std::vector<AllocatedDevice>& devices;
  const std::vector<DeviceConfig>& config;
  const std::string& node;
};

// A merge patch of the claim's status: the allocation (when the claim has none yet) and the full
// reservedFor list (a merge patch replaces lists), guarded by the resourceVersion read.
std::string ClaimStatusPatch(std::string_view rv, const std::vector<Consumer>& reserved,
                             const Allocation* allocation) {
  return k8s::Json([&](JsonWriter& w) {
    w.StartObject();
    Str(w, "metadata");
    w.StartObject();
    KeyStr(w, "resourceVersion", rv);
    w.EndObject();
    Str(w, "status");
    w.StartObject();
    if (allocation) {
      k8s::AllocationJson(w, allocation->devices, allocation->config, allocation->node);
    }
    Str(w, "reservedFor");
    w.StartArray();
    for (const Consumer& c : reserved) {
      w.StartObject();
      if (!c.api_group.empty()) KeyStr(w, "apiGroup", c.api_group);
      KeyStr(w, "resource", c.resource);
      KeyStr(w, "name", c.name);
      KeyStr(w, "uid", c.uid);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    w.EndObject();
  });
}

std::string NewExtendedClaim(const PodView& pod, const ExtendedClaimAllocation& e) {
  return k8s::Json([&](JsonWriter& w) {
    w.StartObject();
    KeyStr(w, "apiVersion", kResourceClaims.api_version);
    KeyStr(w, "kind", kResourceClaims.kind);
    Str(w, "metadata");
    w.StartObject();
    KeyStr(w, "generateName", pod.name + "-extended-resources-");
    KeyStr(w, "namespace", pod.ns);
    Str(w, "finalizers");
    w.StartArray();
    Str(w, kDeleteProtection);
    w.EndArray();
    Str(w, "annotations");
    w.StartObject();
    KeyStr(w, kExtendedResourceClaimAnnotation, "true");
    w.EndObject();
    Str(w, "ownerReferences");
    w.StartArray();
    w.StartObject();
    KeyStr(w, "apiVersion", "v1");
    KeyStr(w, "kind", "Pod");
    KeyStr(w, "name", pod.name);
    KeyStr(w, "uid", pod.uid);
    Str(w, "controller");
    w.Bool(true);
    Str(w, "blockOwnerDeletion");
    w.Bool(true);
    w.EndObject();
    w.EndArray();
    w.EndObject();
    Str(w, "spec");
    w.StartObject();
    Str(w, "devices");
    w.StartObject();
    k8s::DeviceRequestsJson(w, "requests", e.requests);
    w.EndObject();
    w.EndObject();
    w.EndObject();
  });
}

std::string PodClaimStatusPatch(const std::string& claim, const ExtendedClaimAllocation* e) {
  return k8s::Json([&](JsonWriter& w) {
    w.StartObject();
    Str(w, "status");
    w.StartObject();
    Str(w, "extendedResourceClaimStatus");
    if (!e) {
      w.Null();
    } else {
      w.StartObject();
      KeyStr(w, "resourceClaimName", claim);
      k8s::RequestMappingsJson(w, "requestMappings", e->mappings);
      w.EndObject();
    }
    w.EndObject();
    w.EndObject();
  });
}

// Whether `claim` is the extended-resource claim this pod's binder made.
bool MadeFor(const doc::Node& claim, const PodView& pod) {
  const doc::Node md = claim["metadata"];
  if (md["annotations"][std::string(kExtendedResourceClaimAnnotation)].Scalar() != "true") {
    return false;
  }
  const doc::Node owners = md["ownerReferences"];
  for (size_t i = 0; i < owners.size(); ++i) {
    if (owners[i]["name"].Scalar() == pod.name && owners[i]["uid"].Scalar() == pod.uid &&
        owners[i]["controller"].Scalar() == "true") {
      return true;
    }
  }
  return false;
}

class DynamicResources final : public BindPlugin {
 public:
  explicit DynamicResources(const k8s::ApiClient& c) : client_(c) {}
  std::string_view Name() const override { return "dynamicresources"; }

  Status PreBind(BindContext& ctx) override {
    const BindRequestObject& r = ctx.request;
    if (r.claim_allocations.empty() && !r.extended_allocation) {
      if (!ctx.pod.resource_claims) return Ok();
      return Error{"pod " + ctx.pod.Ref() +
                   " has spec.resourceClaims but its BindRequest has no "
                   "spec.resourceClaimAllocations: the claims' devices are not chosen"};
    }
    for (const ClaimAllocation& a : r.claim_allocations) {
      auto it = ctx.pod.resource_claim_names.find(a.name);
      if (it == ctx.pod.resource_claim_names.end()) {
        return Error{"pod " + ctx.pod.Ref() + ": claim " + a.name +
                     " of the BindRequest is not a spec.resourceClaims entry with a "
                     "ResourceClaim (a template's claim not generated yet?)"};
      }
      const Allocation alloc{a.devices, a.config, a.node};
      if (auto s = Reserve(ctx.pod, it->second, alloc); !s.ok()) return s;
    }
    if (r.extended_allocation) return BindExtended(ctx, *r.extended_allocation);
    return Ok();
  }

  // The extended-resource claim goes (the pod is bound elsewhere or not at all); the claims of
  // spec.resourceClaims keep their allocation and reservation, as KAI's binder leaves them.
  Status Rollback(BindContext& ctx) override {
    if (ctx.extended_claim.empty()) return Ok();
    client_.Delete(k8s::ObjectPath(kResourceClaims, ctx.pod.ns, ctx.extended_claim));
    client_.Patch(k8s::ObjectPath(k8s::resources::kPod, ctx.pod.ns, ctx.pod.name, "status"),
                  PodClaimStatusPatch("", nullptr), k8s::PatchType::kMerge);
    ctx.extended_claim.clear();
    return Ok();
  }

 private:
  std::string ClaimRef(const PodView& pod, const std::string& claim) const {
    return "ResourceClaim " + pod.ns + "/" + claim + " (of pod " + pod.Ref() + ")";
  }

  // Gives the claim its allocation (when it has none) and the pod a place in reservedFor.
  Status Reserve(const PodView& pod, const std::string& claim, const Allocation& allocation) {
    const std::string path = k8s::ObjectPath(kResourceClaims, pod.ns, claim);
    for (int attempt = 0; attempt < kConflictAttempts; ++attempt) {
      k8s::HttpResponse r = client_.Get(path);
      if (r.status == 404) return Error{ClaimRef(pod, claim) + " not found"};
      if (!r.ok()) return Error{k8s::Describe({"GET", path}, r)};
      auto d = doc::ParseJson(r.body);
      if (!d.ok() || d->Roots().empty()) return Error{ClaimRef(pod, claim) + ": unreadable"};
      const doc::Node obj = d->Roots()[0];
      const bool allocated = obj["status"]["allocation"].IsMap();
      std::vector<Consumer> reserved = ReservedFor(obj);
      const bool named = std::any_of(reserved.begin(), reserved.end(),
                                     [&](const Consumer& c) { return c.uid == pod.uid; });
      if (named && allocated) return Ok();
      if (!named) reserved.push_back({"", "pods", pod.name, pod.uid});
      const std::string body = ClaimStatusPatch(obj["metadata"]["resourceVersion"].Scalar(),
                                                reserved, allocated ? nullptr : &allocation);
      r = client_.Patch(path + "/status", body, k8s::PatchType::kMerge);
      if (r.status == 409) continue;  // changed since read: read it again
      if (!r.ok()) return Error{k8s::Describe({"PATCH", path + "/status"}, r)};
      return Ok();
    }
    return Error{ClaimRef(pod, claim) + ": its status changed under each of " +
                 std::to_string(kConflictAttempts) + " updates"};
  }

  Status BindExtended(BindContext& ctx, const ExtendedClaimAllocation& e) {
    auto name = ExtendedClaim(ctx.pod, e);
    if (!name.ok()) return name.error();
    ctx.extended_claim = *name;
    if (auto s = Reserve(ctx.pod, *name, {e.devices, e.config, e.node}); !s.ok()) return s;
    const std::string path =
        k8s::ObjectPath(k8s::resources::kPod, ctx.pod.ns, ctx.pod.name, "status");
    k8s::HttpResponse r =
        client_.Patch(path, PodClaimStatusPatch(*name, &e), k8s::PatchType::kMerge);
    if (!r.ok()) return Error{k8s::Describe({"PATCH", path}, r)};
    return Ok();
  }

  // The claim an earlier attempt made for the pod, else a new one.
  Result<std::string> ExtendedClaim(const PodView& pod, const ExtendedClaimAllocation& e) {
    const std::string collection = k8s::CollectionPath(kResourceClaims, pod.ns);
    k8s::HttpResponse r = client_.Get(collection);
    if (!r.ok()) return Error{k8s::Describe({"GET", collection}, r)};
    auto d = doc::ParseJson(r.body);
    if (!d.ok() || d->Roots().empty()) return Error{"GET " + collection + ": unreadable list"};
    const doc::Node items = d->Roots()[0]["items"];
    for (size_t i = 0; i < items.size(); ++i) {
      if (MadeFor(items[i], pod)) return std::string(items[i]["metadata"]["name"].Scalar());
    }
    r = client_.Create(collection, NewExtendedClaim(pod, e));
    if (!r.ok()) return Error{k8s::Describe({"POST", collection}, r)};
    auto created = doc::ParseJson(r.body);
    if (!created.ok() || created->Roots().empty()) {
      return Error{"POST " + collection + ": unreadable answer"};
    }
    return std::string(created->Roots()[0]["metadata"]["name"].Scalar());
  }

  const k8s::ApiClient& client_;
};

}  // namespace

std::unique_ptr<BindPlugin> MakeDynamicResources(const k8s::ApiClient& client) {
  return std::make_unique<DynamicResources>(client);
}

}  // namespace kai::binder
