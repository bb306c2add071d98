#include "kai/core/operator/render.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>

#include "kai/core/admission/review.h"
#include "kai/core/install/install.h"
#include "kai/core/operator/json_tree.h"

namespace kai::op {
namespace {

constexpr std::string_view kDefaultNamespace = "kai-scheduler";
constexpr std::string_view kConfigApiVersion = "kai.scheduler/v1";

// A KAI Config section and the kai component that serves it. queueController and
// podGroupController are both `kai controllers`.
struct Component {
  std::string_view id;        // the kai.scheduler/component label
  std::string_view sections;  // the Config sections, comma-separated; any enabled deploys it
  std::string_view rbac, install;
};
constexpr Component kComponents[] = {
    {"scheduler", "scheduler", "deploy/rbac/scheduler.yaml", "deploy/install/scheduler.yaml"},
    {"binder", "binder", "deploy/rbac/binder.yaml", "deploy/install/binder.yaml"},
    {"podgrouper", "podGrouper", "deploy/rbac/podgrouper.yaml", "deploy/install/podgrouper.yaml"},
    {"controllers", "queueController,podGroupController", "deploy/rbac/controllers.yaml",
     "deploy/install/controllers.yaml"},
    {"admission", "admission", "deploy/rbac/admission.yaml", "deploy/install/admission.yaml"},
    {"scale-adjuster", "nodeScaleAdjuster", "deploy/rbac/scale-adjuster.yaml",
     "deploy/install/scale-adjuster.yaml"},
};

std::vector<std::string_view> Split(std::string_view s) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    const size_t comma = s.find(',');
    out.push_back(s.substr(0, comma));
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

// What the Config says, read once.
class ConfigView {
 public:
  explicit ConfigView(const Json& config) : config_(config) {
    static const Json kEmpty(rapidjson::kObjectType);
    const Json* spec = Find(config, "spec");
    spec_ = spec != nullptr && spec->IsObject() ? spec : &kEmpty;
    const Json* global = Find(*spec_, "global");
    global_ = global != nullptr && global->IsObject() ? global : &kEmpty;
  }

  const Json& spec() const { return *spec_; }
  const Json& global() const { return *global_; }
  const Json* Section(std::string_view name) const {
    const Json* s = Find(*spec_, name);
    return s != nullptr && s->IsObject() ? s : nullptr;
  }
  std::string Name() const { return StringAt(config_, {"metadata", "name"}); }
  std::string Uid() const { return StringAt(config_, {"metadata", "uid"}); }

  static std::string StringAt(const Json& from, std::initializer_list<std::string_view> path) {
    const Json* v = FindPath(from, path);
    return v != nullptr && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : "";
  }
  std::string GlobalString(std::string_view key, std::string_view fallback) const {
    const std::string v = StringAt(*global_, {key});
    return v.empty() ? std::string(fallback) : v;
  }

 private:
  const Json& config_;
  const Json* spec_;
  const Json* global_;
};

// Whether a section's service.enabled is not false (KAI's default: every component deployed).
bool Enabled(const ConfigView& c, std::string_view sections) {
  for (std::string_view s : Split(sections)) {
    const Json* section = c.Section(s);
    const Json* enabled = section ? FindPath(*section, {"service", "enabled"}) : nullptr;
    if (enabled == nullptr || !enabled->IsBool() || enabled->GetBool()) return true;
  }
  return false;
}

Result<std::optional<int64_t>> IntAt(const Json* from, std::initializer_list<std::string_view> path,
                                     const std::string& field) {
  const Json* v = from ? FindPath(*from, path) : nullptr;
  if (v == nullptr || v->IsNull()) return std::optional<int64_t>();
  if (!v->IsInt64() || v->GetInt64() < 0) {
    return Error{"Config: " + field + ": expected a non-negative integer, got " + ToJson(*v)};
  }
  return std::optional<int64_t>(v->GetInt64());
}

// KAI's Image: repository/name:tag, each part defaulting to the operator's image.
Result<std::string> ImageOf(const Json* image, const std::string& fallback,
                            const std::string& field) {
  if (image == nullptr || !image->IsObject()) return fallback;
  const std::string repo = ConfigView::StringAt(*image, {"repository"});
  const std::string name = ConfigView::StringAt(*image, {"name"});
  const std::string tag = ConfigView::StringAt(*image, {"tag"});
  if (repo.empty() && name.empty() && tag.empty()) return fallback;
  // The fallback split into repository/name and tag.
  const size_t slash = fallback.rfind('/');
  const size_t colon = fallback.rfind(':');
  const bool has_tag = colon != std::string::npos && (slash == std::string::npos || colon > slash);
  const std::string path = has_tag ? fallback.substr(0, colon) : fallback;
  const std::string base_name = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string base_repo = slash == std::string::npos ? "" : path.substr(0, slash);
  const std::string r = repo.empty() ? base_repo : repo;
  const std::string n = name.empty() ? base_name : name;
  const std::string t = tag.empty() ? (has_tag ? fallback.substr(colon + 1) : "latest") : tag;
  std::string out = (r.empty() ? "" : r + "/") + n + ":" + t;
  if (std::any_of(out.begin(), out.end(), [](char ch) { return ch <= ' ' || ch == '"'; })) {
    return Error{"Config: " + field + ": not an image reference: \"" + out + "\""};
  }
  return out;
}

// `text` (--name or --name=value) replacing an existing --name or --name=..., or appended.
void PutFlag(Json& args, std::string_view name, const std::string& text, Alloc& a) {
  const std::string flag = "--" + std::string(name);
  for (auto& arg : args.GetArray()) {
    if (!arg.IsString()) continue;
    const std::string_view s(arg.GetString(), arg.GetStringLength());
    if (s == flag || s.starts_with(flag + "=")) {
      arg = Str(text, a);
      return;
    }
  }
  args.PushBack(Str(text, a), a);
}

// --name=value; an empty value stays (--gpu-fraction-runtime-class-name= means "none").
void SetFlag(Json& args, std::string_view name, std::string_view value, Alloc& a) {
  PutFlag(args, name, "--" + std::string(name) + "=" + std::string(value), a);
}

// --name, a switch.
void SetSwitch(Json& args, std::string_view name, Alloc& a) {
  PutFlag(args, name, "--" + std::string(name), a);
}

// The flags each section's fields become (KAI's operands pass the same values).
struct FlagFromField {
  std::string_view component;
  std::initializer_list<std::string_view> path;  // from spec
  std::string_view flag;
};
const FlagFromField kFlagFields[] = {
    {"binder", {"binder", "maxConcurrentReconciles"}, "max-concurrent"},
    {"binder", {"binder", "resourceReservation", "namespace"}, "resource-reservation-namespace"},
    {"binder",
     {"binder", "resourceReservation", "serviceAccountName"},
     "resource-reservation-service-account"},
    {"binder", {"binder", "resourceReservation", "appLabel"}, "resource-reservation-app-label"},
    {"binder", {"binder", "resourceReservation", "runtimeClassName"}, "runtime-class-name"},
    {"podgrouper", {"podGrouper", "maxConcurrentReconciles"}, "max-concurrent"},
    {"podgrouper",
     {"podGrouper", "args", "defaultPrioritiesConfigMapName"},
     "default-priorities-configmap-name"},
    {"podgrouper",
     {"podGrouper", "args", "defaultPrioritiesConfigMapNamespace"},
     "default-priorities-configmap-namespace"},
    {"podgrouper", {"podGrouper", "args", "gangScheduleKnative"}, "knative-gang-schedule"},
    {"podgrouper", {"podGrouper", "args", "genericKartaFallback"}, "generic-karta-fallback"},
    {"controllers", {"podGroupController", "maxConcurrentReconciles"}, "max-concurrent-reconciles"},
    {"controllers", {"queueController", "metricsNamespace"}, "metrics-namespace"},
    {"admission", {"admission", "gpuSharing"}, "gpu-sharing-enabled"},
    {"admission", {"admission", "blockNvidiaVisibleDevices"}, "block-nvidia-visible-devices"},
    {"admission", {"admission", "gpuFractionRuntimeClassName"}, "gpu-fraction-runtime-class-name"},
    {"admission",
     {"queueController", "limitDescendentsOverSubscription"},
     "limit-descendents-over-subscription"},
    {"scale-adjuster",
     {"nodeScaleAdjuster", "args", "nodeScaleNamespace"},
     "scale-adjust-namespace"},
    {"scale-adjuster",
     {"nodeScaleAdjuster", "args", "nodeScaleServiceAccount"},
     "scaling-pod-service-account"},
    {"scale-adjuster",
     {"nodeScaleAdjuster", "args", "gpuMemoryToFractionRatio"},
     "gpu-memory-to-fraction-ratio"},
};

std::string FlagValue(const Json& v) {
  if (v.IsString()) return std::string(v.GetString(), v.GetStringLength());
  if (v.IsBool()) return v.GetBool() ? "true" : "false";
  return ToJson(v);
}

// Config fields kai reads but cannot apply, when they are set.
struct IgnoredField {
  std::initializer_list<std::string_view> path;
  std::string_view reason;
};
const IgnoredField kIgnored[] = {
    {{"global", "vpa"}, "kai makes no VerticalPodAutoscaler"},
    {{"global", "openshift"}, "kai renders the same objects on OpenShift"},
    {{"global", "daemonsetsTolerations"}, "kai runs no DaemonSet"},
    {{"global", "requireDefaultPodAntiAffinityTerm"}, "kai adds no default anti-affinity term"},
    {{"scheduler", "GOGC"}, "kai is not written in Go"},
    {{"scheduler", "schedulerService"}, "kai's scheduler Service is not made by the operator"},
    {{"prometheus", "enabled"}, "kai's operator deploys no Prometheus"},
    {{"numaPlacementExporter", "enabled"},
     "kai's operator does not deploy the exporter: run `kai numa-exporter` as a DaemonSet "
     "(docs/commands/numa-exporter.md)"},
    {{"admission", "queueLabelSelector"}, "kai's webhooks select pods by scheduler name"},
};

// spec.binder.plugins with what KAI's operator merges into them: volumeBindingTimeoutSeconds as
// the bindTimeoutSeconds of volumebinding and dynamicresources and cdiEnabled as gpusharing's
// argument, where the plugin's entry gives no arguments of its own (KAI's user arguments replace
// the defaults). "" when nothing is set: the binder's defaults are KAI's.
std::string BinderPluginsJson(const Json& spec) {
  const Json* binder = Find(spec, "binder");
  if (binder == nullptr || !binder->IsObject()) return "";
  JsonDoc d(rapidjson::kObjectType);
  Alloc& a = d.GetAllocator();
  if (const Json* plugins = Find(*binder, "plugins"); plugins && plugins->IsObject()) {
    d.CopyFrom(*plugins, a);
  }
  auto default_argument = [&](std::string_view plugin, std::string_view key, const Json* value) {
    if (value == nullptr || value->IsNull()) return;
    Json& entry = Member(d, plugin, rapidjson::kObjectType, a);
    if (!entry.IsObject() || Find(entry, "arguments") != nullptr) return;
    Json arguments(rapidjson::kObjectType);
    arguments.AddMember(Str(key, a), Str(FlagValue(*value), a), a);
    Set(entry, "arguments", arguments, a);
  };
  const Json* timeout = Find(*binder, "volumeBindingTimeoutSeconds");
  default_argument("volumebinding", "bindTimeoutSeconds", timeout);
  default_argument("dynamicresources", "bindTimeoutSeconds", timeout);
  default_argument("gpusharing", "cdiEnabled", Find(*binder, "cdiEnabled"));
  return d.ObjectEmpty() ? "" : ToJson(d);
}

// KAI's isHamiCoreEnabled: the binder's hamicore plugin is on, so admission points the GPU-sharing
// container at its limit.
bool HamiCoreEnabled(const Json& spec) {
  const Json* enabled = FindPath(spec, {"binder", "plugins", "hamicore", "enabled"});
  return enabled != nullptr && enabled->IsBool() && enabled->GetBool();
}

struct Builder {
  const ConfigView& c;
  const RenderInput& in;
  std::string ns;
  std::string scheduler_name;
  Rendered out;

  // The Config as the controller owner: everything the operator makes goes with it.
  Json ConfigOwnerRef(Alloc& a) const {
    Json ref(rapidjson::kObjectType);
    ref.AddMember("apiVersion", Str(kConfigApiVersion, a), a);
    ref.AddMember("kind", Str("Config", a), a);
    ref.AddMember("name", Str(c.Name(), a), a);
    ref.AddMember("uid", Str(c.Uid(), a), a);
    ref.AddMember("controller", true, a);
    return ref;
  }

  // Namespaces of one object; when `owned`, the operator's labels and the Config as its owner.
  void Stamp(JsonDoc& d, std::string_view component, bool owned) const {
    Alloc& a = d.GetAllocator();
    Json& meta = Member(d, "metadata", rapidjson::kObjectType, a);
    const std::string kind = ConfigView::StringAt(d, {"kind"});
    if (kind == "Namespace" && ConfigView::StringAt(meta, {"name"}) == kDefaultNamespace) {
      Set(meta, "name", Str(ns, a), a);
    }
    if (ConfigView::StringAt(meta, {"namespace"}) == kDefaultNamespace) {
      Set(meta, "namespace", Str(ns, a), a);
    }
    if (Json* subjects = d.HasMember("subjects") ? &d["subjects"] : nullptr;
        subjects && subjects->IsArray()) {
      for (auto& s : subjects->GetArray()) {
        if (ConfigView::StringAt(s, {"namespace"}) == kDefaultNamespace) {
          Set(s, "namespace", Str(ns, a), a);
        }
      }
    }
    if (!owned) return;
    Json& labels = Member(meta, "labels", rapidjson::kObjectType, a);
    Set(labels, kManagedByLabel, Str(kFieldManager, a), a);
    Set(labels, kComponentLabel, Str(component, a), a);
    Json refs(rapidjson::kArrayType);
    refs.PushBack(ConfigOwnerRef(a), a);
    Set(meta, "ownerReferences", refs, a);
  }

  void Add(JsonDoc& d, std::string_view component, bool owned) {
    Desired o;
    o.api_version = ConfigView::StringAt(d, {"apiVersion"});
    o.kind = ConfigView::StringAt(d, {"kind"});
    o.ns = ConfigView::StringAt(d, {"metadata", "namespace"});
    o.name = ConfigView::StringAt(d, {"metadata", "name"});
    o.component = std::string(component);
    o.owned = owned;
    o.json = ToJson(d);
    out.objects.push_back(std::move(o));
  }

  // The Config's pod-level settings on a Deployment, and its section's service settings.
  Result<bool> EditDeployment(JsonDoc& d, const Component& comp, const Json* section,
                              const std::string& section_name) {
    Alloc& a = d.GetAllocator();
    Json& spec = Member(d, "spec", rapidjson::kObjectType, a);
    auto replicas = IntAt(section, {"replicas"}, section_name + ".replicas");
    if (!replicas) return replicas.error();
    auto global_replicas = IntAt(&c.global(), {"replicaCount"}, "global.replicaCount");
    if (!global_replicas) return global_replicas.error();
    if (*replicas) {
      Set(spec, "replicas", Json(**replicas), a);
    } else if (*global_replicas) {
      Set(spec, "replicas", Json(**global_replicas), a);
    }
    Json& pod = Member(Member(spec, "template", rapidjson::kObjectType, a), "spec",
                       rapidjson::kObjectType, a);
    auto copy = [&](const Json* from, Json& to, std::string_view key) {
      if (from != nullptr && !from->IsNull()) Set(to, key, Json(*from, a), a);
    };
    copy(Find(c.global(), "nodeSelector"), pod, "nodeSelector");
    copy(Find(c.global(), "tolerations"), pod, "tolerations");
    const Json* affinity = section ? FindPath(*section, {"service", "affinity"}) : nullptr;
    copy(affinity ? affinity : Find(c.global(), "affinity"), pod, "affinity");
    if (const std::string pc = ConfigView::StringAt(c.global(), {"priorityClassName"});
        !pc.empty()) {
      Set(pod, "priorityClassName", Str(pc, a), a);
    }
    Json secrets(rapidjson::kArrayType);
    auto add_secret = [&](const Json& name) {
      if (!name.IsString() || name.GetStringLength() == 0) return;
      Json s(rapidjson::kObjectType);
      s.AddMember("name", Json(name, a), a);
      secrets.PushBack(s, a);
    };
    if (const Json* one = Find(c.global(), "imagesPullSecret")) add_secret(*one);
    if (const Json* more = Find(c.global(), "additionalImagePullSecrets");
        more && more->IsArray()) {
      for (const auto& s : more->GetArray()) add_secret(s);
    }
    if (!secrets.Empty()) Set(pod, "imagePullSecrets", secrets, a);

    Json& containers = Member(pod, "containers", rapidjson::kArrayType, a);
    if (containers.Empty())
      return Error{std::string(comp.install) + ": a Deployment without containers"};
    Json& container = containers[0];
    const Json* image = section ? FindPath(*section, {"service", "image"}) : nullptr;
    auto ref = ImageOf(image, in.default_image, section_name + ".service.image");
    if (!ref) return ref.error();
    Set(container, "image", Str(*ref, a), a);
    if (image && image->IsObject()) {
      if (const std::string policy = ConfigView::StringAt(*image, {"pullPolicy"});
          !policy.empty()) {
        Set(container, "imagePullPolicy", Str(policy, a), a);
      }
    }
    copy(section ? FindPath(*section, {"service", "resources"}) : nullptr, container, "resources");
    if (const Json* sc = Find(c.global(), "securityContext"); sc && sc->IsObject()) {
      Json& mine = Member(container, "securityContext", rapidjson::kObjectType, a);
      for (const auto& m : sc->GetObject()) {
        Set(mine, std::string_view(m.name.GetString(), m.name.GetStringLength()), Json(m.value, a),
            a);
      }
    }
    Json& args = Member(container, "args", rapidjson::kArrayType, a);
    SetComponentFlags(args, comp, a);
    if (in.fips_mode || IsFipsImage(*ref)) SetSwitch(args, "fips-mode", a);
    return true;
  }

  void SetComponentFlags(Json& args, const Component& comp, Alloc& a) {
    const bool named = comp.id == "scheduler" || comp.id == "podgrouper" ||
                       comp.id == "admission" || comp.id == "scale-adjuster";
    if (named && scheduler_name != "kai-scheduler")
      SetFlag(args, "scheduler-name", scheduler_name, a);
    if (comp.id == "scheduler" || comp.id == "podgrouper") {
      for (auto [key, flag] : {std::pair{"queueLabelKey", "queue-label-key"},
                               std::pair{"nodePoolLabelKey", "nodepool-label-key"}}) {
        if (const std::string v = ConfigView::StringAt(c.global(), {key}); !v.empty()) {
          SetFlag(args, flag, v, a);
        }
      }
    }
    if (const Json* json_log = Find(c.global(), "jsonLog");
        json_log && json_log->IsBool() && json_log->GetBool()) {
      SetSwitch(args, "log-json", a);
    }
    if (ns != kDefaultNamespace) SetFlag(args, "leader-elect-namespace", ns, a);
    if (comp.id == "admission" && ns != kDefaultNamespace) {  // the binder's ServiceAccount
      SetFlag(args, "nvfractions-devices-writer", "system:serviceaccount:" + ns + ":kai-binder", a);
    }
    for (const FlagFromField& f : kFlagFields) {
      if (f.component != comp.id) continue;
      const Json* v = FindPath(c.spec(), f.path);
      if (v == nullptr || v->IsNull()) continue;
      SetFlag(args, f.flag, FlagValue(*v), a);
    }
    if (comp.id == "binder") {
      if (const std::string plugins = BinderPluginsJson(c.spec()); !plugins.empty()) {
        SetFlag(args, "plugins", plugins, a);
      }
    }
    if (comp.id == "admission" && HamiCoreEnabled(c.spec())) {
      SetFlag(args, "hami-core-enabled", "true", a);
    }
  }

  // The objects of one deploy/ file, each stamped; Deployments edited as the section says.
  Result<bool> FromFile(const std::vector<install::Manifest>& manifests, const Component& comp,
                        std::string_view file) {
    const std::string section_name(Split(comp.sections).front());
    const Json* section = c.Section(section_name);
    for (const install::Manifest& m : manifests) {
      if (m.source != file) continue;
      if (comp.id == "scheduler" && m.kind == "Deployment") continue;  // one per shard, below
      if (m.kind == "PodDisruptionBudget") continue;  // the Config's, below (AddBudget)
      JsonDoc d;
      if (auto r = YamlToJson(m.text, d); !r) return Error{m.source + ": " + r.error().message};
      const bool owned = m.kind != "Namespace";
      Stamp(d, comp.id, owned);
      if (m.kind == "Deployment") {
        if (auto r = EditDeployment(d, comp, section, section_name); !r) return r.error();
      }
      Add(d, comp.id, owned);
      if (m.kind == "Deployment") {
        if (auto r = AddBudget(d, comp, section, section_name); !r) return r.error();
      }
    }
    return true;
  }

  // KAI's PodDisruptionBudget of a Deployment (the scheduler's of each shard, the pod grouper's,
  // the admission server's): made when its section's service.podDisruptionBudget.enabled is true
  // and the Deployment runs more than one replica (one replica under a budget would block every
  // node drain); maxUnavailable as set, else 1, over the Deployment's pods.
  Result<bool> AddBudget(const JsonDoc& deployment, const Component& comp, const Json* section,
                         const std::string& section_name) {
    if (comp.id != "scheduler" && comp.id != "podgrouper" && comp.id != "admission") return true;
    const Json* budget = section ? FindPath(*section, {"service", "podDisruptionBudget"}) : nullptr;
    const Json* enabled = budget ? Find(*budget, "enabled") : nullptr;
    if (enabled == nullptr || !enabled->IsBool() || !enabled->GetBool()) return true;
    const Json* replicas = FindPath(deployment, {"spec", "replicas"});
    if (replicas == nullptr || !replicas->IsInt64() || replicas->GetInt64() <= 1) return true;
    auto max_unavailable = IntAt(budget, {"maxUnavailable"},
                                 section_name + ".service.podDisruptionBudget.maxUnavailable");
    if (!max_unavailable) return max_unavailable.error();
    const std::string name = ConfigView::StringAt(deployment, {"metadata", "name"});
    const std::string pods = ConfigView::StringAt(
        deployment, {"spec", "template", "metadata", "labels", "app.kubernetes.io/name"});
    JsonDoc d(rapidjson::kObjectType);
    Alloc& a = d.GetAllocator();
    d.AddMember("apiVersion", Str("policy/v1", a), a);
    d.AddMember("kind", Str("PodDisruptionBudget", a), a);
    Json meta(rapidjson::kObjectType);
    meta.AddMember("name", Str(name, a), a);
    meta.AddMember("namespace", Str(ns, a), a);
    d.AddMember("metadata", meta, a);
    Json match(rapidjson::kObjectType);
    match.AddMember("app.kubernetes.io/name", Str(pods, a), a);
    Json selector(rapidjson::kObjectType);
    selector.AddMember("matchLabels", match, a);
    Json spec(rapidjson::kObjectType);
    spec.AddMember("maxUnavailable", Json(max_unavailable->value_or(1)), a);
    spec.AddMember("selector", selector, a);
    d.AddMember("spec", spec, a);
    Stamp(d, comp.id, true);
    Add(d, comp.id, true);
    return true;
  }

  Result<bool> SchedulerPerShard(const std::vector<install::Manifest>& manifests,
                                 const Component& comp) {
    const install::Manifest* base = nullptr;
    for (const install::Manifest& m : manifests) {
      if (m.source == comp.install && m.kind == "Deployment") base = &m;
    }
    if (base == nullptr) return Error{std::string(comp.install) + ": no Deployment"};
    for (const Shard& shard : in.shards) {
      JsonDoc d;
      if (auto r = YamlToJson(base->text, d); !r)
        return Error{base->source + ": " + r.error().message};
      Alloc& a = d.GetAllocator();
      const std::string name = scheduler_name + "-" + shard.name;
      Set(d["metadata"], "name", Str(name, a), a);
      // Owned by the Config, as every other component: `helm uninstall` (which keeps the shard)
      // removes it; a deleted shard's Deployment is pruned by the operator.
      Stamp(d, comp.id, true);
      Json& labels = d["metadata"]["labels"];
      Set(labels, "app.kubernetes.io/name", Str(name, a), a);
      Set(labels, "kai.scheduler/shard", Str(shard.name, a), a);
      Json& spec = d["spec"];
      Set(Member(Member(spec, "selector", rapidjson::kObjectType, a), "matchLabels",
                 rapidjson::kObjectType, a),
          "app.kubernetes.io/name", Str(name, a), a);
      Json& tmeta = Member(Member(spec, "template", rapidjson::kObjectType, a), "metadata",
                           rapidjson::kObjectType, a);
      Json& tlabels = Member(tmeta, "labels", rapidjson::kObjectType, a);
      Set(tlabels, "app.kubernetes.io/name", Str(name, a), a);
      Set(tlabels, "kai.scheduler/shard", Str(shard.name, a), a);
      if (auto r = EditDeployment(d, comp, c.Section("scheduler"), "scheduler"); !r)
        return r.error();
      Json& args = d["spec"]["template"]["spec"]["containers"][0]["args"];
      SetFlag(args, "shard", shard.name, a);
      SetFlag(args, "leader-elect-id", ShardLeaseName(scheduler_name, shard), a);
      Add(d, comp.id, true);
      if (auto r = AddBudget(d, comp, c.Section("scheduler"), "scheduler"); !r) return r.error();
    }
    return true;
  }

  Result<bool> Admission() {
    if (!in.tls) return true;
    const std::string secret = install::TlsSecretYaml(ns, "kai-admission-tls", in.tls->cert_pem,
                                                      in.tls->key_pem, in.tls->ca_pem);
    auto hooks = admission::WebhookServiceConfigYaml({ns, "kai-admission", 443}, in.tls->ca_pem,
                                                     scheduler_name);
    if (!hooks) return hooks.error();
    std::vector<std::string> docs = {secret};
    try {
      for (const YAML::Node& n : YAML::LoadAll(*hooks)) {
        YAML::Emitter e;
        e << n;
        docs.push_back(e.c_str());
      }
    } catch (const YAML::Exception& e) {
      return Error{std::string("the webhook configurations: ") + e.what()};
    }
    for (const std::string& text : docs) {
      JsonDoc d;
      if (auto r = YamlToJson(text, d); !r) return r.error();
      Stamp(d, "admission", true);
      Add(d, "admission", true);
    }
    return true;
  }

  void ListIgnored() {
    for (const IgnoredField& f : kIgnored) {
      const Json* v = FindPath(c.spec(), f.path);
      if (v == nullptr || v->IsNull() || (v->IsBool() && !v->GetBool())) continue;
      std::string path = "spec";
      for (std::string_view p : f.path) path += "." + std::string(p);
      out.ignored.push_back(path + ": " + std::string(f.reason));
    }
    for (std::string_view key : {"namespaceLabelSelector", "podLabelSelector"}) {
      const Json* v = Find(c.global(), key);
      if (v && v->IsObject() && v->MemberCount() > 0) {
        out.ignored.push_back(
            "spec.global." + std::string(key) +
            ": kai's components serve every namespace and pod of their scheduler");
      }
    }
  }
};

}  // namespace

bool IsFipsImage(std::string_view image) {
  image = image.substr(0, image.find('@'));  // name:tag@sha256:digest
  const size_t slash = image.rfind('/');
  const size_t colon = image.rfind(':');
  if (colon == std::string_view::npos || (slash != std::string_view::npos && colon < slash))
    return false;
  return image.substr(colon + 1).ends_with("-fips");
}

std::string ShardLeaseName(const std::string& scheduler_name, const Shard& shard) {
  if (shard.partition_label_value.empty()) return scheduler_name;
  return scheduler_name + "-" + shard.partition_label_value;
}

Result<Rendered> Render(std::span<const install::EmbeddedFile> files, const RenderInput& in) {
  auto config = ParseJson(in.config_json, "Config");
  if (!config) return config.error();
  if (!config->IsObject()) return Error{"Config: not an object"};
  const ConfigView view(*config);
  install::InstallOptions options;
  options.crds = false;
  auto manifests = install::CollectManifests(files, options);
  if (!manifests) return manifests.error();

  Builder b{view,
            in,
            view.StringAt(view.spec(), {"namespace"}),
            view.GlobalString("schedulerName", "kai-scheduler"),
            {}};
  if (b.ns.empty()) b.ns = std::string(kDefaultNamespace);
  b.out.ns = b.ns;
  for (const Component& comp : kComponents) {
    if (!Enabled(view, comp.sections)) continue;
    if (auto r = b.FromFile(*manifests, comp, comp.rbac); !r) return r.error();
    if (comp.id == "scheduler") {
      if (auto r = b.SchedulerPerShard(*manifests, comp); !r) return r.error();
    } else if (auto r = b.FromFile(*manifests, comp, comp.install); !r) {
      return r.error();
    }
    if (comp.id == "admission") {
      if (auto r = b.Admission(); !r) return r.error();
    }
  }
  for (const install::Manifest& m : *manifests) {
    if (m.source != "deploy/install/priorityclasses.yaml") continue;
    JsonDoc d;
    if (auto r = YamlToJson(m.text, d); !r) return Error{m.source + ": " + r.error().message};
    b.Add(d, "", false);
  }
  // Namespaces first, then RBAC, then the rest (as `kai install` orders them).
  std::stable_sort(b.out.objects.begin(), b.out.objects.end(),
                   [](const Desired& x, const Desired& y) {
                     auto rank = [](const Desired& d) {
                       if (d.kind == "Namespace") return 0;
                       if (d.kind == "ServiceAccount" || d.kind.find("Role") != std::string::npos)
                         return 1;
                       if (d.kind.find("WebhookConfiguration") != std::string::npos) return 3;
                       return 2;
                     };
                     return rank(x) < rank(y);
                   });
  // One Namespace object per name (each component's RBAC file declares its namespaces).
  std::vector<Desired> unique;
  for (Desired& d : b.out.objects) {
    const bool seen = std::any_of(unique.begin(), unique.end(), [&](const Desired& u) {
      return u.kind == d.kind && u.ns == d.ns && u.name == d.name && u.api_version == d.api_version;
    });
    if (!seen) unique.push_back(std::move(d));
  }
  b.out.objects = std::move(unique);
  b.ListIgnored();
  return std::move(b.out);
}

}  // namespace kai::op
