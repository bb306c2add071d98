// Actions whose behaviour is not built yet (issue 4). They are known names, so configurations
// that enable them load, and they take no decision.
#include "kai/actions/builtin.h"

namespace kai::actions {
namespace {

class NoDecisionAction : public Action {
 public:
  void Execute(Session&) override {}
};

}  // namespace

std::unique_ptr<Action> MakeConsolidation() { return std::make_unique<NoDecisionAction>(); }
std::unique_ptr<Action> MakeReclaim() { return std::make_unique<NoDecisionAction>(); }
std::unique_ptr<Action> MakePreempt() { return std::make_unique<NoDecisionAction>(); }
std::unique_ptr<Action> MakeStaleGangEviction() { return std::make_unique<NoDecisionAction>(); }

}  // namespace kai::actions
