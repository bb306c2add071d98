// gpupack / gpuspread order the GPUs of a node offered to a shared-GPU pod; gpusharingorder
// prefers nodes where the pod can join a GPU that is already shared (KAI's plugins of those
// names), so that whole GPUs stay free.
//   gpupack:  a shared GPU scores its used portion, a whole GPU 0 (fullest shared GPU first);
//   gpuspread: a shared GPU scores 1 - used portion, a whole GPU 1 (emptiest first);
//   gpusharingorder: scores::kGpuSharing when some live shared group has room for the pod.
#include "kai/core/framework/session.h"
#include "kai/core/plugins/builtin.h"
#include "kai/core/plugins/scores.h"
#include "kai/core/snapshot/fit.h"

namespace kai::plugins {
namespace {

double UsedPortion(const SnapNode& node, const GpuGroup& g) {
  if (node.gpu_memory_mib <= 0) return 0;
  return static_cast<double>(g.used) / static_cast<double>(node.gpu_memory_mib);
}

class GpuOrderPlugin : public Plugin {
 public:
  explicit GpuOrderPlugin(bool pack) : pack_(pack) {}
  void OnSessionOpen(Session& s) override {
    s.AddGpuOrder([pack = pack_](const Session&, PodId, const SnapNode& node, const GpuGroup* g) {
      if (g == nullptr) return pack ? 0.0 : 1.0;
      return pack ? UsedPortion(node, *g) : 1 - UsedPortion(node, *g);
    });
  }

 private:
  bool pack_;
};

class GpuSharingOrderPlugin : public Plugin {
 public:
  void OnSessionOpen(Session& s) override {
    s.AddNodeScores(
        [](const Session& ss, PodId pod, std::span<double> out) {
          // A whole-GPU pod asks a full device: no live group ever has that much free (its
          // releasing memory never exceeds its allocated memory), so it scores 0 everywhere.
          const SnapPod& p = ss.snap().pods[pod];
          if (!p.share.IsShared() && p.request.milli_gpu > 0) return;
          AddScoreWhere(ss.snap(), ss.ScoredNodes(), pod, out, scores::kGpuSharing,
                        CanJoinSharedGpu);
        },
        AlwaysCacheable);
  }
};

class PendingPlugin : public Plugin {
 public:
  void OnSessionOpen(Session&) override {}
};

}  // namespace

std::unique_ptr<Plugin> MakeGpuOrder(bool pack) { return std::make_unique<GpuOrderPlugin>(pack); }
std::unique_ptr<Plugin> MakeGpuSharingOrder() { return std::make_unique<GpuSharingOrderPlugin>(); }
std::unique_ptr<Plugin> MakePending() { return std::make_unique<PendingPlugin>(); }

}  // namespace kai::plugins
