#include "kai/core/framework/eviction.h"

#include <gtest/gtest.h>

namespace kai {
namespace {

// Two jobs: the preemptor team-a/big and the victim team-b/small (semi-preemptible, SubGroup
// "workers" with minMember 2), one pod of the victim.
struct World {
  Snapshot snap;
  World() {
    SnapJob big;
    big.ns = "team-a";
    big.name = "big";
    SnapJob small;
    small.ns = "team-b";
    small.name = "small";
    small.semi_preemptible = true;
    small.has_sub_groups = true;
    small.sub_groups.resize(2);
    small.sub_groups[1].name = "workers";
    small.sub_groups[1].min_member = 2;
    snap.jobs = {big, small};
    SnapPod pod;
    pod.job = 1;
    pod.sub_group = 1;
    snap.pods = {pod};
  }
};

std::shared_ptr<const std::string> Rule(const char* r) {
  return std::make_shared<const std::string>(r);
}

TEST(EvictionVerdict, EachKindRendersItsLine) {
  World w;
  EvictionVerdict v{EvictionKind::kEvicted, "reclaim", 0, Rule("queue below fair share"), false};
  EXPECT_EQ(DescribeEviction(v, w.snap, 0), "reclaim for team-a/big: queue below fair share");
  v.kind = EvictionKind::kMoved;
  EXPECT_EQ(DescribeEviction(v, w.snap, 0),
            "reclaim for team-a/big: moved to make room (queue below fair share)");
  v.kind = EvictionKind::kRestarted;
  EXPECT_EQ(DescribeEviction(v, w.snap, 0),
            "reclaim for team-a/big: moved back onto its node, restarted with its gang (queue "
            "below fair share)");
  EXPECT_EQ(DescribeEviction(EvictionVerdict{}, w.snap, 0), "");
  EXPECT_EQ(std::string(EvictionKindName(EvictionKind::kMoved)), "moved");
  EXPECT_EQ(std::string(EvictionKindName(EvictionKind::kNone)), "");
}

TEST(EvictionVerdict, TheSemiPreemptibleFloorIsNamedWithItsSubGroup) {
  World w;
  EvictionVerdict v{EvictionKind::kEvicted, "preempt", 0, Rule("higher priority"), true};
  EXPECT_EQ(DescribeEviction(v, w.snap, 0),
            "preempt for team-a/big: higher priority; evictable: above the semi-preemptible floor "
            "of SubGroup workers (minMember 2)");
}

TEST(EvictionVerdict, AStaleGangNamesItsGang) {
  World w;
  EvictionVerdict v{EvictionKind::kStaleGang, "stalegangeviction", kNone, nullptr, false};
  EXPECT_EQ(
      DescribeEviction(v, w.snap, 0),
      "stalegangeviction: gang small ran below its minMember past its staleness grace period");
  EXPECT_EQ(v.rule_text(), "");
}

}  // namespace
}  // namespace kai
