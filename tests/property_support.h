#pragma once
// Shared settings of the property tests. CTest runs every TEST in its own process and CI also runs
// them under AddressSanitizer (about 10x slower), so a sweep scales its world count down there.

#if defined(__SANITIZE_ADDRESS__)
#define KAI_PROPERTY_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KAI_PROPERTY_UNDER_ASAN 1
#endif
#endif

#include <random>
#include <string>
#include <utility>

#include "kai/core/k8s/keys.h"
#include "kai/core/model/cluster.h"

namespace kai::testing {

inline int Uniform(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}
inline bool Chance(std::mt19937_64& rng, double p) { return std::bernoulli_distribution(p)(rng); }

// Metadata of an object a property test builds: uid = name, namespace "default" when namespaced,
// `source` naming the test.
inline ObjectMeta PropertyMeta(std::string kind, std::string name, bool namespaced,
                               std::string source) {
  ObjectMeta m;
  m.kind = std::move(kind);
  m.uid = name;
  m.name = std::move(name);
  if (namespaced) m.ns = "default";
  m.source = std::move(source);
  return m;
}

// A pod of a PodGroup a property test builds (`meta` names it): created with the group,
// labelled with its queue, scheduled by kai, asking `request`; Running on `node` when one is
// named, else Pending.
inline PodObject MemberPod(const PodGroupObject& pg, ObjectMeta meta, const Resources& request,
                           const std::string& node) {
  PodObject pod;
  pod.meta = std::move(meta);
  pod.meta.creation = pg.meta.creation;
  pod.meta.labels = {{std::string(keys::kQueueLabel), pg.queue}};
  pod.scheduler_name = std::string(keys::kSchedulerName);
  pod.request = request;
  pod.pod_group = pg.meta.name;
  if (!node.empty()) {
    pod.phase = "Running";
    pod.node_name = node;
  }
  return pod;
}

// The number of random worlds a sweep checks: `release` in a plain build, a tenth under ASan.
constexpr int SweepWorlds(int release) {
#ifdef KAI_PROPERTY_UNDER_ASAN
  return release / 10;
#else
  return release;
#endif
}

}  // namespace kai::testing
