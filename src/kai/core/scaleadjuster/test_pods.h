#pragma once
// Pods of the scale adjuster's unit tests, as KAI's test-utils builds them, read through
// ReadPodFacts from YAML (so the decoder's rules apply as in production).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kai/core/k8s/doc.h"
#include "kai/core/scaleadjuster/pod_facts.h"

namespace kai::scaleadjuster::testing {

inline PodFacts FromYaml(const std::string& yaml) {
  auto d = doc::ParseYaml(yaml);
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().message);
  auto f = ReadPodFacts(d->Roots().at(0), "test");
  EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.error().message);
  return f.ok() ? *f : PodFacts{};
}

inline const char* kUnschedulableStatus = R"(
status:
  phase: Pending
  conditions:
  - type: PodScheduled
    status: "False"
    reason: Unschedulable
)";

// An unschedulable pod of kai-scheduler with these annotations ("key: value" lines).
inline PodFacts Unschedulable(const std::string& ns, const std::string& name,
                              const std::vector<std::string>& annotations,
                              const std::string& status = kUnschedulableStatus) {
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
                  "\n  annotations: {}\n";
  if (!annotations.empty()) {
    y = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
        "\n  annotations:\n";
    for (const auto& a : annotations) y += "    " + a + "\n";
  }
  y += "spec:\n  schedulerName: kai-scheduler\n  containers:\n  - name: c\n    image: i\n";
  return FromYaml(y + status);
}

inline std::vector<std::string> WithDevices(std::vector<std::string> a, int devices) {
  if (devices > 1) a.push_back("gpu-fraction-num-devices: \"" + std::to_string(devices) + "\"");
  return a;
}

inline PodFacts FractionPod(const std::string& ns, const std::string& name,
                            const std::string& fraction, int devices) {
  return Unschedulable(ns, name, WithDevices({"gpu-fraction: \"" + fraction + "\""}, devices));
}

inline PodFacts MemoryPod(const std::string& ns, const std::string& name, const std::string& memory,
                          int devices) {
  return Unschedulable(ns, name, WithDevices({"gpu-memory: \"" + memory + "\""}, devices));
}

// A scaling pod standing for ns/name, asking `devices` GPUs (KAI's CreateScalingPod).
inline PodFacts ScalingPod(const std::string& ns, const std::string& name, int devices,
                           const std::string& phase = "Pending") {
  return FromYaml("apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + ns + "-" + name +
                  "\n  namespace: kai-scale-adjust\n  labels:\n    app: scaling-pod\n"
                  "    shared-gpu-pod-name: " +
                  name + "\n    shared-gpu-pod-namespace: " + ns +
                  "\nspec:\n  containers:\n  - name: scaling-pod\n    image: i\n    resources:\n"
                  "      requests: {nvidia.com/gpu: \"" +
                  std::to_string(devices) +
                  "\"}\n"
                  "      limits: {nvidia.com/gpu: \"" +
                  std::to_string(devices) +
                  "\"}\n"
                  "status:\n  phase: " +
                  phase +
                  "\n  conditions:\n  - type: PodScheduled\n"
                  "    status: \"False\"\n    reason: Unschedulable\n");
}

inline std::vector<const PodFacts*> Ptrs(const std::vector<PodFacts>& pods) {
  std::vector<const PodFacts*> out;
  for (const auto& p : pods) out.push_back(&p);
  return out;
}

}  // namespace kai::scaleadjuster::testing
