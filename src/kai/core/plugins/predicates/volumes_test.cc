#include "kai/core/plugins/predicates/volumes.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "kai/core/k8s/decode.h"
#include "kai/testing/allocate_once.h"

namespace kai {
namespace {

std::string Node(const std::string& name, const std::string& zone = "a") {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels: {kubernetes.io/hostname: " + name + ", zone: " + zone +
         "}\nstatus:\n  allocatable: {cpu: '8', memory: 8Gi, pods: '110', nvidia.com/gpu: '4'}\n"
         "---\n";
}

std::string Class(const std::string& name, const std::string& provisioner, bool wffc,
                  const std::string& extra = "") {
  return "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: " + name + extra +
         "}\nprovisioner: " + provisioner +
         "\nvolumeBindingMode: " + (wffc ? "WaitForFirstConsumer" : "Immediate") + "\n---\n";
}

const std::string kLocal = Class("local", "kubernetes.io/no-provisioner", true);

// A local volume on `node` ("" = any node); `claim` pre-binds it.
std::string Volume(const std::string& name, const std::string& size, const std::string& node,
                   const std::string& claim = "", const std::string& mode = "Filesystem") {
  std::string s =
      "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " + name +
      "}\nspec:\n  capacity: {storage: " + size +
      "}\n  accessModes: [ReadWriteOnce]\n  storageClassName: local\n  volumeMode: " + mode +
      "\n  local: {path: /mnt}\n";
  if (!node.empty()) {
    s += "  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: "
         "kubernetes.io/hostname, operator: In, values: [" +
         node + "]}]}]}}\n";
  }
  if (!claim.empty()) s += "  claimRef: {namespace: default, name: " + claim + "}\n";
  return s + "status: {phase: Available}\n---\n";
}

std::string Claim(const std::string& name, const std::string& size,
                  const std::string& cls = "local", const std::string& extra = "") {
  return "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + name +
         ", namespace: default" + extra +
         "}\nspec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: " + cls +
         "\n  resources: {requests: {storage: " + size + "}}\n---\n";
}

// A one-GPU pod in its own PodGroup; `volumes` and `ports` are YAML flow sequences.
std::string Pod(const std::string& name, const std::string& volumes,
                const std::string& ports = "[]", const std::string& node = "") {
  std::string s =
      "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: " + name +
      ", namespace: default}\nspec: {queue: q, minMember: 1}\n---\n";
  s += "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
       "\n  namespace: default\n  annotations: {pod-group-name: " + name +
       "}\nspec:\n  schedulerName: kai-scheduler\n  volumes: " + volumes + "\n";
  if (!node.empty()) s += "  nodeName: " + node + "\n";
  s += "  containers: [{name: c, ports: " + ports +
       ", resources: {limits: {nvidia.com/gpu: '1'}}}]\n";
  return s + (node.empty() ? "---\n" : "status: {phase: Running}\n---\n");
}

std::string Uses(const std::string& claim) {
  return "[{name: v, persistentVolumeClaim: {claimName: " + claim + "}}]";
}

struct Outcome {
  std::map<std::string, std::string> where;
  std::map<std::string, std::string> why;
};

Outcome Allocate(const std::string& yaml) {
  const sim::CycleReport report =
      testutil::AllocateOnce(std::string(testutil::kUnlimitedQueue) + yaml);
  Outcome out;
  for (const auto& p : report.pods) {
    out.where[p.name] = p.status + (p.node.empty() ? "" : " " + p.node);
    out.why[p.name] = JoinReasons(p.reasons);
  }
  return out;
}

TEST(Volumes, FreeLocalVolumeDecidesTheNode) {
  const Outcome o = Allocate(Node("n0") + Node("n1") + kLocal + Volume("pv1", "10Gi", "n1") +
                             Claim("data", "5Gi") + Pod("p", Uses("data")));
  EXPECT_EQ(o.where.at("p"), "Binding n1");
}

TEST(Volumes, SmallestSatisfyingVolumeIsTakenAndOthersStayFree) {
  // pv-big and pv-small both satisfy "a": the smallest is its volume, so "b", which only pv-big
  // satisfies, still finds it.
  const Outcome o = Allocate(Node("n0") + kLocal + Volume("pv-big", "100Gi", "n0") +
                             Volume("pv-small", "10Gi", "n0") + Claim("a", "5Gi") +
                             Claim("b", "50Gi") + Pod("pa", Uses("a")) + Pod("pb", Uses("b")));
  EXPECT_EQ(o.where.at("pa"), "Binding n0");
  EXPECT_EQ(o.where.at("pb"), "Binding n0");
}

TEST(Volumes, LocalAndZonalVolumesAreCandidatesTogetherSmallestFirst) {
  // pv-local is found by the node's hostname, pv-zonal by a zone affinity: "a" takes the
  // smaller of the two (pv-zonal), leaving pv-local to "b".
  const std::string zonal =
      "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-zonal}\nspec:\n  capacity: "
      "{storage: 20Gi}\n  accessModes: [ReadWriteOnce]\n  storageClassName: local\n  "
      "nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: "
      "In, values: [a]}]}]}}\nstatus: {phase: Available}\n---\n";
  const Outcome o =
      Allocate(Node("n0") + kLocal + Volume("pv-local", "50Gi", "n0") + zonal + Claim("a", "10Gi") +
               Claim("b", "30Gi") + Pod("pa", Uses("a")) + Pod("pb", Uses("b")));
  EXPECT_EQ(o.where.at("pa"), "Binding n0");
  EXPECT_EQ(o.where.at("pb"), "Binding n0");
}

TEST(Volumes, PreBoundVolumeWinsOverASmallerOne) {
  // "data" takes the volume pre-bound to it, not the smaller free one, which "other" then gets.
  const Outcome o =
      Allocate(Node("n0") + kLocal + Volume("pv-small", "10Gi", "n0") +
               Volume("pv-mine", "100Gi", "n0", "data") + Claim("data", "5Gi") +
               Claim("other", "5Gi") + Pod("p", Uses("data")) + Pod("q", Uses("other")));
  EXPECT_EQ(o.where.at("p"), "Binding n0");
  EXPECT_EQ(o.where.at("q"), "Binding n0");
}

TEST(Volumes, VolumeModeAndSizeMustMatch) {
  const Outcome o =
      Allocate(Node("n0") + kLocal + Volume("pv-block", "100Gi", "n0", "", "Block") +
               Volume("pv-tiny", "1Gi", "n0") + Claim("data", "5Gi") + Pod("p", Uses("data")));
  EXPECT_EQ(o.where.at("p"), "Pending");
  EXPECT_EQ(o.why.at("p"),
            "no free persistentvolume of storageclass \"local\" for persistentvolumeclaim \"data\" "
            "on 1 node");
}

TEST(Volumes, BoundClaimFollowsItsVolumeAndNamesItOnConflict) {
  const std::string bound =
      "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: default}\n"
      "spec: {storageClassName: local, volumeName: pv0, accessModes: [ReadWriteOnce], resources: "
      "{requests: {storage: 1Gi}}}\nstatus: {phase: Bound}\n---\n";
  const Outcome ok = Allocate(Node("n0") + Node("n1") + kLocal +
                              Volume("pv0", "10Gi", "n1", "data") + bound + Pod("p", Uses("data")));
  EXPECT_EQ(ok.where.at("p"), "Binding n1");
  const Outcome no = Allocate(Node("n0") + kLocal + Volume("pv0", "10Gi", "n1", "data") + bound +
                              Pod("p", Uses("data")));
  EXPECT_EQ(no.why.at("p"),
            "volume node affinity conflict (persistentvolumeclaim \"data\", persistentvolume "
            "\"pv0\") on 1 node");
}

TEST(Volumes, ClaimSharedByTwoPodsUsesOneVolume) {
  // Both pods mount "data": the volume chosen for the first is the second's too.
  const Outcome o =
      Allocate(Node("n0") + Node("n1") + kLocal + Volume("pv1", "10Gi", "n1") +
               Claim("data", "5Gi") + Pod("p1", Uses("data")) + Pod("p2", Uses("data")));
  EXPECT_EQ(o.where.at("p1"), "Binding n1");
  EXPECT_EQ(o.where.at("p2"), "Binding n1");
}

TEST(Volumes, SelectedNodePinsAClaimBeingProvisioned) {
  const Outcome o = Allocate(
      Node("n0") + Node("n1") + Class("fast", "csi.example.com", true) +
      Claim("data", "5Gi", "fast", ", annotations: {volume.kubernetes.io/selected-node: n1}") +
      Pod("p", Uses("data")));
  EXPECT_EQ(o.where.at("p"), "Binding n1");
}

TEST(Volumes, ProvisioningClassHonoursAllowedTopologies) {
  const std::string zonal =
      "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: zonal}\n"
      "provisioner: csi.example.com\nvolumeBindingMode: WaitForFirstConsumer\n"
      "allowedTopologies: [{matchLabelExpressions: [{key: zone, values: [c]}]}]\n---\n";
  const Outcome o = Allocate(Node("n0", "a") + Node("n1", "b") + zonal +
                             Claim("data", "5Gi", "zonal") + Pod("p", Uses("data")));
  EXPECT_EQ(o.where.at("p"), "Pending");
  EXPECT_EQ(o.why.at("p"),
            "storageclass \"zonal\" does not provision on the node (allowedTopologies) for "
            "persistentvolumeclaim \"data\" on 2 nodes");
}

TEST(Volumes, DefaultClassAppliesToAClaimWithoutOne) {
  // The claim names no class: the default class (WaitForFirstConsumer, provisioning) is its.
  const std::string claim =
      "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: default}\n"
      "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n---\n";
  const Outcome o =
      Allocate(Node("n0") +
               Class("fast", "csi.example.com", true,
                     ", annotations: {storageclass.kubernetes.io/is-default-class: \"true\"}") +
               claim + Pod("p", Uses("data")));
  EXPECT_EQ(o.where.at("p"), "Binding n0");
}

TEST(Volumes, UnboundImmediateAndMissingClaimsWait) {
  const Outcome o =
      Allocate(Node("n0") + Class("std", "csi.example.com", false) + Claim("imm", "1Gi", "std") +
               Pod("p1", Uses("imm")) + Pod("p2", Uses("nope")));
  EXPECT_EQ(o.where.at("p1"), "Pending");
  EXPECT_EQ(o.why.at("p1"),
            "unbound immediate persistentvolumeclaim \"imm\" (the volume controller binds it "
            "before the pod can be placed) on 1 node");
  EXPECT_EQ(o.why.at("p2"), "persistentvolumeclaim \"nope\" not found on 1 node");
}

TEST(Volumes, HostPortsConflictOnlyOnSamePortProtocolAndAddress) {
  const std::string tcp = "[{containerPort: 80, hostPort: 8080}]";
  const std::string udp = "[{containerPort: 80, hostPort: 8080, protocol: UDP}]";
  const std::string other_ip = "[{containerPort: 80, hostPort: 8080, hostIP: 10.0.0.2}]";
  const std::string held_ip = "[{containerPort: 80, hostPort: 9090, hostIP: 10.0.0.1}]";
  const std::string ip2 = "[{containerPort: 80, hostPort: 9090, hostIP: 10.0.0.2}]";
  const Outcome o =
      Allocate(Node("n0") + Pod("run", "[]", tcp, "n0") + Pod("ip", "[]", held_ip, "n0") +
               Pod("same", "[]", tcp) + Pod("udp", "[]", udp) + Pod("any-ip", "[]", other_ip) +
               Pod("ip2", "[]", ip2));
  EXPECT_EQ(o.where.at("same"), "Pending");
  EXPECT_EQ(o.why.at("same"), "host port 8080/TCP in use on 1 node");
  EXPECT_EQ(o.where.at("any-ip"), "Pending");  // the held port is on every address
  EXPECT_EQ(o.where.at("udp"), "Binding n0");
  EXPECT_EQ(o.where.at("ip2"), "Binding n0");  // 9090 on another address
}

TEST(Volumes, CsiAttachLimitCountsDistinctVolumes) {
  const std::string csinode =
      "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n0}\n"
      "spec: {drivers: [{name: ebs, nodeID: i0, allocatable: {count: 1}}]}\n---\n";
  auto bound = [](const std::string& n) {
    return "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-" + n +
           "}\nspec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], storageClassName: "
           "gp3, csi: {driver: ebs, volumeHandle: h-" +
           n + "}, claimRef: {namespace: default, name: " + n +
           "}}\nstatus: {phase: Bound}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\n"
           "metadata: {name: " +
           n + ", namespace: default}\nspec: {storageClassName: gp3, volumeName: pv-" + n +
           ", accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n"
           "status: {phase: Bound}\n---\n";
  };
  const Outcome o = Allocate(Node("n0") + Class("gp3", "ebs", false) + csinode + bound("c1") +
                             bound("c2") + Pod("holder", Uses("c1"), "[]", "n0") +
                             Pod("second", Uses("c2")) + Pod("shares", Uses("c1")));
  EXPECT_EQ(o.where.at("second"), "Pending");
  EXPECT_EQ(o.why.at("second"),
            "volume attach limit reached on 1 node (CSI driver ebs attaches at most 1 volumes per "
            "node)");
  EXPECT_EQ(o.where.at("shares"), "Binding n0");
}

TEST(Volumes, MalformedStorageObjectsNameTheField) {
  auto error = [](const std::string& yaml) {
    ClusterState state;
    const Status s = DecodeManifestText(yaml, "w.yaml", state);
    return s.ok() ? std::string() : s.error().message;
  };
  EXPECT_NE(error(Claim("c", "-1Gi")).find("spec.resources.requests.storage: negative quantity"),
            std::string::npos);
  EXPECT_NE(error(Class("s", "x", true) + "---\n" +
                  "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: t}\n"
                  "provisioner: x\nvolumeBindingMode: Later\n")
                .find("StorageClass t: volumeBindingMode: must be Immediate or "
                      "WaitForFirstConsumer"),
            std::string::npos);
  EXPECT_NE(error("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}\nspec: "
                  "{accessModes: [ReadWriteSometimes]}\n")
                .find("spec.accessModes[0]: unknown access mode \"ReadWriteSometimes\""),
            std::string::npos);
  EXPECT_NE(error(Pod("p", "[]", "[{containerPort: 1, hostPort: 70000}]"))
                .find("spec.containers[0].ports[0].hostPort: must be in 1..65535"),
            std::string::npos);
  EXPECT_NE(error("apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n}\nspec: "
                  "{drivers: [{name: d, allocatable: {count: -2}}]}\n")
                .find("spec.drivers[0].allocatable.count: must not be negative"),
            std::string::npos);
}

}  // namespace
}  // namespace kai
