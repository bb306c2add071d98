#include "kai/daemons/binder/group_index.h"

#include <gtest/gtest.h>

namespace kai::binder {
namespace {

IndexedPod Reservation(const std::string& node, const std::string& group) {
  return {node, {group}, true, false};
}

IndexedPod Holder(const std::string& node, std::vector<std::string> groups) {
  return {node, std::move(groups), false, true};
}

TEST(GroupIndex, CountsReservationsAndHoldersPerGroup) {
  GroupIndex ix;
  ix.Upsert("r", Reservation("n1", "g"));
  EXPECT_EQ(ix.Reservations("g"), 1);
  EXPECT_EQ(ix.Holders("g"), 0);
  ix.Upsert("a", Holder("n1", {"g"}));
  ix.Upsert("b", Holder("n1", {"g"}));
  EXPECT_EQ(ix.Holders("g"), 2);
  ix.Upsert("a", {"n1", {"g"}, false, false});  // finished: still labelled, holds nothing
  EXPECT_EQ(ix.Holders("g"), 1);
  ix.Erase("r");
  EXPECT_EQ(ix.Reservations("g"), 0);
  EXPECT_EQ(ix.Holders("g"), 1);
  EXPECT_EQ(ix.Reservations("other"), 0);
  EXPECT_EQ(ix.Ready("g"), 0);
  ix.Upsert("r", {"n1", {"g"}, true, false, true});  // annotated with its GPU
  EXPECT_EQ(ix.Ready("g"), 1);
  ix.Upsert("x", {"n1", {"g"}, false, true, true});  // only reservation pods count as ready
  EXPECT_EQ(ix.Ready("g"), 1);
  ix.Erase("r");
  EXPECT_EQ(ix.Ready("g"), 0);
}

TEST(GroupIndex, GroupsOnNodeFollowTheirPods) {
  GroupIndex ix;
  ix.Upsert("r1", Reservation("n1", "g1"));
  ix.Upsert("r2", Reservation("n1", "g2"));
  ix.Upsert("m", Holder("n1", {"g2", "g3"}));  // a multi-device pod
  ix.Upsert("x", Holder("n2", {"g9"}));
  EXPECT_EQ(ix.GroupsOnNode("n1"), (std::vector<std::string>{"g1", "g2", "g3"}));
  ix.Erase("m");
  EXPECT_EQ(ix.GroupsOnNode("n1"), (std::vector<std::string>{"g1", "g2"}));
  ix.Erase("r1");
  ix.Erase("r2");
  EXPECT_TRUE(ix.GroupsOnNode("n1").empty());
  ix.Erase("missing");  // no-op
  EXPECT_EQ(ix.size(), 1u);
  ASSERT_NE(ix.Find("x"), nullptr);
  EXPECT_EQ(ix.Find("x")->groups, (std::vector<std::string>{"g9"}));
}

TEST(GroupIndex, AnUnboundPodCountsForNoNode) {
  GroupIndex ix;
  ix.Upsert("p", {"", {"g"}, false, false});
  EXPECT_TRUE(ix.GroupsOnNode("").empty());
  ix.Upsert("p", Holder("n1", {"g"}));  // bound now
  EXPECT_EQ(ix.GroupsOnNode("n1"), (std::vector<std::string>{"g"}));
}

TEST(ParkedRequests, AnEventOfAGroupWakesItsRequestsOnce) {
  GroupIndex ix;
  ParkedRequests parked;
  EXPECT_TRUE(parked.Park("a", {"g1"}, ix));
  EXPECT_TRUE(parked.Park("b", {"g1", "g2"}, ix));  // a multi-device request
  EXPECT_TRUE(parked.Park("c", {"g3"}, ix));
  EXPECT_EQ(parked.groups(), 3u);
  EXPECT_EQ(parked.Take({"g1"}), (std::vector<std::string>{"a", "b"}));
  // b is no longer parked on g2 either: an event there wakes nobody.
  EXPECT_TRUE(parked.Take({"g2"}).empty());
  EXPECT_EQ(parked.requests(), 1u);
  EXPECT_EQ(parked.Take({"g3", "g9"}), (std::vector<std::string>{"c"}));
  EXPECT_EQ(parked.groups(), 0u);
}

TEST(ParkedRequests, ParkingAgainMovesTheRequest) {
  GroupIndex ix;
  ParkedRequests parked;
  EXPECT_TRUE(parked.Park("a", {"g1", "g2"}, ix));
  EXPECT_TRUE(parked.Park("a", {"g2"}, ix));  // g1 became ready meanwhile
  EXPECT_TRUE(parked.Take({"g1"}).empty());
  EXPECT_EQ(parked.Take({"g2"}), (std::vector<std::string>{"a"}));
}

TEST(ParkedRequests, AGpuIdAlreadySeenIsNotWaitedFor) {
  GroupIndex ix;
  ix.Upsert("r", {"n1", {"g"}, true, false, true});  // the watch saw the annotation already
  ParkedRequests parked;
  EXPECT_FALSE(parked.Park("a", {"g"}, ix));
  EXPECT_EQ(parked.requests(), 0u);
  EXPECT_TRUE(parked.Park("a", {"other"}, ix));
}

}  // namespace
}  // namespace kai::binder
