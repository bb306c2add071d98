#pragma once
// The decisions of `kai admission`, with no I/O: what a validating or mutating webhook answers for
// a Pod, Queue or PodGroup of an AdmissionReview request. The server (a later step) decodes the
// request, calls these, and writes the AdmissionResponse; what needs the API (does a queue exist,
// which queues are its children) comes through the injected ClusterLookup.
//
// Every denial names the object (Kind namespace/name), the field and the rule:
//   "Pod team-a/train-0: metadata.annotations.gpu-fraction: must be ... , got \"1.0\"".
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/k8s/doc.h"
#include "kai/core/model/cluster.h"
#include "kai/core/util/result.h"

namespace kai::admission {

// What the Queue webhook does when a queue's quota, or its siblings' and its own together,
// exceed its parent's quota: KAI's queue controller --limit-descendents-over-subscription
// (v0.18; --enable-quota-validation before it was the warnings).
enum class OverSubscription { kNone, kWarning, kBlock };

// The `kai admission` settings (KAI's cmd/admission flags and the queue controller's).
struct Options {
  std::string scheduler_name = "kai-scheduler";  // only pods of this scheduler are admitted here
  bool gpu_sharing_enabled = false;              // --gpu-sharing-enabled (KAI's flag default)
  bool block_nvidia_visible_devices = false;     // --block-nvidia-visible-devices
  // --hami-core-enabled (KAI's admission hamicore plugin, on when the binder's is): the fraction
  // container's CUDA_DEVICE_MEMORY_LIMIT, read from the key the binder's hamicore plugin writes.
  bool hami_core_enabled = false;
  // Given to GPU-sharing pods that name no runtime class; "" disables.
  std::string gpu_fraction_runtime_class_name = "nvidia";
  // Children's quotas above their parent's: allowed silently (KAI's default), with warnings, or
  // refused when a create or an update of the quotas or the parent makes it so (an unrelated
  // edit of a queue that already over-subscribes is allowed, with the warnings).
  OverSubscription descendants_over_subscription = OverSubscription::kNone;
  // The only user who may change an NvFractions pod's nvidia.com/container.<c>.gpus.devices
  // annotation (the binder's ServiceAccount, deploy/rbac/binder.yaml); no one may create a pod
  // with it.
  std::string nvfractions_devices_writer = "system:serviceaccount:kai-scheduler:kai-binder";
};

enum class Operation { kCreate, kUpdate, kDelete };

// One AdmissionReview request: request.namespace / request.name (a pod created through
// generateName has no name yet), the object and, for updates and deletes, the old object.
struct Request {
  Operation operation = Operation::kCreate;
  std::string ns, name;
  doc::Node object, old_object;
  std::string username;  // request.userInfo.username: who asks
};

// One RFC 6902 operation. `path` is a JSON Pointer (escaped, see PointerToken); `value_json` is
// the value as JSON text, empty for "remove".
struct PatchOp {
  std::string op, path, value_json;
  friend bool operator==(const PatchOp&, const PatchOp&) = default;
};

// A JSON Pointer reference token: "~" -> "~0", "/" -> "~1" (RFC 6901).
std::string PointerToken(std::string_view key);
// The operations as one JSON Patch document: [{"op":..,"path":..,"value":..}, ...].
std::string PatchJson(const std::vector<PatchOp>& ops);

// What the webhook answers: allowed (with warnings and, for the mutator, a patch) or denied.
struct Verdict {
  bool allowed = true;
  std::string message;  // why it is denied ("" when allowed)
  std::vector<std::string> warnings;
  std::vector<PatchOp> patch;
  std::string reason;  // a short word for the rejections metric ("" when allowed)

  static Verdict Allow() { return {}; }
  static Verdict Deny(std::string message, std::string reason = "invalid") {
    return {false, std::move(message), {}, {}, std::move(reason)};
  }
};

// What the decisions read from the cluster. Each call may fail (the API did not answer); a
// failed lookup denies the request, naming what could not be read.
class ClusterLookup {
 public:
  virtual ~ClusterLookup() = default;
  // The queue named `name`, decoded; nullopt when there is none.
  virtual Result<std::optional<QueueObject>> FindQueue(std::string_view name) const = 0;
  // The names of the queues whose spec.parentQueue is `name`.
  virtual Result<std::vector<std::string>> ChildQueues(std::string_view name) const = 0;
  // Whether the PodGroup has a pod bound to a node or running (not terminating or finished).
  virtual Result<bool> PodGroupRunning(std::string_view ns, std::string_view name) const = 0;
};

// The random part of a GPU-sharing ConfigMap name: `length` characters of [a-z0-9] (KAI uses
// 7 of "bcdfghjklmnpqrstvwxz2456789"). Injected so that tests are deterministic.
using RandomSuffix = std::function<std::string(size_t length)>;
inline constexpr size_t kConfigMapSuffixLength = 7;

// Pod (validating webhook, create and update): the GPU-sharing request rules and, with
// block_nvidia_visible_devices, the NVIDIA_VISIBLE_DEVICES rule. Pods of other schedulers and
// deletions are allowed.
Verdict ValidatePod(const Request& request, const Options& options);

// Pod (mutating webhook, create): the GPU-sharing environment of the fraction container (with
// hami_core_enabled, CUDA_DEVICE_MEMORY_LIMIT too), the ConfigMap annotation and volume,
// NVIDIA_VISIBLE_DEVICES=void on containers that request no GPU (with
// block_nvidia_visible_devices) and the runtime class. Idempotent: a pod that already has the
// mutation gets an empty patch. Denies only what cannot be mutated (an unknown
// gpu-fraction-container-name).
Verdict MutatePod(const Request& request, const Options& options, const RandomSuffix& random);

// Queue (validating webhook, create, update and delete).
Verdict ValidateQueue(const Request& request, const Options& options, const ClusterLookup& lookup);

// PodGroup (validating webhook, create and update): the SubGroup tree and its minimums, and on
// the update of a running semi-preemptible PodGroup no raised minimum.
Verdict ValidatePodGroup(const Request& request, const ClusterLookup& lookup);

}  // namespace kai::admission
