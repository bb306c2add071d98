#pragma once
// What the binder reads of the objects it binds: a pod as the API server answered it (a GET just
// before the bind), and a BindRequest (the watch's decoded object, model/cluster.h).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kai/core/k8s/doc.h"
#include "kai/core/model/cluster.h"
#include "kai/core/util/result.h"

namespace kai::binder {

struct ContainerView {
  std::string name;
  // NVIDIA_VISIBLE_DEVICES comes from a ConfigMap key (admission's mutation put it there).
  bool visible_devices_from_config_map = false;
};

struct PodView {
  std::string ns, name, uid, node_name, phase, resource_version;
  std::map<std::string, std::string> labels, annotations;
  std::string owner_name;        // ownerReferences[0].name ("" when none)
  std::string tolerations_json;  // spec.tolerations re-written as JSON ("[]" when none)
  std::vector<ContainerView> containers, init_containers;
  std::vector<std::string> claim_names;  // persistentVolumeClaim volumes
  bool resource_claims = false;          // spec.resourceClaims (DRA)
  // spec.resourceClaims[].name -> the ResourceClaim's name (resourceClaimName, or for a template
  // status.resourceClaimStatuses' generated name; absent while not generated).
  std::map<std::string, std::string> resource_claim_names;
  bool deleting = false;
  // The PodBound condition as the pod has it ("" when absent).
  std::string bound_status, bound_reason, bound_message;

  std::string Ref() const { return ns + "/" + name; }
  // The GPU groups the pod is labelled with: runai-gpu-group=<g> and runai-gpu-group/<g>=<g>.
  std::vector<std::string> GpuGroups() const;
  bool MultiFraction() const;  // gpu-fraction-num-devices > 1
};

// Reads a pod object (JSON from the API server). The error names the pod and the field.
Result<PodView> ReadPod(const doc::Node& pod);
Result<PodView> ParsePod(const std::string& json);

// The container the GPU fraction goes to: gpu-fraction-container-name (init containers first,
// then containers), else the first container. The index is within its list.
struct ContainerRef {
  const ContainerView* container = nullptr;
  int index = 0;
  bool init = false;
};
Result<ContainerRef> FractionContainer(const PodView& pod);

// The two per-pod ConfigMaps of GPU sharing, named from the pod's runai/shared-gpu-configmap
// annotation (admission writes it): "<prefix>-<index>" (init containers "<prefix>-i<index>")
// holds the GPU capabilities, "<that>-evar" the variables the container takes in full.
struct SharingConfigMaps {
  std::string capabilities, direct_env;
};
Result<SharingConfigMaps> SharingConfigMapNames(const PodView& pod, const ContainerRef& c);

// Fraction bind requests (receivedResourceType Fraction) go through GPU sharing.
bool IsSharedGpu(const BindRequestObject& br);

}  // namespace kai::binder
