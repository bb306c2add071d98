// libFuzzer target for the manifest front end: YAML text -> ClusterState -> Snapshot.
//
// Any byte string must decode to either errors or a state, never crash, hang, leak or throw.
// A state that decodes cleanly is validated and turned into a snapshot; a snapshot is built even
// when validation fails, so the snapshot builder is exercised on dangling references (a pod on a
// missing node, a PodGroup in a missing queue, queue cycles) as well.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kai/core/k8s/decode.h"
#include "kai/core/snapshot/snapshot.h"

namespace {

// doc::ParseYaml bounds depth and alias expansion (doc::Limits), so size is no danger; yaml-cpp is
// slow on large inputs, though, and 64 KiB reaches every decoder path.
constexpr size_t kMaxInputBytes = 64 * 1024;

constexpr kai::UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z

void Require(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "invariant failed: %s\n", what);
  std::abort();
}

// Every error must carry the source name, so that a user can find it.
void CheckErrors(const kai::Status& decoded, const std::string& source) {
  if (decoded.ok()) return;
  Require(decoded.error().message.rfind(source + ": ", 0) == 0,
          "error message starts with the source");
}

void CheckSnapshot(const kai::ClusterState& state, const kai::Snapshot& snap) {
  Require(snap.nodes.size() == state.nodes.size(), "one SnapNode per node");
  Require(snap.pods.size() == state.pods.size(), "one SnapPod per pod");
  Require(snap.jobs.size() == state.pod_groups.size(), "one SnapJob per PodGroup");
  Require(snap.queues.size() == state.queues.size(), "one SnapQueue per queue");
  for (const kai::SnapPod& p : snap.pods) {
    Require(
        p.node == kai::kNone || (p.node >= 0 && static_cast<size_t>(p.node) < snap.nodes.size()),
        "pod node id in range");
    Require(p.job == kai::kNone || (p.job >= 0 && static_cast<size_t>(p.job) < snap.jobs.size()),
            "pod job id in range");
    (void)kai::PodStatusName(p.status);
  }
  for (const kai::SnapNode& n : snap.nodes) {
    for (kai::PodId id : n.pods) {
      Require(id >= 0 && static_cast<size_t>(id) < snap.pods.size(), "node pod id in range");
    }
  }
  for (const kai::SnapQueue& q : snap.queues) {
    Require(q.parent == kai::kNone || static_cast<size_t>(q.parent) < snap.queues.size(),
            "queue parent in range");
  }
  (void)snap.TotalCapacity();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > kMaxInputBytes) return -1;  // not added to the corpus
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string source = "fuzz.yaml";

  kai::ClusterState state;
  const kai::Status decoded = kai::DecodeManifestText(text, source, state);
  CheckErrors(decoded, source);
  if (!decoded.ok()) return 0;

  const kai::Status valid = kai::ValidateCluster(state);
  (void)valid;
  const kai::Snapshot snap = kai::BuildSnapshot(state, kNow);
  CheckSnapshot(state, snap);
  return 0;
}
