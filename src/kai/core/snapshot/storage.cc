#include "kai/core/snapshot/storage.h"

#include <algorithm>
#include <tuple>

namespace kai {
namespace {

template <class M>
auto Find(const M& map, std::string_view key) -> typename M::mapped_type {
  auto it = map.find(key);
  return it == map.end() ? nullptr : it->second;
}

constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";

// The hostnames of a volume whose node affinity is one `kubernetes.io/hostname In` requirement;
// null for any other affinity.
const std::vector<std::string>* OnlyHostnames(const PersistentVolumeObject& pv) {
  if (pv.node_affinity.size() != 1) return nullptr;
  const NodeSelectorTerm& t = pv.node_affinity[0];
  if (t.match_expressions.size() != 1 || !t.match_fields.empty()) return nullptr;
  const SelectorRequirement& r = t.match_expressions[0];
  return r.key == kHostnameLabel && r.op == "In" ? &r.values : nullptr;
}

bool MayBeBound(const PersistentVolumeObject& pv) {
  if (pv.meta.deletion) return false;
  return pv.phase != "Bound" && pv.phase != "Released" && pv.phase != "Failed";
}

}  // namespace

std::string ClaimKey(std::string_view ns, std::string_view name) {
  std::string key;
  key.reserve(ns.size() + name.size() + 1);
  key.append(ns).append("/").append(name);
  return key;
}

const PersistentVolumeClaimObject* StorageView::Claim(std::string_view ns,
                                                      std::string_view name) const {
  auto it = claims.find(ClaimKey(ns, name));
  return it == claims.end() ? nullptr : it->second;
}

const PersistentVolumeObject* StorageView::Volume(std::string_view name) const {
  return Find(volumes, name);
}

const StorageClassObject* StorageView::Class(std::string_view name) const {
  return Find(classes, name);
}

std::string_view StorageView::ClassName(const PersistentVolumeClaimObject& claim) const {
  if (claim.class_set) return claim.storage_class.view();
  return default_class ? std::string_view(default_class->meta.name) : std::string_view();
}

std::shared_ptr<const StorageView> BuildStorageView(const StorageObjects& objects) {
  auto view = std::make_shared<StorageView>();
  for (const PersistentVolumeClaimObject& c : objects.claims) {
    view->claims.emplace(ClaimKey(c.meta.ns, c.meta.name), &c);
  }
  for (const PersistentVolumeObject& v : objects.volumes) {
    view->volumes.emplace(v.meta.name, &v);
    if (MayBeBound(v)) view->free_volumes.push_back(&v);
  }
  std::sort(view->free_volumes.begin(), view->free_volumes.end(), [](auto* a, auto* b) {
    return std::tie(a->capacity, a->meta.name) < std::tie(b->capacity, b->meta.name);
  });
  for (const PersistentVolumeObject* v : view->free_volumes) {
    const std::vector<std::string>* hosts = OnlyHostnames(*v);
    if (!hosts) {
      view->free_elsewhere.push_back(v);
      continue;
    }
    for (const std::string& h : *hosts) view->free_by_host[h].push_back(v);
  }
  for (const StorageClassObject& sc : objects.classes) {
    view->classes.emplace(sc.meta.name, &sc);
    if (!sc.is_default) continue;
    const StorageClassObject* d = view->default_class;
    // Several defaults: the newest wins (the API server's rule), then the name.
    const auto key = [](const StorageClassObject* c) {
      return std::make_tuple(c->meta.creation.value_or(0), std::string_view(c->meta.name));
    };
    if (!d || key(&sc) > key(d)) view->default_class = &sc;
  }
  for (const CsiNodeObject& n : objects.csi_nodes) view->csi_nodes.emplace(n.meta.name, &n);
  return view;
}

}  // namespace kai
