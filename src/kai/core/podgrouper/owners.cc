#include "kai/core/podgrouper/owners.h"

namespace kai::podgrouper {

std::vector<const Object*> OwnerChain::OwnerPointers() const {
  std::vector<const Object*> out;
  out.reserve(owners.size());
  for (const Object& o : owners) out.push_back(&o);
  return out;
}

Result<OwnerChain> WalkOwners(const Object& pod, const ObjectReader& reader) {
  OwnerChain chain;
  chain.pod = pod;
  if (pod.owner_refs.empty()) return chain;
  OwnerReference next = pod.owner_refs.front();
  while (true) {
    auto describe = [&] {
      return next.kind + " " + pod.ns + "/" + next.name + " (uid " + next.uid + ", an owner of " +
             pod.Ref() + ")";
    };
    if (chain.owners.size() >= kMaxOwnerDepth) {
      return Error{"the owners of " + pod.Ref() + " go deeper than " +
                   std::to_string(kMaxOwnerDepth) + " (a cycle?) at " + describe()};
    }
    Fetched f = reader.Get({next.api_version, next.kind, pod.ns, next.name});
    if (f.status == FetchStatus::kForbidden) {
      chain.stopped_at = next.kind + " " + next.name;
      return chain;
    }
    if (f.status != FetchStatus::kFound) {
      return Error{"failed to find " + describe() + ": " + f.message};
    }
    // The owner was deleted and another object took its name.
    if (f.object.uid != next.uid) {
      return Error{"failed to find " + describe() + ": the " + next.kind +
                   " of that name has uid " + f.object.uid};
    }
    // An object from a list response names neither; the reference does.
    if (f.object.kind.empty()) f.object.kind = next.kind;
    if (f.object.api_version.empty()) f.object.api_version = next.api_version;
    chain.owners.push_back(std::move(f.object));
    const Object& owner = chain.owners.back();
    if (owner.owner_refs.empty()) return chain;
    if (owner.owner_refs.size() > 1) {
      std::string refs;
      for (const OwnerReference& r : owner.owner_refs) {
        refs += (refs.empty() ? "" : ", ") + r.kind + " " + r.name;
      }
      return Error{"found " + owner.Ref() + " with more than one owner (" + refs + "), owning " +
                   pod.Ref()};
    }
    next = owner.owner_refs.front();
  }
}

}  // namespace kai::podgrouper
