// subgrouporder: the order in which the members of a SubGroupSet are filled and (reversed)
// evicted (KAI pkg/scheduler/plugins/subgrouporder, §3.6). Members below their minimum come first
// (no order among them); of the satisfied ones, those with a minimum before optional ones (minimum
// 0); two optional ones by fewer satisfied members; two with minimums by the lower ratio of
// satisfied members to minimum, compared exactly as a cross product.
#include "kai/core/framework/session.h"
#include "kai/core/plugins/builtin.h"

namespace kai::plugins {

int CompareByAllocationRatio(int l_count, int l_min, int r_count, int r_min) {
  const bool l_satisfied = l_count >= l_min;
  const bool r_satisfied = r_count >= r_min;
  if (!l_satisfied || !r_satisfied) {
    if (l_satisfied == r_satisfied) return 0;
    return l_satisfied ? 1 : -1;
  }
  if ((l_min == 0) != (r_min == 0)) return l_min == 0 ? 1 : -1;
  if (l_min == 0) return l_count == r_count ? 0 : (l_count < r_count ? -1 : 1);
  // l_count / l_min < r_count / r_min, with positive minimums.
  const int64_t lhs = static_cast<int64_t>(l_count) * r_min;
  const int64_t rhs = static_cast<int64_t>(r_count) * l_min;
  return lhs == rhs ? 0 : (lhs < rhs ? -1 : 1);
}

namespace {

class SubGroupOrderPlugin : public Plugin {
 public:
  void OnSessionOpen(Session& s) override {
    s.AddSubGroupOrder(
        [](const Session&, JobId, const SubGroupStanding& a, const SubGroupStanding& b) {
          return CompareByAllocationRatio(a.satisfied, a.needed, b.satisfied, b.needed);
        });
  }
};

}  // namespace

std::unique_ptr<Plugin> MakeSubGroupOrder() { return std::make_unique<SubGroupOrderPlugin>(); }

}  // namespace kai::plugins
