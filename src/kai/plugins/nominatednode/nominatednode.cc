// nominatednode: a pod with status.nominatedNodeName prefers that node.
#include "kai/framework/session.h"
#include "kai/plugins/builtin.h"
#include "kai/plugins/scores.h"

namespace kai::plugins {
namespace {

class NominatedNodePlugin : public Plugin {
 public:
  void OnSessionOpen(Session& s) override {
    s.AddNodeScore([](const Session& ss, PodId pod, NodeId node) {
      const std::string& nominated = ss.snap().pods[pod].obj->nominated_node;
      return !nominated.empty() && nominated == ss.snap().nodes[node].name ? scores::kNominatedNode
                                                                          : 0.0;
    });
  }
};

}  // namespace

std::unique_ptr<Plugin> MakeNominatedNode() { return std::make_unique<NominatedNodePlugin>(); }

}  // namespace kai::plugins
