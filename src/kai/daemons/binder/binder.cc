#include "kai/daemons/binder/binder.h"

#include "kai/core/k8s/json_body.h"
#include "kai/core/k8s/keys.h"

namespace kai::binder {
namespace {

namespace res = k8s::resources;
using k8s::JsonWriter;
using k8s::KeyStr;
using k8s::Str;

// A Binding carrying annotations (received-resource-type, and the predicted NUMA placement when
// the BindRequest has one): the server merges them into the pod as it sets the node, so the pod
// never has one without the other (KAI patches the annotations first, then binds).
std::string BindingBody(const PodView& pod, const BindRequestObject& request) {
  return k8s::Json([&](JsonWriter& w) {
    w.StartObject();
    KeyStr(w, "apiVersion", "v1");
    KeyStr(w, "kind", "Binding");
    Str(w, "metadata");
    w.StartObject();
    KeyStr(w, "name", pod.name);
    KeyStr(w, "namespace", pod.ns);
    if (!pod.uid.empty()) KeyStr(w, "uid", pod.uid);
    Str(w, "annotations");
    w.StartObject();
    KeyStr(w, keys::kReceivedResourceType, request.received_resource_type);
    if (!request.numa_zones.empty()) {  // where the scheduler expects the kubelet to align it
      KeyStr(w, keys::kNumaPlacementPredicted, k8s::NumaRecordText(request.numa_zones));
    }
    w.EndObject();
    w.EndObject();
    Str(w, "target");
    w.StartObject();
    KeyStr(w, "apiVersion", "v1");
    KeyStr(w, "kind", "Node");
    KeyStr(w, "name", request.selected_node);
    w.EndObject();
    w.EndObject();
  });
}

}  // namespace

Binder::Binder(const k8s::ApiClient& client, ReservationService& reservations,
               std::vector<std::unique_ptr<BindPlugin>> plugins)
    : client_(client), reservations_(reservations), plugins_(std::move(plugins)) {}

BindResult Binder::Bind(const PodView& pod, const BindRequestObject& request) {
  BindResult out;
  auto fail = [&](std::string e, BindFailure f = BindFailure::kError) {
    out.failure = f;
    out.error = std::move(e);
    return out;
  };
  const std::string& node = request.selected_node;
  if (auto s = reservations_.SyncNode(node); !s.ok()) {
    return fail("syncing the reservations of node " + node + ": " + s.error().message);
  }
  BindContext ctx{pod, request, {}, {}};
  if (IsSharedGpu(request)) {
    if (request.selected_gpu_groups.empty()) {
      return fail("BindRequest " + request.meta.ns + "/" + request.meta.name +
                      " asks for a GPU fraction but names no GPU group (spec.selectedGPUGroups)",
                  BindFailure::kInvalidRequest);
    }
    // Every group is asked for before any wait, so that a multi-device pod's reservation pods
    // start together.
    for (const std::string& group : request.selected_gpu_groups) {
      auto gpu = reservations_.Reserve(pod, node, group);
      if (!gpu.ok()) {
        return fail("reserving GPU group " + group + " for pod " + pod.Ref() + ": " +
                    gpu.error().message);
      }
      if (!gpu->ready()) {
        const bool first = out.waiting_groups.empty();
        out.waiting_groups.push_back(group);
        if (first || gpu->wait_left < out.wait_left) out.wait_left = gpu->wait_left;
        continue;
      }
      ctx.gpu_ids.push_back(gpu->gpu);
    }
    if (out.waiting()) return out;
  }
  for (const auto& p : plugins_) {
    if (auto s = p->PreBind(ctx); !s.ok()) {
      return fail("plugin " + std::string(p->Name()) + " failed in PreBind: " + s.error().message);
    }
  }
  if (auto s = CreateBinding(pod, request, out.already_bound); !s.ok()) {
    return fail(s.error().message);
  }
  for (const auto& p : plugins_) p->PostBind(ctx);
  return out;
}

Status Binder::CreateBinding(const PodView& pod, const BindRequestObject& request, bool& already) {
  const std::string path = k8s::ObjectPath(res::kPod, pod.ns, pod.name, "binding");
  k8s::HttpResponse r = client_.Create(path, BindingBody(pod, request));
  if (r.ok()) return Ok();
  if (r.status == 409) {
    // Bound already: by an earlier try of this very call whose answer was lost, or by someone
    // else. Only the first counts as done.
    k8s::HttpResponse g = client_.Get(k8s::ObjectPath(res::kPod, pod.ns, pod.name));
    auto now = ParsePod(g.body);
    if (g.ok() && now.ok() && now->node_name == request.selected_node && now->uid == pod.uid) {
      already = true;
      return Ok();
    }
  }
  return Error{"binding pod " + pod.Ref() + " to node " + request.selected_node + ": " +
               k8s::Describe({"POST", path}, r)};
}

Status Binder::Rollback(const PodView& pod, const BindRequestObject& request) {
  std::string errors;
  BindContext ctx{pod, request, {}, {}};
  for (const std::string& claim : pod.claim_names) ctx.annotated_pvcs.push_back(claim);
  for (const auto& p : plugins_) {
    if (auto s = p->Rollback(ctx); !s.ok()) {
      errors += "plugin " + std::string(p->Name()) + ": " + s.error().message + "; ";
    }
  }
  if (IsSharedGpu(request)) {
    if (auto s = reservations_.RemoveGroupLabels(pod, request.selected_gpu_groups); !s.ok()) {
      errors += s.error().message + "; ";
    }
    if (auto s = reservations_.SyncNode(request.selected_node); !s.ok()) {
      errors += s.error().message + "; ";
    }
  }
  if (!errors.empty()) return Error{"rollback of pod " + pod.Ref() + ": " + errors};
  return Ok();
}

}  // namespace kai::binder
