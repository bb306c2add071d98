#include "kai/daemons/scheduler/commit.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <charconv>
#include <chrono>
#include <functional>
#include <set>
#include <thread>

#include "kai/core/actions/common/background.h"
#include "kai/core/k8s/json_body.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/resource/quantity.h"
#include "kai/core/util/time.h"

namespace kai::scheduler {
namespace {

using k8s::AllocationJson;
using k8s::Json;
using k8s::JsonWriter;
using k8s::KeyStr;
using k8s::PodConditionPatch;
using k8s::Str;
namespace res = k8s::resources;

constexpr size_t kEventCapacity = 20000;  // queued events beyond it are dropped and counted

std::string PodKey(const ObjectRef& pod) { return "pod/" + pod.uid; }

// spec.resourceClaimAllocations: each claim's allocation.
void ClaimAllocations(JsonWriter& w, const BindDecision& b) {
  if (b.claims.empty()) return;
  Str(w, "resourceClaimAllocations");
  w.StartArray();
  for (const DraClaimResult& c : b.claims) {
    w.StartObject();
    KeyStr(w, "name", c.name);
    AllocationJson(w, c.devices, c.config, c.node);
    w.EndObject();
  }
  w.EndArray();
}

// spec.extendedResourceClaimAllocation: the claim the binder creates for the pod's DRA-backed
// extended resources, its device requests and which container each serves.
void ExtendedClaimAllocation(JsonWriter& w, const BindDecision& b) {
  if (!b.extended) return;
  const DraExtendedResult& e = *b.extended;
  Str(w, "extendedResourceClaimAllocation");
  w.StartObject();
  AllocationJson(w, e.devices, e.config, e.node);
  k8s::DeviceRequestsJson(w, "deviceRequests", e.requests);
  k8s::RequestMappingsJson(w, "containerMappings", e.mappings);
  w.EndObject();
}

std::string BindRequestBody(const BindDecision& b, const CommitOptions& o) {
  return Json([&](JsonWriter& w) {
    w.StartObject();
    KeyStr(w, "apiVersion", res::kBindRequest.api_version);
    KeyStr(w, "kind", "BindRequest");
    Str(w, "metadata");
    w.StartObject();
    KeyStr(w, "name", b.pod.name);
    KeyStr(w, "namespace", b.pod.ns);
    Str(w, "labels");
    w.StartObject();
    KeyStr(w, "selected-node", b.node);
    if (!o.node_pool_value.empty()) KeyStr(w, o.node_pool_key, o.node_pool_value);
    w.EndObject();
    Str(w, "ownerReferences");
    w.StartArray();
    w.StartObject();
    KeyStr(w, "apiVersion", "v1");
    KeyStr(w, "kind", "Pod");
    KeyStr(w, "name", b.pod.name);
    KeyStr(w, "uid", b.pod.uid);
    w.EndObject();
    w.EndArray();
    w.EndObject();
    Str(w, "spec");
    w.StartObject();
    KeyStr(w, "podName", b.pod.name);
    KeyStr(w, "selectedNode", b.node);
    KeyStr(w, "receivedResourceType", b.received_resource_type);
    Str(w, "receivedGPU");
    w.StartObject();
    Str(w, "count");
    w.Int(b.gpu_count);
    KeyStr(w, "portion", b.gpu_portion);
    w.EndObject();
    if (!b.gpu_groups.empty()) {
      Str(w, "selectedGPUGroups");
      w.StartArray();
      for (const auto& g : b.gpu_groups) Str(w, g);
      w.EndArray();
    }
    ClaimAllocations(w, b);
    ExtendedClaimAllocation(w, b);
    if (!b.numa_zones.empty()) {
      Str(w, "predictedNUMAZones");
      k8s::NumaZonesJson(w, b.numa_zones);
    }
    w.EndObject();
    w.EndObject();
  });
}

std::optional<doc::Document> ParseBody(const k8s::HttpResponse& r) {
  auto d = doc::ParseJson(r.body);
  if (!d.ok() || d->Roots().empty() || !d->Roots()[0].IsMap()) return std::nullopt;
  return std::move(d.value());
}

}  // namespace

// The writes of one Commit: a work list drained by a bounded set of threads.
struct Committer::Run {
  std::mutex mu;
  CommitResult result;
  void Fail(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu);
    ++result.failed;
    result.errors.push_back(what);
  }
  void Count(int CommitResult::*field) {
    std::lock_guard<std::mutex> lock(mu);
    ++(result.*field);
  }
  void BindTook(std::chrono::steady_clock::time_point since) {
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - since;
    std::lock_guard<std::mutex> lock(mu);
    result.bind_millis.push_back(took.count());
  }
};

Committer::Committer(const k8s::ApiClient& client, informer::Informer* informer,
                     CommitOptions options)
    : client_(client),
      informer_(informer),
      options_(std::move(options)),
      background_(kEventCapacity, std::max(1, options_.background_writers)) {}

bool Committer::FlushBackground(std::chrono::milliseconds timeout) {
  background_.Resume();
  return background_.Flush(timeout);
}

// The object the server answered with counts in the next cycle (informer.h, Assume).
void Committer::AssumeAnswer(const k8s::ResourceType& type, const k8s::HttpResponse& r) {
  if (!informer_) return;
  if (auto answer = ParseBody(r)) informer_->Assume(type, answer->Roots()[0]);
}

void Committer::Abandon() {
  background_.Clear();
  std::lock_guard<std::mutex> lock(mu_);
  pod_messages_.clear();
  group_messages_.clear();
  event_messages_.clear();
}

// After a cycle that bound or evicted, the background writes wait for the next cycle too: in a
// burst (a fill, a large gang) the binds keep the server's write rate and the statuses follow.
// A burst longer than `background_deferral` lets them run between commits again until a cycle
// without binds, so under sustained load they are never starved.
void Committer::ResumeBackground(const CommitResult& r) {
  const auto t = std::chrono::steady_clock::now();
  const bool burst = r.binds + r.evictions > 0;
  if (burst && !deferral_spent_) {
    if (!deferred_since_) deferred_since_ = t;
    if (t - *deferred_since_ < options_.background_deferral) return;  // stays paused
    deferral_spent_ = true;
  }
  if (!burst) deferral_spent_ = false;
  deferred_since_.reset();
  background_.Resume();
}

void Committer::LogFailure(const std::string& what) const {
  if (options_.log) options_.log(what);
}

void Committer::Forget(std::map<std::string, std::string>& memory, const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  memory.erase(key);
}

void Committer::Background(std::string key, std::function<bool()> write, Run& run) {
  background_.Put(std::move(key), std::move(write));
  run.Count(&CommitResult::background);
}

bool Committer::Changed(std::map<std::string, std::string>& memory, const std::string& key,
                        const std::string& value) {
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = memory.try_emplace(key, value);
  if (inserted) return true;
  if (it->second == value) return false;
  it->second = value;
  return true;
}

size_t Committer::Remembered() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pod_messages_.size() + group_messages_.size() + event_messages_.size();
}

void Committer::Event(const ObjectRef& obj, std::string_view api_version, std::string_view kind,
                      std::string_view type, std::string_view reason, const std::string& message,
                      const std::map<std::string, std::string>& annotations, UnixSeconds now) {
  k8s::EventSpec spec{
      std::string(api_version), std::string(kind),   obj.ns,  obj.name,    obj.uid,
      std::string(type),        std::string(reason), message, annotations, options_.scheduler_name};
  const std::string body = k8s::EventBody(spec, now, ++event_seq_);
  const std::string path = k8s::CollectionPath(res::kEvent, obj.ns.empty() ? "default" : obj.ns);
  background_.Put("", [this, path, body] { return client_.Create(path, body).ok(); });
}

void Committer::Bind(const BindDecision& b, UnixSeconds now, Run& run) {
  const auto started = std::chrono::steady_clock::now();
  const std::string path = k8s::CollectionPath(res::kBindRequest, b.pod.ns);
  k8s::HttpResponse r = client_.Create(path, BindRequestBody(b, options_));
  if (r.status == 409) {
    // Named after the pod: one exists already (an earlier try of this very write that the
    // server applied, or a cache that lags). It counts only when it asks for the same node.
    const std::string obj_path = k8s::ObjectPath(res::kBindRequest, b.pod.ns, b.pod.name);
    r = client_.Get(obj_path);
    auto existing = ParseBody(r);
    const bool same = existing && existing->Roots()[0]["spec"]["podName"].Scalar() == b.pod.name &&
                      existing->Roots()[0]["spec"]["selectedNode"].Scalar() == b.node;
    if (!r.ok() || !same) {
      run.Fail("BindRequest " + b.pod.ns + "/" + b.pod.name + ": the create answered 409 and " +
               (r.ok() && existing
                    ? "the existing request names node " +
                          std::string(existing->Roots()[0]["spec"]["selectedNode"].Scalar())
                    : "re-reading it failed (" + k8s::Describe({"GET", obj_path}, r) + ")") +
               "; the next cycle reads the server's state");
      if (existing && informer_) informer_->Assume(res::kBindRequest, existing->Roots()[0]);
      return;
    }
  } else if (!r.ok()) {
    const std::string err = k8s::Describe({"POST", path}, r);
    run.Fail(err);
    const std::string msg =
        "Failed to bind pod " + b.pod.ns + "/" + b.pod.name + " to node " + b.node + ". " + err;
    Event(b.pod, "v1", "Pod", "Warning", "FailedBinding", msg, {}, now);
    client_.Patch(k8s::ObjectPath(res::kPod, b.pod.ns, b.pod.name, "status"),
                  PodConditionPatch("PodScheduled", "False", "BindingError", msg, now),
                  k8s::PatchType::kStrategicMerge);
    return;
  }
  AssumeAnswer(res::kBindRequest, r);
  run.Count(&CommitResult::binds);
  run.BindTook(started);
  background_.Cancel(PodKey(b.pod));  // an Unschedulable mark still queued is no longer true
  Forget(pod_messages_, b.pod.uid);
  const std::string pool = options_.node_pool_value.empty() ? "default" : options_.node_pool_value;
  Event(b.pod, "v1", "Pod", "Normal", "Scheduled",
        "Successfully assigned pod " + b.pod.ns + "/" + b.pod.name + " to node " + b.node +
            " at node-pool " + pool,
        {}, now);
}

// The DisruptionTarget condition (reason PreemptionByScheduler, the eviction's message: its
// action and preemptor) before the delete, so that a Job's podFailurePolicy can tell the
// scheduler's eviction from a failure. As KAI's evictor, a pod whose condition could not be
// written is not deleted this cycle (the next one decides again); false then.
bool Committer::MarkDisruptionTarget(const EvictDecision& e, const std::string& path,
                                     UnixSeconds now, Run& run) {
  const std::string status = path + "/status";
  const k8s::HttpResponse r = client_.Patch(
      status,
      PodConditionPatch("DisruptionTarget", "True", "PreemptionByScheduler", e.message, now),
      k8s::PatchType::kStrategicMerge);
  if (r.ok()) return true;
  if (r.status != 404) run.Fail(k8s::Describe({"PATCH", status}, r));  // 404: already gone
  return false;
}

void Committer::Evict(const EvictDecision& e, UnixSeconds now, Run& run) {
  if (!e.pod_group.name.empty()) {
    std::map<std::string, std::string> ann{
        {"kai.scheduler/num-evicted-pods", std::to_string(e.gang_size)},
        {"kai.scheduler/evictor-action-type", e.action}};
    if (!e.preemptor.name.empty()) {
      ann["kai.scheduler/evictor-pod-group-name"] = e.preemptor.name;
      ann["kai.scheduler/evictor-pod-group-namespace"] = e.preemptor.ns;
    }
    Event(e.pod_group, res::kPodGroup.api_version, "PodGroup", "Normal", "Evict", e.message, ann,
          now);
  } else if (e.action == actions::kBackgroundAction) {
    // A background pod is in no PodGroup: the event goes on the pod itself.
    Event(e.pod, "v1", "Pod", "Normal", "Evict", e.message,
          {{"kai.scheduler/evictor-action-type", e.action}}, now);
  }
  const std::string path = k8s::ObjectPath(res::kPod, e.pod.ns, e.pod.name);
  if (options_.update_pod_eviction_condition && !MarkDisruptionTarget(e, path, now, run)) return;
  // Preconditions on the uid: a pod of the same name created since is never deleted.
  const std::string body = Json([&](JsonWriter& w) {
    w.StartObject();
    KeyStr(w, "apiVersion", "v1");
    KeyStr(w, "kind", "DeleteOptions");
    if (!e.pod.uid.empty()) {
      Str(w, "preconditions");
      w.StartObject();
      KeyStr(w, "uid", e.pod.uid);
      w.EndObject();
    }
    w.EndObject();
  });
  const k8s::HttpResponse r = client_.Delete(path, body);
  if (r.status == 404) return;  // already gone
  if (!r.ok()) {
    run.Fail(k8s::Describe({"DELETE", path}, r));
    return;
  }
  run.Count(&CommitResult::evictions);
  if (!informer_) return;
  auto after = ParseBody(r);
  if (after && after->Roots()[0]["kind"].Scalar() == "Pod") {
    informer_->Assume(res::kPod, after->Roots()[0]);  // terminating: Releasing until it is gone
  } else {
    informer_->AssumeDeleted(res::kPod, informer::KeyOf(e.pod.ns, e.pod.name));
  }
}

// Runs in the background: the pod's Unschedulable event and PodScheduled condition.
bool Committer::MarkPending(const PendingPodDecision& p, UnixSeconds now) {
  Event(p.pod, "v1", "Pod", "Warning", "Unschedulable", p.message, {}, now);
  if (!p.mark_unschedulable) return true;
  const std::string path = k8s::ObjectPath(res::kPod, p.pod.ns, p.pod.name, "status");
  const k8s::HttpResponse r = client_.Patch(
      path, PodConditionPatch("PodScheduled", "False", "Unschedulable", p.message, now),
      k8s::PatchType::kStrategicMerge);
  if (r.ok() || r.status == 404) return true;
  LogFailure(k8s::Describe({"PATCH", path}, r));
  Forget(pod_messages_, p.pod.uid);  // try again next cycle
  return false;
}

namespace {

// A subtree as read, scalars as strings (the condition fields kept are strings in the schema).
void WriteAsRead(JsonWriter& w, const doc::Node& n) {
  switch (n.type()) {
    case doc::Type::kMap:
      w.StartObject();
      for (const auto& e : n.Entries()) {
        Str(w, e.first.Scalar());
        WriteAsRead(w, e.second);
      }
      w.EndObject();
      return;
    case doc::Type::kSequence:
      w.StartArray();
      for (size_t i = 0; i < n.size(); ++i) WriteAsRead(w, n[i]);
      w.EndArray();
      return;
    case doc::Type::kScalar:
      Str(w, n.Scalar());
      return;
    default:
      w.Null();
  }
}

// A ResourceList of cpu, memory and GPUs; unlimited (negative) amounts are left out.
void WriteResourceList(JsonWriter& w, const char* key, const QueueVector& v) {
  Str(w, key);
  w.StartObject();
  if (v.milli_cpu >= 0) KeyStr(w, "cpu", FormatMilli(v.milli_cpu));
  if (v.memory >= 0) KeyStr(w, "memory", std::to_string(v.memory));
  if (v.milli_gpu >= 0) KeyStr(w, "nvidia.com/gpu", FormatMilli(v.milli_gpu));
  w.EndObject();
}

// details.queueDetails of a capacity reason (KAI's QuotaDetails).
void WriteQueueDetails(JsonWriter& w, const QueueCapReason& cap) {
  Str(w, "details");
  w.StartObject();
  Str(w, "queueDetails");
  w.StartObject();
  KeyStr(w, "name", cap.queue);
  const QueueStanding& q = cap.standing;
  WriteResourceList(w, "queueRequestedResources", q.requested);
  WriteResourceList(w, "queueDeservedResources", q.deserved);
  WriteResourceList(w, "queueAllocatedNonPreemptibleResources", q.allocated_non_preemptible);
  WriteResourceList(w, "podGroupRequestedResources", cap.job_requested);
  WriteResourceList(w, "podGroupRequestedNonPreemptibleResources",
                    cap.job_requested_non_preemptible);
  WriteResourceList(w, "queueAllocatedResources", q.allocated);
  WriteResourceList(w, "queueResourceLimits", q.limits);
  w.EndObject();
  w.EndObject();
}

// The condition's reasons: one per typed reason, its kind, its message and, for the queue
// capacity reasons, the queue's amounts.
void WriteConditionReasons(JsonWriter& w, const std::vector<Reason>& reasons) {
  if (reasons.empty()) return;
  Str(w, "reasons");
  w.StartArray();
  for (const Reason& r : reasons) {
    w.StartObject();
    KeyStr(w, "reason", r.KindName());
    KeyStr(w, "message", r.Message());
    if (const QueueCapReason* cap = r.QueueCap()) WriteQueueDetails(w, *cap);
    w.EndObject();
  }
  w.EndArray();
}

// status.schedulingConditions after KAI's rules (default_status_updater.go): the node pool's
// entry replaced by one with the next transitionID, other pools' kept; or all removed.
std::string SchedulingConditionsBody(const doc::Node& pg, const std::optional<std::string>& msg,
                                     const std::vector<Reason>& reasons, const std::string& pool,
                                     UnixSeconds now) {
  const doc::Node conds = pg["status"]["schedulingConditions"];
  int64_t last_id = 0;
  for (size_t i = 0; i < conds.size(); ++i) {
    const std::string_view id = conds[i]["transitionID"].Scalar();
    int64_t v = 0;
    if (std::from_chars(id.data(), id.data() + id.size(), v).ec == std::errc()) {
      last_id = std::max(last_id, v);
    }
  }
  return Json([&](JsonWriter& w) {
    w.StartObject();
    Str(w, "status");
    w.StartObject();
    Str(w, "schedulingConditions");
    if (!msg) {
      w.Null();
    } else {
      w.StartArray();
      for (size_t i = 0; i < conds.size(); ++i) {
        if (conds[i]["nodePool"].Scalar() == pool) continue;
        w.StartObject();
        for (const char* k : {"type", "nodePool", "status", "reason", "message", "transitionID",
                              "lastTransitionTime"}) {
          if (conds[i][k].IsScalar()) KeyStr(w, k, conds[i][k].Scalar());
        }
        if (conds[i]["reasons"].IsSequence()) {  // another pool's reasons, kept as they are
          Str(w, "reasons");
          WriteAsRead(w, conds[i]["reasons"]);
        }
        w.EndObject();
      }
      w.StartObject();
      KeyStr(w, "type", "UnschedulableOnNodePool");
      KeyStr(w, "nodePool", pool);
      KeyStr(w, "status", "True");
      KeyStr(w, "reason", "Unschedulable");
      KeyStr(w, "message", *msg);
      KeyStr(w, "transitionID", std::to_string(last_id + 1));
      KeyStr(w, "lastTransitionTime", FormatRfc3339(now));
      WriteConditionReasons(w, reasons);
      w.EndObject();
      w.EndArray();
    }
    w.EndObject();
    w.EndObject();
  });
}

std::string AnnotationsPatch(const std::vector<std::pair<std::string, std::string>>& ann) {
  return Json([&](JsonWriter& w) {
    w.StartObject();
    Str(w, "metadata");
    w.StartObject();
    Str(w, "annotations");
    w.StartObject();
    for (const auto& [k, v] : ann) {
      Str(w, k);
      if (v.empty()) {
        w.Null();
      } else {
        Str(w, v);
      }
    }
    w.EndObject();
    w.EndObject();
    w.EndObject();
  });
}

}  // namespace

// Runs in the background: one timer annotation of a PodGroup (merge patch; "" removes it). The
// answer is assumed, so the next cycles read the timer even before the watch echoes it.
bool Committer::PatchTimers(const PodGroupDecision& g) {
  const std::string path = k8s::ObjectPath(res::kPodGroup, g.pod_group.ns, g.pod_group.name);
  const k8s::HttpResponse r =
      client_.Patch(path, AnnotationsPatch(g.annotations), k8s::PatchType::kMerge);
  if (r.status == 404) return true;  // gone
  if (!r.ok()) {
    LogFailure(k8s::Describe({"PATCH", path}, r));
    return false;
  }
  AssumeAnswer(res::kPodGroup, r);
  return true;
}

// Runs in the background: the PodGroup's Unschedulable event and its schedulingConditions for
// this node pool (read first: the transition id counts on), or their removal.
bool Committer::PatchConditions(const PodGroupDecision& g, UnixSeconds now) {
  if (g.unschedulable) {
    Event(g.pod_group, res::kPodGroup.api_version, "PodGroup", "Normal", "Unschedulable",
          *g.unschedulable, {}, now);
  }
  const std::string path = k8s::ObjectPath(res::kPodGroup, g.pod_group.ns, g.pod_group.name);
  const k8s::HttpResponse cur = client_.Get(path);
  auto pg = ParseBody(cur);
  if (!pg) {
    if (cur.status == 404) return true;
    LogFailure(k8s::Describe({"GET", path}, cur));
    Forget(group_messages_, g.pod_group.uid);
    return false;
  }
  const doc::Node root = pg->Roots()[0];
  if (!g.unschedulable && root["status"]["schedulingConditions"].size() == 0) return true;
  const std::string pool = options_.node_pool_value.empty() ? "default" : options_.node_pool_value;
  const k8s::HttpResponse r = client_.Patch(
      path + "/status", SchedulingConditionsBody(root, g.unschedulable, g.reasons, pool, now),
      k8s::PatchType::kMerge);
  if (!r.ok()) {
    if (r.status == 404) return true;
    LogFailure(k8s::Describe({"PATCH", path + "/status"}, r));
    Forget(group_messages_, g.pod_group.uid);
    return false;
  }
  AssumeAnswer(res::kPodGroup, r);
  return true;
}

// Queues a PodGroup's writes: each changed timer under its own key (a later value of the same
// timer replaces a queued one; different timers never replace each other), the conditions under
// one key when their message changed.
void Committer::QueuePodGroup(const PodGroupDecision& g, UnixSeconds now, Run& run) {
  for (const auto& ann : g.annotations) {
    PodGroupDecision one;
    one.pod_group = g.pod_group;
    one.annotations = {ann};
    Background(
        "pg-timer/" + g.pod_group.uid + "/" + ann.first,
        [this, one = std::move(one)] { return PatchTimers(one); }, run);
  }
  if (!g.unschedulable && !g.clear_conditions) return;
  const std::string state = g.unschedulable ? "U:" + *g.unschedulable : "clear";
  if (!Changed(group_messages_, g.pod_group.uid, state)) return;
  Background(
      "pg-conditions/" + g.pod_group.uid, [this, g, now] { return PatchConditions(g, now); }, run);
}

void Committer::Nominate(const NominateDecision& n, Run& run) {
  const std::string path = k8s::ObjectPath(res::kPod, n.pod.ns, n.pod.name, "status");
  const std::string body = Json([&](JsonWriter& w) {
    w.StartObject();
    Str(w, "status");
    w.StartObject();
    Str(w, "nominatedNodeName");
    if (n.node.empty()) {
      w.Null();
    } else {
      Str(w, n.node);
    }
    w.EndObject();
    w.EndObject();
  });
  const k8s::HttpResponse r = client_.Patch(path, body, k8s::PatchType::kMerge);
  if (!r.ok() && r.status != 404) {
    run.Fail(k8s::Describe({"PATCH", path}, r));
    return;
  }
  AssumeAnswer(res::kPod, r);
  run.Count(&CommitResult::nominations);
}

void Committer::DeleteStale(const ObjectRef& b, Run& run) {
  const std::string path = k8s::ObjectPath(res::kBindRequest, b.ns, b.name);
  const k8s::HttpResponse r = client_.Delete(path);
  if (!r.ok() && r.status != 404) {
    run.Fail(k8s::Describe({"DELETE", path}, r));
    return;
  }
  if (informer_) informer_->AssumeDeleted(res::kBindRequest, informer::KeyOf(b.ns, b.name));
}

void Committer::StatusEvents(const Decisions& d, UnixSeconds now) {
  std::set<std::string> mentioned;
  auto once = [&](const ObjectRef& obj, std::string_view api_version, std::string_view kind,
                  std::string_view reason, const std::string& message) {
    std::string key = std::string(reason) + "/" + obj.uid;
    if (Changed(event_messages_, key, message)) {
      Event(obj, api_version, kind, "Normal", reason, message, {}, now);
    }
    mentioned.insert(std::move(key));
  };
  for (const auto& p : d.pipelined) {
    once(p.pod, "v1", "Pod", "Pipelined",
         "Pod " + p.pod.ns + "/" + p.pod.name + " was pipelined to node " + p.node);
  }
  for (const auto& g : d.pod_groups) {
    const std::string_view api = res::kPodGroup.api_version;
    if (g.stale) once(g.pod_group, api, "PodGroup", "StaleJob", *g.stale);
    if (g.not_ready) once(g.pod_group, api, "PodGroup", "NotReady", *g.not_ready);
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(event_messages_, [&](const auto& kv) { return !mentioned.count(kv.first); });
}

CommitResult Committer::Commit(const Decisions& d, UnixSeconds now) {
  Run run;
  std::vector<std::function<void()>> work;
  for (const auto& b : d.binds) work.push_back([&, this] { Bind(b, now, run); });
  for (const auto& e : d.evictions) work.push_back([&, this] { Evict(e, now, run); });
  for (const auto& n : d.nominations) work.push_back([&, this] { Nominate(n, run); });
  for (const auto& b : d.stale_bind_requests) work.push_back([&, this] { DeleteStale(b, run); });
  background_.Pause();
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < work.size();) work[i]();
  };
  const size_t threads =
      std::min(work.size(), static_cast<size_t>(std::max(1, options_.max_in_flight)));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  if (threads > 0) worker();
  for (auto& t : pool) t.join();
  for (const auto& p : d.pending) {
    if (!Changed(pod_messages_, p.pod.uid, p.message)) continue;
    Background(
        PodKey(p.pod), [this, p, now] { return MarkPending(p, now); }, run);
  }
  for (const auto& g : d.pod_groups) QueuePodGroup(g, now, run);
  StatusEvents(d, now);
  ResumeBackground(run.result);
  // Forget pods and PodGroups this cycle did not mention (bound, gone, or no longer pending).
  std::set<std::string> pods, groups;
  for (const auto& p : d.pending) pods.insert(p.pod.uid);
  for (const auto& g : d.pod_groups) groups.insert(g.pod_group.uid);
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::erase_if(pod_messages_, [&](const auto& kv) { return !pods.count(kv.first); });
    std::erase_if(group_messages_, [&](const auto& kv) { return !groups.count(kv.first); });
  }
  return run.result;
}

}  // namespace kai::scheduler
