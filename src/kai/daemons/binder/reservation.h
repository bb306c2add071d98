#pragma once
// GPU reservation pods (kai-semantics §5.4; KAI's B/binding/resourcereservation/): a fractional
// pod's GPU group is held on its node by one pod in namespace kai-resource-reservation that asks
// for a whole nvidia.com/gpu; the device plugin gives it a GPU, and the program it runs
// (`kai resource-reservation`) writes that GPU's id to its own annotation. Fraction pods of the
// group then see that GPU through NVIDIA_VISIBLE_DEVICES.
//
// Reservations are kept in sync with the pods using them: a reservation pod no bound fraction pod
// and no active BindRequest needs is deleted; a running fraction pod whose reservation pod
// vanished is deleted (its GPU is no longer held). Work on one group is serialised.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kai/core/k8s/pod_security.h"
#include "kai/daemons/binder/group_index.h"
#include "kai/daemons/binder/objects.h"
#include "kai/kube/client/api_client.h"

namespace kai::binder {

// The reservation pod's resources besides its GPU and its security contexts (KAI's
// --resource-reservation-pod-resources, -pod-security-context and -container-security-context).
// The defaults are small and pass the `restricted` Pod Security level, so that the reservation
// namespace can enforce it: `kai resource-reservation` reads NVML and patches its own pod through
// the API, neither of which needs root (KAI sets no resources, and no seccomp profile, by default).
struct ReservationPodShape {
  // Quantities by resource name, in the order written; nvidia.com/gpu is never taken from here.
  std::vector<std::pair<std::string, std::string>> requests{{"cpu", "10m"}, {"memory", "64Mi"}};
  std::vector<std::pair<std::string, std::string>> limits{{"cpu", "100m"}, {"memory", "256Mi"}};
  std::string pod_security_context{k8s::kRestrictedPodSecurityContext};  // JSON, as written
  std::string container_security_context{k8s::kRestrictedContainerSecurityContext};
};

// --resource-reservation-pod-resources: a JSON ResourceRequirements ({"requests": {...},
// "limits": {...}}, quantities as strings) replaces the default requests and limits; a side
// left out keeps none. nvidia.com/gpu is dropped (the pod always asks for one GPU, as KAI's).
// Errors name the flag and the field.
Status ParseReservationResources(std::string_view json, ReservationPodShape& shape);
// --resource-reservation-{pod,container}-security-context: one JSON object, returned in a
// canonical form (the API server checks its fields when the pod is created).
Result<std::string> ParseSecurityContextFlag(std::string_view json, std::string_view flag);

// The three flags' texts ("" keeps the default) applied to `shape`; the first error is returned.
struct ReservationPodFlags {
  std::string resources, pod_security_context, container_security_context;
};
Status ApplyReservationPodFlags(const ReservationPodFlags& flags, ReservationPodShape& shape);

struct ReservationOptions {
  std::string ns = "kai-resource-reservation";
  std::string service_account = "kai-resource-reservation";
  std::string image = "kai";  // an image whose `kai resource-reservation` runs in the pod
  std::string app_label = "kai-resource-reservation";
  std::string scale_adjust_ns = "kai-scale-adjust";
  std::string runtime_class;  // "" = none (KAI's default)
  std::chrono::milliseconds allocation_timeout{40000};
  bool fake_gpu_nodes = false;  // the pod sleeps instead (test clusters without GPUs)
  bool fips_mode = false;       // the pod's program runs with --fips-mode (the binder's own mode)
  ReservationPodShape shape;
  std::function<void(const std::string&)> log;
  std::function<std::chrono::steady_clock::time_point()> now = [] {
    return std::chrono::steady_clock::now();
  };
};

// A group's GPU for a pod: its id, or the reservation pod that has none yet. A bind never
// blocks on a reservation pod (its container may take seconds to start): it is tried again
// when the pod changes, or when its allocation time-out is due.
struct GpuReservation {
  std::string gpu;                         // the GPU's id; empty while waiting
  std::string pending_pod;                 // the reservation pod without a GPU id yet
  std::chrono::milliseconds wait_left{0};  // until its allocation time-out
  bool ready() const { return !gpu.empty(); }
};

struct ReservationStats {
  int64_t created = 0, deleted = 0, timeouts = 0, orphans_deleted = 0;
};

// One lock per GPU group, created on demand and freed with its last holder.
class GroupLocks {
 public:
  class Guard {
   public:
    Guard(GroupLocks& l, std::string g);
    ~Guard();
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    GroupLocks& locks_;
    std::string group_;
  };

 private:
  struct Entry {
    bool held = false;
    int users = 0;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<std::string, Entry> groups_;
};

// "gpu-reservation-" + the first 8 bytes of sha256("<node>/<group>") in hex (KAI's name).
std::string ReservationPodName(const std::string& node, const std::string& group);

// The reservation pod `name` holding GPU group `group` on `node` (tolerations: the fraction
// pod's, a JSON array), as the JSON body of its create.
std::string ReservationPodBody(const ReservationOptions& o, const std::string& name,
                               const std::string& node, const std::string& group,
                               std::string_view tolerations_json);

class ReservationService {
 public:
  // `view` (may be null: every sync then asks the API server) is what the caller's watch knows
  // of the groups; it must outlive the service.
  ReservationService(const k8s::ApiClient& client, ReservationOptions options,
                     const GroupView* view);

  // Every group that has a reservation pod or a labelled pod.
  Status SyncAll();
  // The groups of the reservation and fraction pods on `node`.
  Status SyncNode(const std::string& node);
  Status SyncGroup(const std::string& group);

  // Holds the GPU of `group` on `node` for `pod`: reuses the group's reservation pod or creates
  // one; once it has its GPU id, labels `pod` with the group and returns the id. A reservation
  // pod still without an id past the allocation time-out is deleted (an error).
  Result<GpuReservation> Reserve(const PodView& pod, const std::string& node,
                                 const std::string& group);
  // Takes the group labels off `pod` (a bind's rollback): those it had when read and those a
  // reservation of `groups` added since.
  Status RemoveGroupLabels(const PodView& pod, const std::vector<std::string>& groups);

  ReservationStats stats() const;

 private:
  // Where a list is read from: the API server's watch cache (resourceVersion=0: about a
  // millisecond, may lag a moment behind) or etcd (a quorum read: current, but it scans every
  // pod of the scope, tens of milliseconds on a large cluster).
  enum class Read { kCache, kQuorum };
  // A group's pods: its reservation pods and the bound, live fraction pods labelled with it.
  struct GroupPods {
    std::vector<PodView> reservations, fraction_pods;
  };

  Status SyncGroupLocked(const std::string& group);
  Result<GroupPods> ListGroup(const std::string& group, Read read) const;
  // Whether the group's pods call for a deletion: reservation pods nobody uses, or running
  // fraction pods whose reservation is gone.
  bool NeedsCleanup(const std::string& group, const GroupPods& pods) const;
  Status CleanUp(const std::string& group, const GroupPods& pods);
  // Syncs every group the listed pods are labelled with.
  Status SyncGroupsOf(const Result<std::vector<PodView>>& pods);
  Result<std::vector<PodView>> ListPods(const std::string& ns, const std::string& query,
                                        Read read) const;
  Result<GpuReservation> AcquireGpu(const PodView& pod, const std::string& node,
                                    const std::string& group);
  // The reservation pod `name` has no GPU id yet: how long it may still take, or the time-out.
  Result<GpuReservation> Found(const PodView& reservation);
  Result<GpuReservation> Pending(const std::string& name);
  void DoneWaiting(const std::string& name);
  Result<std::string> CreateReservationPod(const PodView& pod, const std::string& node,
                                           const std::string& group);
  Status DeletePod(const std::string& ns, const std::string& name, bool now);
  Status LabelPod(const PodView& pod, const std::string& group);
  bool ScalingUp() const;
  void Log(const std::string& line) const;

  const k8s::ApiClient& client_;
  ReservationOptions o_;
  const GroupView* view_;
  GroupLocks locks_;
  mutable std::mutex stats_mu_;
  ReservationStats stats_;
  // When this process first found each reservation pod without a GPU id (stats_mu_); a restart
  // starts the allocation time-out anew.
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> waiting_since_;
};

}  // namespace kai::binder
