// nominatednode: a pod with status.nominatedNodeName prefers that node.
#include "kai/core/framework/session.h"
#include "kai/core/plugins/builtin.h"
#include "kai/core/plugins/scores.h"

namespace kai::plugins {
namespace {

NodeId Nominated(const Session& s, PodId pod) { return s.snap().pods[pod].nominated; }

class NominatedNodePlugin : public Plugin {
 public:
  void OnSessionOpen(Session& s) override {
    s.AddNodeScores(
        [](const Session& ss, PodId pod, std::span<double> out) {
          const NodeId n = Nominated(ss, pod);
          if (n != kNone) out[n] += scores::kNominatedNode;
        },
        [](const Session& ss, PodId pod, std::string& key) {
          const NodeId n = Nominated(ss, pod);
          key.append(reinterpret_cast<const char*>(&n), sizeof n);
          return true;
        });
  }
};

}  // namespace

std::unique_ptr<Plugin> MakeNominatedNode() { return std::make_unique<NominatedNodePlugin>(); }

}  // namespace kai::plugins
