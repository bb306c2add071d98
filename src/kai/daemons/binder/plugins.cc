#include "kai/daemons/binder/plugins.h"

#include <algorithm>
#include <charconv>
#include <thread>

#include "kai/core/k8s/decode.h"
#include "kai/core/k8s/json_body.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/plugins/predicates/volumes.h"
#include "kai/core/snapshot/storage.h"
#include "kai/daemons/binder/hamicore.h"
#include "kai/daemons/binder/nvfractions.h"

namespace kai::binder {
namespace {

namespace res = k8s::resources;
using k8s::JsonWriter;
using k8s::KeyStr;
using k8s::Str;

constexpr std::string_view kVolumeBinding = "volumebinding";
constexpr std::string_view kDynamicResources = "dynamicresources";
constexpr std::string_view kGpuSharing = "gpusharing";
constexpr std::string_view kHamiCore = "hamicore";

// --- volumebinding: every PersistentVolumeClaim the pod mounts is bound before the pod is ---

class VolumeBinding final : public BindPlugin {
 public:
  VolumeBinding(const k8s::ApiClient& c, std::chrono::seconds t, const std::atomic<bool>& stop)
      : client_(c), timeout_(t), stop_(stop) {}
  std::string_view Name() const override { return kVolumeBinding; }

  Status PreBind(BindContext& ctx) override {
    if (ctx.pod.claim_names.empty()) return Ok();
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    for (const std::string& claim : ctx.pod.claim_names) {
      if (auto s = Prepare(ctx, claim); !s.ok()) return s;
    }
    for (const std::string& claim : ctx.pod.claim_names) {
      if (auto s = WaitBound(ctx, claim, deadline); !s.ok()) return s;
    }
    return Ok();
  }

  Status Rollback(BindContext& ctx) override {
    // A volume given to a claim that is still unbound is given back (its claimRef removed).
    for (const std::string& volume : ctx.bound_volumes) {
      const std::string path = k8s::ObjectPath(res::kPersistentVolume, "", volume);
      k8s::HttpResponse r = client_.Get(path);
      auto d = doc::ParseJson(r.body);
      if (!r.ok() || !d.ok() || d->Roots()[0]["status"]["phase"].Scalar() == "Bound") continue;
      client_.Patch(path, R"({"spec":{"claimRef":null}})", k8s::PatchType::kMerge);
    }
    // A claim still unbound forgets the node it was given, so that its volume is not made
    // there for a pod that will run elsewhere.
    for (const std::string& claim : ctx.annotated_pvcs) {
      k8s::MetaPatch p;
      p.annotations.push_back({std::string(keys::kSelectedNodeAnnotation), std::nullopt});
      const std::string path = k8s::ObjectPath(res::kPersistentVolumeClaim, ctx.pod.ns, claim);
      k8s::HttpResponse r = client_.Get(path);
      auto d = doc::ParseJson(r.body);
      if (!r.ok() || !d.ok() || d->Roots()[0]["status"]["phase"].Scalar() == "Bound") continue;
      client_.Patch(path, k8s::MetadataMergePatch(p), k8s::PatchType::kMerge);
    }
    return Ok();
  }

 private:
  std::string ClaimRef(const BindContext& ctx, const std::string& claim) const {
    return "PersistentVolumeClaim " + ctx.pod.ns + "/" + claim;
  }

  // A WaitForFirstConsumer claim gets its volume on the selected node, as kube-scheduler gives
  // it: a free volume there that satisfies it is bound to it (its claimRef: the volume controller
  // completes the binding), else its provisioner is asked for one there (the selected-node
  // annotation).
  Status Prepare(BindContext& ctx, const std::string& claim) {
    const std::string path = k8s::ObjectPath(res::kPersistentVolumeClaim, ctx.pod.ns, claim);
    k8s::HttpResponse r = client_.Get(path);
    if (r.status == 404) return Error{ClaimRef(ctx, claim) + " (a volume of the pod) not found"};
    if (!r.ok()) return Error{k8s::Describe({"GET", path}, r)};
    ClusterState world;
    auto d = doc::ParseJson(r.body);
    if (!d.ok()) return Error{ClaimRef(ctx, claim) + ": " + d.error().message};
    const doc::Node pvc = d->Roots()[0];
    if (pvc["status"]["phase"].Scalar() == "Bound") return Ok();
    if (pvc["metadata"]["annotations"][keys::kSelectedNodeAnnotation].IsScalar()) return Ok();
    if (!pvc["spec"]["volumeName"].Scalar().empty()) return Ok();  // the controller binds it
    const std::string_view sc = pvc["spec"]["storageClassName"].Scalar();
    if (sc.empty()) return Ok();
    if (auto s = DecodeObject(pvc, "v1", "PersistentVolumeClaim", path, world); !s.ok()) {
      return s.error();
    }
    auto cls = Read(k8s::ObjectPath(res::kStorageClass, "", sc), res::kStorageClass, world);
    if (!cls.ok()) return cls.error();
    if (world.storage.classes.empty() || !world.storage.classes[0].wait_for_first_consumer) {
      return Ok();
    }
    auto bound = BindFreeVolume(ctx, world);
    if (!bound.ok() || *bound) return bound.ok() ? Ok() : Status(bound.error());
    if (world.storage.classes[0].provisioner == keys::kNoProvisioner) {
      return Error{ClaimRef(ctx, claim) + ": no free PersistentVolume of StorageClass " +
                   std::string(sc) + " on node " + ctx.request.selected_node};
    }
    k8s::MetaPatch p;
    p.annotations.push_back(
        {std::string(keys::kSelectedNodeAnnotation), ctx.request.selected_node});
    r = client_.Patch(path, k8s::MetadataMergePatch(p), k8s::PatchType::kMerge);
    if (!r.ok()) return Error{k8s::Describe({"PATCH", path}, r)};
    ctx.annotated_pvcs.push_back(claim);
    return Ok();
  }

  // GETs one object into `world`.
  Status Read(const std::string& path, const k8s::ResourceType& type, ClusterState& world) const {
    const k8s::HttpResponse r = client_.Get(path);
    if (!r.ok()) return Error{k8s::Describe({"GET", path}, r)};
    auto d = doc::ParseJson(r.body);
    if (!d.ok()) return Error{path + ": " + d.error().message};
    return DecodeObject(d->Roots()[0], type.api_version, type.kind, path, world);
  }

  // Binds the claim (world.storage.claims[0]) to the volume kube-scheduler would choose on the
  // selected node; false when there is none. The volume's resourceVersion makes a volume another
  // binder took meanwhile a conflict (an error: the bind is retried).
  Result<bool> BindFreeVolume(BindContext& ctx, ClusterState& world) {
    // Listed in pages (500 a page), as the admission server lists pods.
    const std::string volumes = k8s::CollectionPath(res::kPersistentVolume, "");
    Status decoded = Ok();
    k8s::ApiClient::ListCallbacks cb;
    cb.page = [&](const doc::Node& items) {
      for (size_t i = 0; i < items.size() && decoded.ok(); ++i) {
        decoded = DecodeObject(items[i], "v1", "PersistentVolume", volumes, world);
      }
    };
    cb.restart = [&] {
      world.storage.volumes.clear();
      decoded = Ok();
    };
    if (auto rv = client_.List(volumes, "", 500, cb); !rv.ok()) return rv.error();
    if (!decoded.ok()) return decoded.error();
    const auto view = BuildStorageView(world.storage);
    const PersistentVolumeClaimObject& claim = world.storage.claims[0];
    const std::string_view cls = view->ClassName(claim);
    if (std::none_of(view->free_volumes.begin(), view->free_volumes.end(),
                     [&](const PersistentVolumeObject* v) { return v->storage_class == cls; })) {
      return false;  // nothing to choose from: the node need not be read
    }
    const std::string& node = ctx.request.selected_node;
    if (auto s = Read(k8s::ObjectPath(res::kNode, "", node), res::kNode, world); !s.ok()) {
      return s.error();
    }
    const PersistentVolumeObject* pv = plugins::FreeVolumeFor(
        *view, claim, world.nodes[0], [](const PersistentVolumeObject&) { return false; });
    if (!pv) return false;
    const std::string path = k8s::ObjectPath(res::kPersistentVolume, "", pv->meta.name);
    const k8s::HttpResponse got = client_.Get(path);
    auto d = doc::ParseJson(got.body);
    if (!got.ok() || !d.ok()) return Error{k8s::Describe({"GET", path}, got)};
    const std::string version(d->Roots()[0]["metadata"]["resourceVersion"].Scalar());
    const std::string body = k8s::Json([&](JsonWriter& w) {
      w.StartObject();
      Str(w, "metadata");
      w.StartObject();
      KeyStr(w, "resourceVersion", version);
      Str(w, "annotations");
      w.StartObject();
      KeyStr(w, "pv.kubernetes.io/bound-by-controller", "yes");
      w.EndObject();
      w.EndObject();
      Str(w, "spec");
      w.StartObject();
      Str(w, "claimRef");
      w.StartObject();
      KeyStr(w, "apiVersion", "v1");
      KeyStr(w, "kind", "PersistentVolumeClaim");
      KeyStr(w, "namespace", claim.meta.ns);
      KeyStr(w, "name", claim.meta.name);
      KeyStr(w, "uid", claim.meta.uid);
      w.EndObject();
      w.EndObject();
      w.EndObject();
    });
    const k8s::HttpResponse r = client_.Patch(path, body, k8s::PatchType::kMerge);
    if (!r.ok()) return Error{k8s::Describe({"PATCH", path}, r)};
    ctx.bound_volumes.push_back(pv->meta.name);
    return true;
  }

  Status WaitBound(const BindContext& ctx, const std::string& claim,
                   std::chrono::steady_clock::time_point deadline) {
    const std::string path = k8s::ObjectPath(res::kPersistentVolumeClaim, ctx.pod.ns, claim);
    for (;;) {
      k8s::HttpResponse r = client_.Get(path);
      auto d = doc::ParseJson(r.body);
      if (r.ok() && d.ok() && d->Roots()[0]["status"]["phase"].Scalar() == "Bound") return Ok();
      if (r.status == 404) return Error{ClaimRef(ctx, claim) + " was deleted while binding"};
      if (stop_.load() || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    return Error{ClaimRef(ctx, claim) + " is not bound after " + std::to_string(timeout_.count()) +
                 "s (bindTimeoutSeconds)"};
  }

  const k8s::ApiClient& client_;
  std::chrono::seconds timeout_;
  const std::atomic<bool>& stop_;
};

// --- gpusharing: the fraction container learns its GPU through two per-pod ConfigMaps, or an
// NvFractions container through the pod's devices annotation (nvfractions.h) ---

class GpuSharing final : public BindPlugin {
 public:
  GpuSharing(const k8s::ApiClient& c, bool cdi) : client_(c), cdi_(cdi) {}
  std::string_view Name() const override { return kGpuSharing; }

  Status PreBind(BindContext& ctx) override {
    if (!IsSharedGpu(ctx.request)) return Ok();
    auto nv = NvFractionsContainer(ctx.pod);
    if (!nv.ok()) return nv.error();
    if (*nv) return WriteNvFractionsDevices(client_, ctx.pod, **nv, ctx.gpu_ids);
    auto c = FractionContainer(ctx.pod);
    if (!c.ok()) return c.error();
    auto names = SharingConfigMapNames(ctx.pod, *c);
    if (!names.ok()) return names.error();
    std::string devices;
    for (const std::string& id : ctx.gpu_ids) {
      if (!devices.empty()) devices += ",";
      devices += cdi_ ? std::string(keys::kCdiDevicePrefix) + id : id;
    }
    std::map<std::string, std::string> caps{
        {std::string(keys::kGpuPortionEnv), ctx.request.gpu_portion},
        {std::string(keys::kRunaiNumOfGpusEnv), ctx.request.gpu_portion}};
    std::map<std::string, std::string> direct;
    // Admission points NVIDIA_VISIBLE_DEVICES at the capabilities map when it adds it as a
    // ConfigMap key reference; otherwise the container takes it from the env map in full.
    (c->container->visible_devices_from_config_map
         ? caps
         : direct)[std::string(keys::kNvidiaVisibleDevices)] = devices;
    if (auto s = Upsert(ctx.pod, names->capabilities, caps); !s.ok()) return s;
    return Upsert(ctx.pod, names->direct_env, direct);
  }

  Status Rollback(BindContext& ctx) override {
    if (!IsSharedGpu(ctx.request)) return Ok();
    auto nv = NvFractionsContainer(ctx.pod);
    if (nv.ok() && *nv) return RemoveNvFractionsDevices(client_, ctx.pod, **nv);
    auto c = FractionContainer(ctx.pod);
    if (!c.ok()) return Ok();
    auto names = SharingConfigMapNames(ctx.pod, *c);
    if (!names.ok()) return Ok();
    std::string errors;
    for (const std::string& name : {names->capabilities, names->direct_env}) {
      const std::string path = k8s::ObjectPath(res::kConfigMap, ctx.pod.ns, name);
      k8s::HttpResponse r = client_.Delete(path);
      if (!r.ok() && r.status != 404) errors += k8s::Describe({"DELETE", path}, r) + "; ";
    }
    if (!errors.empty()) return Error{errors};
    return Ok();
  }

 private:
  // The ConfigMap, owned by the pod (garbage-collected with it), with `data` merged in.
  Status Upsert(const PodView& pod, const std::string& name,
                const std::map<std::string, std::string>& data) {
    auto body = [&](bool full) {
      return k8s::Json([&](JsonWriter& w) {
        w.StartObject();
        if (full) {
          KeyStr(w, "apiVersion", "v1");
          KeyStr(w, "kind", "ConfigMap");
        }
        Str(w, "metadata");
        w.StartObject();
        if (full) {
          KeyStr(w, "name", name);
          KeyStr(w, "namespace", pod.ns);
        }
        Str(w, "ownerReferences");
        w.StartArray();
        w.StartObject();
        KeyStr(w, "apiVersion", "v1");
        KeyStr(w, "kind", "Pod");
        KeyStr(w, "name", pod.name);
        KeyStr(w, "uid", pod.uid);
        w.EndObject();
        w.EndArray();
        w.EndObject();
        Str(w, "data");
        w.StartObject();
        for (const auto& [k, v] : data) KeyStr(w, k, v);
        w.EndObject();
        w.EndObject();
      });
    };
    const std::string coll = k8s::CollectionPath(res::kConfigMap, pod.ns);
    k8s::HttpResponse r = client_.Create(coll, body(true));
    if (r.ok()) return Ok();
    const std::string path = k8s::ObjectPath(res::kConfigMap, pod.ns, name);
    if (r.status == 409) {
      r = client_.Patch(path, body(false), k8s::PatchType::kMerge);
      if (r.ok()) return Ok();
      return Error{"ConfigMap " + pod.ns + "/" + name + ": " + k8s::Describe({"PATCH", path}, r)};
    }
    return Error{"ConfigMap " + pod.ns + "/" + name + ": " + k8s::Describe({"POST", coll}, r)};
  }

  const k8s::ApiClient& client_;
  bool cdi_;
};

Result<int64_t> IntArgument(const PluginSettings& s, std::string_view plugin,
                            const std::string& name) {
  auto it = s.arguments.find(name);
  if (it == s.arguments.end()) {
    return Error{"binder plugin " + std::string(plugin) + ": missing argument " + name};
  }
  int64_t v = 0;
  const std::string& t = it->second;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size() || v <= 0) {
    return Error{"binder plugin " + std::string(plugin) + ": argument " + name +
                 ": expected a positive integer, got \"" + t + "\""};
  }
  return v;
}

Result<bool> BoolArgument(const PluginSettings& s, std::string_view plugin,
                          const std::string& name) {
  auto it = s.arguments.find(name);
  if (it == s.arguments.end()) {
    return Error{"binder plugin " + std::string(plugin) + ": missing argument " + name};
  }
  if (it->second == "true") return true;
  if (it->second == "false") return false;
  return Error{"binder plugin " + std::string(plugin) + ": argument " + name +
               ": expected true or false, got \"" + it->second + "\""};
}

}  // namespace

std::unique_ptr<BindPlugin> MakeVolumeBinding(const k8s::ApiClient& client,
                                              std::chrono::seconds timeout,
                                              const std::atomic<bool>& stop) {
  return std::make_unique<VolumeBinding>(client, timeout, stop);
}
std::unique_ptr<BindPlugin> MakeGpuSharing(const k8s::ApiClient& client, bool cdi) {
  return std::make_unique<GpuSharing>(client, cdi);
}

PluginConfig DefaultPluginConfig() {
  PluginConfig c;
  c[std::string(kVolumeBinding)] = {true, 300, {{"bindTimeoutSeconds", "120"}}};
  c[std::string(kDynamicResources)] = {true, 200, {{"bindTimeoutSeconds", "120"}}};
  c[std::string(kGpuSharing)] = {true, 100, {{"cdiEnabled", "false"}}};
  c[std::string(kHamiCore)] = {false, 50, {}};
  return c;
}

Result<PluginConfig> MergePluginConfig(PluginConfig base, const std::string& json) {
  auto d = doc::ParseJson(json);
  if (!d.ok()) return Error{"--plugins: " + d.error().message};
  const doc::Node root = d->Roots().empty() ? doc::Node() : d->Roots()[0];
  if (!root.IsMap()) return Error{"--plugins: expected a JSON object of plugin names"};
  for (const auto& e : root.Entries()) {
    const std::string name(e.first.Scalar());
    auto it = base.find(name);
    if (it == base.end()) return Error{"--plugins: unknown binder plugin \"" + name + "\""};
    const doc::Node v = e.second;
    if (!v.IsMap()) return Error{"--plugins: " + name + ": expected an object"};
    if (v["enabled"].IsScalar()) {
      const std::string_view b = v["enabled"].Scalar();
      if (b != "true" && b != "false") {
        return Error{"--plugins: " + name + ".enabled: expected true or false"};
      }
      it->second.enabled = b == "true";
    }
    if (v["priority"].IsScalar()) {
      const std::string_view t = v["priority"].Scalar();
      int p = 0;
      auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), p);
      if (ec != std::errc() || ptr != t.data() + t.size()) {
        return Error{"--plugins: " + name + ".priority: expected an integer"};
      }
      it->second.priority = p;
    }
    if (v["arguments"].IsMap()) {
      it->second.arguments.clear();
      for (const auto& a : v["arguments"].Entries()) {
        it->second.arguments[std::string(a.first.Scalar())] = std::string(a.second.Scalar());
      }
    }
  }
  return base;
}

Result<std::vector<std::unique_ptr<BindPlugin>>> BuildPlugins(
    const PluginConfig& config, const k8s::ApiClient& client, const std::atomic<bool>& stop,
    const std::function<void(const std::string&)>& log) {
  if (auto s = CheckHamiCoreOrder(config); !s.ok()) return s.error();
  std::vector<std::pair<std::string, const PluginSettings*>> order;
  for (const auto& [name, s] : config) {
    if (s.enabled) order.push_back({name, &s});
  }
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    if (a.second->priority != b.second->priority) return a.second->priority > b.second->priority;
    return a.first < b.first;
  });
  std::vector<std::unique_ptr<BindPlugin>> out;
  for (const auto& [name, s] : order) {
    if (name == kVolumeBinding) {
      auto t = IntArgument(*s, name, "bindTimeoutSeconds");
      if (!t.ok()) return t.error();
      out.push_back(MakeVolumeBinding(client, std::chrono::seconds(*t), stop));
    } else if (name == kDynamicResources) {
      auto t = IntArgument(*s, name, "bindTimeoutSeconds");
      if (!t.ok()) return t.error();
      out.push_back(MakeDynamicResources(client));
    } else if (name == kGpuSharing) {
      auto cdi = BoolArgument(*s, name, "cdiEnabled");
      if (!cdi.ok()) return cdi.error();
      out.push_back(MakeGpuSharing(client, *cdi));
    } else if (name == kHamiCore) {
      out.push_back(MakeHamiCore(client, log));
    } else {
      return Error{"binder plugin " + name + " has no implementation in kai"};
    }
  }
  return out;
}

}  // namespace kai::binder
