#include "kai/daemons/binder/reservation.h"

#include <openssl/evp.h>

#include <algorithm>
#include <set>
#include <thread>
#include <tuple>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "kai/core/k8s/json_body.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/resource/quantity.h"

namespace kai::binder {
namespace {

namespace res = k8s::resources;
using k8s::JsonWriter;
using k8s::KeyStr;
using k8s::Str;

std::string Selector(std::string_view key, std::string_view value) {
  return "labelSelector=" + k8s::UrlEscape(std::string(key) + "=" + std::string(value));
}

std::string GpuOf(const PodView& p) {
  auto it = p.annotations.find(std::string(keys::kReservedGpuAnnotation));
  return it == p.annotations.end() ? "" : it->second;
}

// The reservation pod's metadata: its app and GPU group labels, and never disrupted.
void WriteMetadata(JsonWriter& w, const ReservationOptions& o, const std::string& name,
                   const std::string& group) {
  Str(w, "metadata");
  w.StartObject();
  KeyStr(w, "name", name);
  KeyStr(w, "namespace", o.ns);
  Str(w, "labels");
  w.StartObject();
  KeyStr(w, keys::kAppLabel, o.app_label);
  KeyStr(w, keys::kGpuGroupLabel, group);
  w.EndObject();
  Str(w, "annotations");
  w.StartObject();
  KeyStr(w, keys::kDoNotDisrupt, "true");
  w.EndObject();
  w.EndObject();
}

void WriteRawObject(JsonWriter& w, std::string_view key, const std::string& json) {
  if (json.empty()) return;
  Str(w, key);
  w.RawValue(json.data(), json.size(), rapidjson::kObjectType);
}

// One GPU on both sides, and the shape's other quantities.
void WriteResources(JsonWriter& w, const ReservationPodShape& shape) {
  Str(w, "resources");
  w.StartObject();
  for (const auto& [side, list] :
       {std::pair{"limits", &shape.limits}, std::pair{"requests", &shape.requests}}) {
    Str(w, side);
    w.StartObject();
    KeyStr(w, keys::kGpuResource, "1");
    for (const auto& [resource, quantity] : *list) KeyStr(w, resource, quantity);
    w.EndObject();
  }
  w.EndObject();
}

// POD_NAME and POD_NAMESPACE from the downward API: the program patches its own pod.
void WriteEnv(JsonWriter& w) {
  Str(w, "env");
  w.StartArray();
  for (auto [env, field] :
       {std::pair{"POD_NAME", "metadata.name"}, std::pair{"POD_NAMESPACE", "metadata.namespace"}}) {
    w.StartObject();
    KeyStr(w, "name", env);
    Str(w, "valueFrom");
    w.StartObject();
    Str(w, "fieldRef");
    w.StartObject();
    KeyStr(w, "fieldPath", field);
    w.EndObject();
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
}

void WriteContainer(JsonWriter& w, const ReservationOptions& o) {
  w.StartObject();
  KeyStr(w, "name", "resource-reservation");
  KeyStr(w, "image", o.fake_gpu_nodes ? "ubuntu" : o.image);
  KeyStr(w, "imagePullPolicy", "IfNotPresent");
  Str(w, "args");
  w.StartArray();
  if (o.fake_gpu_nodes) {
    Str(w, "sleep");
    Str(w, "infinity");
  } else {
    Str(w, "resource-reservation");
    if (o.fips_mode) Str(w, "--fips-mode");
  }
  w.EndArray();
  WriteResources(w, o.shape);
  WriteEnv(w);
  WriteRawObject(w, "securityContext", o.shape.container_security_context);
  w.EndObject();
}

// The flag's JSON text as one document (iteratively parsed: no recursion on nesting).
Result<rapidjson::Document> ParseFlagJson(std::string_view json, std::string_view flag) {
  rapidjson::Document d;
  d.Parse<rapidjson::kParseIterativeFlag>(json.data(), json.size());
  if (d.HasParseError()) {
    return Error{std::string(flag) + ": not one JSON document (" +
                 rapidjson::GetParseError_En(d.GetParseError()) + " at offset " +
                 std::to_string(d.GetErrorOffset()) + ")"};
  }
  if (!d.IsObject()) return Error{std::string(flag) + ": must be a JSON object"};
  return d;
}

// One side of a ResourceRequirements: quantities by resource name, nvidia.com/gpu left out.
Result<std::vector<std::pair<std::string, std::string>>> ParseResourceList(
    const rapidjson::Value& list, const std::string& where) {
  if (!list.IsObject()) return Error{where + ": must be an object of quantities"};
  std::vector<std::pair<std::string, std::string>> out;
  // Iterators compared with <: clang rejects RapidJSON 1.1's == and != as ambiguous in C++20.
  for (auto it = list.MemberBegin(); it < list.MemberEnd(); ++it) {
    const auto& m = *it;
    const std::string name(m.name.GetString(), m.name.GetStringLength());
    if (!m.value.IsString()) return Error{where + "." + name + ": must be a quantity string"};
    const std::string_view text(m.value.GetString(), m.value.GetStringLength());
    auto q = ParseQuantity(text, 0);
    if (!q.ok()) return Error{where + "." + name + ": " + q.error().message};
    if (*q < 0)
      return Error{where + "." + name + ": must not be negative, got " + std::string(text)};
    if (name != keys::kGpuResource) out.emplace_back(name, std::string(text));
  }
  return out;
}

}  // namespace

GroupLocks::Guard::Guard(GroupLocks& l, std::string g) : locks_(l), group_(std::move(g)) {
  std::unique_lock<std::mutex> lock(locks_.mu_);
  Entry& e = locks_.groups_[group_];
  ++e.users;
  locks_.cv_.wait(lock, [&] { return !locks_.groups_[group_].held; });
  locks_.groups_[group_].held = true;
}

GroupLocks::Guard::~Guard() {
  std::lock_guard<std::mutex> lock(locks_.mu_);
  auto it = locks_.groups_.find(group_);
  it->second.held = false;
  if (--it->second.users == 0) locks_.groups_.erase(it);
  locks_.cv_.notify_all();
}

std::string ReservationPodName(const std::string& node, const std::string& group) {
  const std::string input = node + "/" + group;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(input.data(), input.size(), md, &len, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(keys::kReservationPodPrefix);
  out += "-";
  for (int i = 0; i < 8; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

Status ParseReservationResources(std::string_view json, ReservationPodShape& shape) {
  constexpr std::string_view kFlag = "--resource-reservation-pod-resources";
  auto d = ParseFlagJson(json, kFlag);
  if (!d.ok()) return d.error();
  ReservationPodShape parsed = shape;
  parsed.requests.clear();
  parsed.limits.clear();
  for (auto it = d->MemberBegin(); it < d->MemberEnd(); ++it) {
    const auto& m = *it;
    const std::string_view key(m.name.GetString(), m.name.GetStringLength());
    if (key != "requests" && key != "limits") {
      return Error{std::string(kFlag) + ": unknown field \"" + std::string(key) +
                   "\" (a ResourceRequirements has requests and limits)"};
    }
    auto list = ParseResourceList(m.value, std::string(kFlag) + ": " + std::string(key));
    if (!list.ok()) return list.error();
    (key == "requests" ? parsed.requests : parsed.limits) = std::move(*list);
  }
  shape = std::move(parsed);
  return Ok();
}

Result<std::string> ParseSecurityContextFlag(std::string_view json, std::string_view flag) {
  auto d = ParseFlagJson(json, flag);
  if (!d.ok()) return d.error();
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  d->Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

Status ApplyReservationPodFlags(const ReservationPodFlags& flags, ReservationPodShape& shape) {
  ReservationPodShape out = shape;
  if (!flags.resources.empty()) {
    if (auto s = ParseReservationResources(flags.resources, out); !s.ok()) return s;
  }
  for (auto [text, flag, target] :
       {std::tuple{&flags.pod_security_context, "--resource-reservation-pod-security-context",
                   &out.pod_security_context},
        std::tuple{&flags.container_security_context,
                   "--resource-reservation-container-security-context",
                   &out.container_security_context}}) {
    if (text->empty()) continue;
    auto json = ParseSecurityContextFlag(*text, flag);
    if (!json.ok()) return json.error();
    *target = std::move(*json);
  }
  shape = std::move(out);
  return Ok();
}

std::string ReservationPodBody(const ReservationOptions& o, const std::string& name,
                               const std::string& node, const std::string& group,
                               std::string_view tolerations_json) {
  return k8s::Json([&](JsonWriter& w) {
    w.StartObject();
    KeyStr(w, "apiVersion", "v1");
    KeyStr(w, "kind", "Pod");
    WriteMetadata(w, o, name, group);
    Str(w, "spec");
    w.StartObject();
    KeyStr(w, "nodeName", node);
    if (!tolerations_json.empty()) {
      Str(w, "tolerations");
      w.RawValue(tolerations_json.data(), tolerations_json.size(), rapidjson::kArrayType);
    }
    if (!o.runtime_class.empty()) KeyStr(w, "runtimeClassName", o.runtime_class);
    if (!o.service_account.empty()) KeyStr(w, "serviceAccountName", o.service_account);
    WriteRawObject(w, "securityContext", o.shape.pod_security_context);
    Str(w, "containers");
    w.StartArray();
    WriteContainer(w, o);
    w.EndArray();
    w.EndObject();
    w.EndObject();
  });
}

ReservationService::ReservationService(const k8s::ApiClient& client, ReservationOptions options,
                                       const GroupView* view)
    : client_(client), o_(std::move(options)), view_(view) {}

void ReservationService::Log(const std::string& line) const {
  if (o_.log) o_.log(line);
}

ReservationStats ReservationService::stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

Result<std::vector<PodView>> ReservationService::ListPods(const std::string& ns,
                                                          const std::string& query,
                                                          Read read) const {
  std::vector<PodView> pods;
  std::string bad;
  k8s::ApiClient::ListCallbacks cb;
  cb.page = [&](const doc::Node& items) {
    for (size_t i = 0; i < items.size(); ++i) {
      auto p = ReadPod(items[i]);
      if (p.ok()) {
        pods.push_back(std::move(p.value()));
      } else if (bad.empty()) {
        bad = p.error().message;
      }
    }
  };
  cb.restart = [&] { pods.clear(); };
  std::string q = query;
  if (read == Read::kCache) q += (q.empty() ? "" : "&") + std::string("resourceVersion=0");
  auto rv = client_.List(k8s::CollectionPath(res::kPod, ns), q, 500, cb);
  if (!rv.ok()) return rv.error();
  if (!bad.empty()) Log("binder: skipping an unreadable pod: " + bad);
  return pods;
}

// The two listings below only find the groups to sync, from the watch cache: a group they miss
// by a moment was touched by a bind or an informer event, which syncs it anyway.
Status ReservationService::SyncAll() {
  return SyncGroupsOf(ListPods(
      "", "labelSelector=" + k8s::UrlEscape(std::string(keys::kGpuGroupLabel)), Read::kCache));
}

Status ReservationService::SyncNode(const std::string& node) {
  if (view_) {
    // The watch sees every reservation pod (they carry the runai-gpu-group label), so every
    // group on the node that holds a GPU.
    for (const std::string& g : view_->GroupsOnNode(node)) {
      if (auto s = SyncGroup(g); !s.ok()) return s;
    }
    return Ok();
  }
  // Every pod on the node: multi-device fraction pods carry only runai-gpu-group/<g> labels,
  // which no label selector can ask for.
  return SyncGroupsOf(
      ListPods("", "fieldSelector=" + k8s::UrlEscape("spec.nodeName=" + node), Read::kCache));
}

Status ReservationService::SyncGroupsOf(const Result<std::vector<PodView>>& pods) {
  if (!pods.ok()) return pods.error();
  std::set<std::string> groups;
  for (const PodView& p : *pods) {
    for (auto& g : p.GpuGroups()) groups.insert(g);
  }
  for (const std::string& g : groups) {
    if (auto s = SyncGroup(g); !s.ok()) return s;
  }
  return Ok();
}

Status ReservationService::SyncGroup(const std::string& group) {
  GroupLocks::Guard guard(locks_, group);
  return SyncGroupLocked(group);
}

// Most syncs find nothing to do: the caller's view tells so for most groups, the API server's
// watch cache for the rest; a deletion is decided on a quorum read only, since a cache may not
// show yet a pod labelled a moment ago.
Status ReservationService::SyncGroupLocked(const std::string& group) {
  if (view_ && view_->KnownInUse(group)) return Ok();
  auto cached = ListGroup(group, Read::kCache);
  if (!cached.ok()) return cached.error();
  if (!NeedsCleanup(group, *cached)) return Ok();
  auto current = ListGroup(group, Read::kQuorum);
  if (!current.ok()) return current.error();
  if (!NeedsCleanup(group, *current)) return Ok();
  return CleanUp(group, *current);
}

Result<ReservationService::GroupPods> ReservationService::ListGroup(const std::string& group,
                                                                    Read read) const {
  auto single = ListPods("", Selector(keys::kGpuGroupLabel, group), read);
  if (!single.ok()) return single.error();
  auto multi =
      ListPods("", Selector(std::string(keys::kMultiGpuGroupLabelPrefix) + group, group), read);
  if (!multi.ok()) return multi.error();
  GroupPods out;
  for (auto* list : {&single.value(), &multi.value()}) {
    for (PodView& p : *list) {
      if (p.ns == o_.ns) {
        out.reservations.push_back(std::move(p));
      } else if (!p.node_name.empty() && (p.phase == "Running" || p.phase == "Pending")) {
        // Only bound pods hold the GPU; an unbound pod still labelled (a bind that did not
        // finish) is covered by its active BindRequest, or by nothing.
        out.fraction_pods.push_back(std::move(p));
      }
    }
  }
  return out;
}

bool ReservationService::NeedsCleanup(const std::string& group, const GroupPods& pods) const {
  if (pods.reservations.empty()) {
    return std::any_of(pods.fraction_pods.begin(), pods.fraction_pods.end(),
                       [](const PodView& p) { return p.phase == "Running"; });
  }
  return pods.fraction_pods.empty() && !(view_ && view_->Active(group));
}

Status ReservationService::CleanUp(const std::string& group, const GroupPods& pods) {
  if (pods.reservations.empty()) {
    for (const PodView& p : pods.fraction_pods) {
      if (p.phase != "Running") continue;
      Log("binder: pod " + p.Ref() + " runs on GPU group " + group +
          " whose reservation pod is gone; deleting it");
      if (auto s = DeletePod(p.ns, p.name, false); !s.ok()) return s;
      std::lock_guard<std::mutex> lock(stats_mu_);
      ++stats_.orphans_deleted;
    }
    return Ok();
  }
  for (const PodView& r : pods.reservations) {
    Log("binder: no pod uses GPU group " + group + "; deleting reservation pod " + r.Ref());
    if (auto s = DeletePod(r.ns, r.name, true); !s.ok()) return s;
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.deleted;
  }
  return Ok();
}

Status ReservationService::DeletePod(const std::string& ns, const std::string& name, bool now) {
  const std::string path = k8s::ObjectPath(res::kPod, ns, name);
  const std::string body =
      now ? R"({"apiVersion":"v1","kind":"DeleteOptions","gracePeriodSeconds":0})" : "";
  k8s::HttpResponse r = client_.Delete(path, body);
  if (r.ok() || r.status == 404) return Ok();
  return Error{k8s::Describe({"DELETE", path}, r)};
}

Result<GpuReservation> ReservationService::Reserve(const PodView& pod, const std::string& node,
                                                   const std::string& group) {
  GroupLocks::Guard guard(locks_, group);
  auto gpu = AcquireGpu(pod, node, group);
  if (!gpu.ok() || !gpu->ready()) return gpu;
  if (auto s = LabelPod(pod, group); !s.ok()) {
    if (auto sync = SyncGroupLocked(group); !sync.ok()) Log("binder: " + sync.error().message);
    return s.error();
  }
  return gpu;
}

Result<GpuReservation> ReservationService::AcquireGpu(const PodView& pod, const std::string& node,
                                                      const std::string& group) {
  // Quorum reads: a reservation pod created a moment ago must be found, or a second one would
  // be created. First the pod this bind would create (one key), then, when the watch knows of a
  // reservation pod of the group (another node's, or one an earlier binder named otherwise),
  // the group's reservation pods.
  const std::string name = ReservationPodName(node, group);
  const std::string path = k8s::ObjectPath(res::kPod, o_.ns, name);
  k8s::HttpResponse got = client_.Get(path);
  if (got.ok()) {
    auto r = ParsePod(got.body);
    if (!r.ok()) return Error{"reservation pod " + o_.ns + "/" + name + ": " + r.error().message};
    return Found(*r);
  }
  if (got.status != 404) return Error{k8s::Describe({"GET", path}, got)};
  DoneWaiting(name);
  if (!view_ || view_->KnownReserved(group)) {
    auto existing = ListPods(o_.ns, Selector(keys::kGpuGroupLabel, group), Read::kQuorum);
    if (!existing.ok()) return existing.error();
    for (const PodView& r : *existing) {
      if (!r.node_name.empty() && r.node_name != node) {
        return Error{"GPU group " + group + " is reserved on node " + r.node_name + " (pod " +
                     r.Ref() + "), not on " + node};
      }
      return Found(r);
    }
  }
  auto created = CreateReservationPod(pod, node, group);
  if (!created.ok()) return created.error();
  return Pending(*created);
}

// A reservation pod found: its GPU, or (created by an earlier attempt, or still starting) the
// wait for it.
Result<GpuReservation> ReservationService::Found(const PodView& reservation) {
  std::string gpu = GpuOf(reservation);
  if (gpu.empty()) return Pending(reservation.name);
  DoneWaiting(reservation.name);
  return GpuReservation{std::move(gpu), "", {}};
}

Result<GpuReservation> ReservationService::Pending(const std::string& name) {
  const auto now = o_.now();
  std::chrono::milliseconds left{};
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    // Forget pods nobody asked about for two time-outs (their requests went another way).
    std::erase_if(waiting_since_,
                  [&](const auto& w) { return now - w.second > 2 * o_.allocation_timeout; });
    auto since = waiting_since_.try_emplace(name, now).first->second;
    left =
        o_.allocation_timeout - std::chrono::duration_cast<std::chrono::milliseconds>(now - since);
    if (left.count() > 0) return GpuReservation{"", name, left};
    waiting_since_.erase(name);
    ++stats_.timeouts;
  }
  if (auto s = DeletePod(o_.ns, name, true); !s.ok()) Log("binder: " + s.error().message);
  return Error{"reservation pod " + o_.ns + "/" + name + " got no GPU id (annotation " +
               std::string(keys::kReservedGpuAnnotation) + ") within " +
               std::to_string(o_.allocation_timeout.count() / 1000) + "s; deleted it"};
}

void ReservationService::DoneWaiting(const std::string& name) {
  std::lock_guard<std::mutex> lock(stats_mu_);
  waiting_since_.erase(name);
}

Result<std::string> ReservationService::CreateReservationPod(const PodView& pod,
                                                             const std::string& node,
                                                             const std::string& group) {
  if (ScalingUp()) {
    return Error{"the cluster is scaling up (an unscheduled pod in namespace " +
                 o_.scale_adjust_ns + "); no reservation pod is created meanwhile"};
  }
  const std::string name = ReservationPodName(node, group);
  const std::string body = ReservationPodBody(o_, name, node, group, pod.tolerations_json);
  const std::string path = k8s::CollectionPath(res::kPod, o_.ns);
  k8s::HttpResponse r = client_.Create(path, body);
  if (r.status == 409) return name;  // an earlier attempt created it
  if (!r.ok())
    return Error{"creating reservation pod " + o_.ns + "/" + name + ": " +
                 k8s::Describe({"POST", path}, r)};
  Log("binder: created reservation pod " + o_.ns + "/" + name + " for GPU group " + group +
      " on node " + node);
  std::lock_guard<std::mutex> lock(stats_mu_);
  ++stats_.created;
  return name;
}

Status ReservationService::LabelPod(const PodView& pod, const std::string& group) {
  k8s::MetaPatch patch;
  if (pod.MultiFraction()) {
    patch.labels.push_back({std::string(keys::kMultiGpuGroupLabelPrefix) + group, group});
  } else {
    patch.labels.push_back({std::string(keys::kGpuGroupLabel), group});
  }
  const std::string path = k8s::ObjectPath(res::kPod, pod.ns, pod.name);
  k8s::HttpResponse r = client_.Patch(path, k8s::MetadataMergePatch(patch), k8s::PatchType::kMerge);
  if (r.ok()) return Ok();
  return Error{"labelling pod " + pod.Ref() + " with GPU group " + group + ": " +
               k8s::Describe({"PATCH", path}, r)};
}

Status ReservationService::RemoveGroupLabels(const PodView& pod,
                                             const std::vector<std::string>& groups) {
  std::set<std::string> remove{std::string(keys::kGpuGroupLabel)};
  for (const auto& [k, v] : pod.labels) {
    if (k.rfind(keys::kMultiGpuGroupLabelPrefix, 0) == 0) remove.insert(k);
  }
  for (const std::string& g : groups)
    remove.insert(std::string(keys::kMultiGpuGroupLabelPrefix) + g);
  k8s::MetaPatch patch;
  for (const std::string& k : remove) patch.labels.push_back({k, std::nullopt});
  const std::string path = k8s::ObjectPath(res::kPod, pod.ns, pod.name);
  k8s::HttpResponse r = client_.Patch(path, k8s::MetadataMergePatch(patch), k8s::PatchType::kMerge);
  if (r.ok() || r.status == 404) return Ok();
  return Error{"removing the GPU group labels of pod " + pod.Ref() + ": " +
               k8s::Describe({"PATCH", path}, r)};
}

bool ReservationService::ScalingUp() const {
  auto pods = ListPods(o_.scale_adjust_ns, "", Read::kCache);  // a hint: a moment late is fine
  if (!pods.ok()) return false;
  // A scale-adjust pod not yet scheduled: the node it asks for is still coming.
  for (const PodView& p : *pods) {
    if (p.node_name.empty() && !p.deleting) return true;
  }
  return false;
}

}  // namespace kai::binder
