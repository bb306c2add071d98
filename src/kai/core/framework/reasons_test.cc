#include "kai/core/framework/reasons.h"

#include <gtest/gtest.h>

namespace kai {
namespace {

TEST(Reason, KindFollowsThePayload) {
  EXPECT_EQ(Reason(NodesReason{}).kind(), ReasonKind::kNodes);
  EXPECT_EQ(Reason(GangReason{}).kind(), ReasonKind::kGang);
  EXPECT_EQ(Reason(OverLimitReason{}).kind(), ReasonKind::kOverLimit);
  EXPECT_EQ(Reason(NonPreemptibleOverQuotaReason{}).kind(), ReasonKind::kNonPreemptibleOverQuota);
  EXPECT_EQ(Reason(QueueMissingReason{}).kind(), ReasonKind::kQueueMissing);
  EXPECT_EQ(Reason(NotReadyReason{}).kind(), ReasonKind::kNotReady);
  EXPECT_EQ(Reason(NoNodesReason{}).kind(), ReasonKind::kNoNodes);
  EXPECT_EQ(Reason(PreemptionDelayReason{}).kind(), ReasonKind::kPreemptionDelay);
  EXPECT_EQ(Reason(DisruptionReason{}).kind(), ReasonKind::kNoVictims);
  EXPECT_EQ(Reason(TopologyReason{}).kind(), ReasonKind::kTopology);
}

TEST(Reason, BothQueueCapsShareOnePayloadShape) {
  const Reason limit = OverLimitReason{{.queue = "a", .resource = "nvidia.com/gpu"}};
  const Reason quota = NonPreemptibleOverQuotaReason{{.queue = "b", .resource = "cpu"}};
  ASSERT_NE(limit.QueueCap(), nullptr);
  ASSERT_NE(quota.QueueCap(), nullptr);
  EXPECT_EQ(limit.QueueCap()->queue, "a");
  EXPECT_EQ(quota.QueueCap()->resource, "cpu");
  EXPECT_EQ(Reason(GangReason{}).QueueCap(), nullptr);
  EXPECT_EQ(limit.As<NonPreemptibleOverQuotaReason>(), nullptr);
}

TEST(Reason, CapMessagesRenderTheAmounts) {
  const Reason r = OverLimitReason{
      {.queue = "team", .resource = "nvidia.com/gpu", .requested = 2000, .available = 500}};
  EXPECT_EQ(r.Message(), "queue team over limit: nvidia.com/gpu 2 requested, limit leaves 0.5");
  const Reason floor = NonPreemptibleOverQuotaReason{{.queue = "team",
                                                      .resource = "cpu",
                                                      .requested = 3000,
                                                      .available = 1000,
                                                      .subject = "protected pods"}};
  EXPECT_EQ(floor.Message(),
            "protected pods over quota of queue team: cpu 3 requested, quota leaves 1");
}

TEST(Reason, DisruptionOutcomesRenderFromTheirFields) {
  DisruptionReason d{.action = "reclaim",
                     .outcome = DisruptionOutcome::kNotEligible,
                     .rule = "the job would take its queue above its fair share"};
  EXPECT_EQ(Reason(d).Message(),
            "reclaim not attempted: the job would take its queue above its fair share");
  d.outcome = DisruptionOutcome::kNoCandidates;
  d.rule = "same queue, strictly lower priority";
  d.action = "preempt";
  EXPECT_EQ(Reason(d).Message(),
            "preempt: no workload qualifies as a victim (same queue, strictly lower priority)");
  d = DisruptionReason{.action = "reclaim",
                       .outcome = DisruptionOutcome::kGaveUp,
                       .candidate_jobs = 3,
                       .candidate_milli_gpu = 2500,
                       .scenarios_tried = 7,
                       .scenarios_pruned = 2,
                       .search_work = 120,
                       .bound = "spec.args.max-search-work-per-job=100"};
  EXPECT_EQ(Reason(d).Message(),
            "reclaim gave up: 3 candidate victim jobs hold 2.5 GPUs; 7 scenarios simulated, 2 "
            "pruned (120 work units), the limit (spec.args.max-search-work-per-job=100) reached "
            "before any fit");
  EXPECT_EQ(Reason(d).KindName(), "SearchBudgetExhausted");
  d.outcome = DisruptionOutcome::kNoFit;
  EXPECT_EQ(Reason(d).Message(),
            "reclaim impossible: 3 candidate victim jobs hold 2.5 GPUs; 7 scenarios simulated, 2 "
            "pruned, none fit the job");
  EXPECT_EQ(Reason(d).KindName(), "NoVictims");
}

TEST(Reason, VerdictsGroupIntoNodesReasonsLargestFirst) {
  std::vector<NodeVerdict> verdicts(3);
  verdicts[0].code = FitCode::kTaintNotTolerated;
  verdicts[0].detail = "gpu=only:NoSchedule";
  verdicts[0].never = true;
  verdicts[1].code = FitCode::kInsufficientResources;
  verdicts[1].shortage = {.core = CoreResource::kGpu, .need = 4000, .have = 1000};
  verdicts[2] = verdicts[1];
  verdicts[2].shortage.have = 3000;
  const std::vector<Reason> reasons = SummariseVerdicts(verdicts);
  ASSERT_EQ(reasons.size(), 2u);
  const NodesReason* short_of = reasons[0].As<NodesReason>();
  ASSERT_NE(short_of, nullptr);
  EXPECT_EQ(short_of->nodes, 2);
  EXPECT_EQ(short_of->short_by, 1000);  // the smaller shortage
  EXPECT_EQ(short_of->never_nodes, 0);
  const NodesReason* taint = reasons[1].As<NodesReason>();
  ASSERT_NE(taint, nullptr);
  EXPECT_EQ(taint->never_nodes, 1);
  EXPECT_EQ(reasons[1].Message(), "untolerated taint gpu=only:NoSchedule on 1 node");
}

}  // namespace
}  // namespace kai
