#include "kai/core/whatif/job_objects.h"

#include "kai/core/k8s/decode.h"
#include "kai/core/resource/quantity.h"

namespace kai::whatif {
namespace {

// A YAML double-quoted scalar (trace names are plain, but a quote costs nothing).
std::string Q(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string TopologyYaml(const TraceJob& j) {
  if (j.topology.empty()) return "";
  std::string t = ", topologyConstraint: {topology: " + Q(j.topology);
  if (!j.required_level.empty()) t += ", requiredTopologyLevel: " + Q(j.required_level);
  if (!j.preferred_level.empty()) t += ", preferredTopologyLevel: " + Q(j.preferred_level);
  return t + "}";
}

std::string PodGroupYaml(const TraceJob& j, const std::string& created) {
  std::string y =
      "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: " + Q(j.name) +
      ", namespace: " + Q(j.ns) + ", uid: " + Q("whatif-" + j.ns + "-" + j.name) +
      ", creationTimestamp: " + Q(created) + "}\nspec: {queue: " + Q(j.queue) +
      ", minMember: " + std::to_string(j.min_member);
  if (!j.priority_class.empty()) y += ", priorityClassName: " + Q(j.priority_class);
  return y + TopologyYaml(j) + "}\n";
}

std::string ResourcesYaml(const TraceJob& j) {
  std::string limits, requests;
  const auto add = [](std::string& to, const std::string& k, const std::string& v) {
    to += (to.empty() ? "" : ", ") + k + ": " + Q(v);
  };
  if (j.gpu_milli >= 1000) add(limits, "nvidia.com/gpu", std::to_string(j.gpu_milli / 1000));
  if (!j.cpu.empty()) add(requests, "cpu", j.cpu);
  if (!j.memory.empty()) add(requests, "memory", j.memory);
  return "      limits: {" + limits + "}\n      requests: {" + requests + "}\n";
}

std::string PodYaml(const TraceJob& j, int i, const std::string& created) {
  std::string annotations = "pod-group-name: " + Q(j.name);
  if (j.gpu_milli > 0 && j.gpu_milli < 1000) {
    annotations += ", gpu-fraction: " + Q(FormatMilli(j.gpu_milli));
  }
  const std::string name = j.name + "-" + std::to_string(i);
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + Q(name) +
                  "\n  namespace: " + Q(j.ns) + "\n  uid: " + Q("whatif-" + j.ns + "-" + name) +
                  "\n  creationTimestamp: " + Q(created) +
                  "\n  labels: {kai.scheduler/queue: " + Q(j.queue) + "}\n  annotations: {" +
                  annotations + "}\nspec:\n  schedulerName: kai-scheduler\n";
  if (!j.priority_class.empty()) y += "  priorityClassName: " + Q(j.priority_class) + "\n";
  return y + "  containers:\n  - name: main\n    resources:\n" + ResourcesYaml(j) +
         "status: {phase: Pending}\n";
}

}  // namespace

std::string JobManifest(const TraceJob& j, UnixSeconds created) {
  const std::string t = FormatRfc3339(created);
  std::string y = PodGroupYaml(j, t);
  for (int i = 0; i < j.pods; ++i) y += "---\n" + PodYaml(j, i, t);
  return y;
}

Result<JobObjects> MakeJobObjects(const TraceJob& j, UnixSeconds created) {
  ClusterState s;
  const std::string where =
      j.line > 0 ? "trace line " + std::to_string(j.line) : "generated job " + j.ns + "/" + j.name;
  const Status decoded = DecodeManifestText(JobManifest(j, created), where, s);
  if (!decoded.ok()) return Error{ProblemsOf(decoded).front()};
  if (s.pod_groups.size() != 1) return Error{where + ": no PodGroup decoded"};
  return JobObjects{std::move(s.pod_groups.front()), std::move(s.pods)};
}

}  // namespace kai::whatif
