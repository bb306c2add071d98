// nominatednode: a pod with status.nominatedNodeName prefers that node.
#include "kai/framework/session.h"
#include "kai/plugins/builtin.h"
#include "kai/plugins/scores.h"

namespace kai::plugins {
namespace {

class NominatedNodePlugin : public Plugin {
 public:
  void OnSessionOpen(Session& s) override {
    s.AddNodeScores([](const Session& ss, PodId pod, std::span<double> out) {
      const std::string& nominated = ss.snap().pods[pod].obj->nominated_node;
      if (nominated.empty()) return;
      auto it = ss.snap().node_by_name.find(nominated);
      if (it != ss.snap().node_by_name.end()) out[it->second] += scores::kNominatedNode;
    });
  }
};

}  // namespace

std::unique_ptr<Plugin> MakeNominatedNode() { return std::make_unique<NominatedNodePlugin>(); }

}  // namespace kai::plugins
