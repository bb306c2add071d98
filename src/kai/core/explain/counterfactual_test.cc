// kai explain's counterfactuals: every suggestion kind is applied to the input world and the
// cycle re-run with kai simulate's engine; the workload then runs.
#include "kai/core/explain/counterfactual.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kai/core/k8s/decode.h"
#include "kai/testing/allocate_once.h"

namespace kai {
namespace {

using testutil::kTestNow;  // 2025-01-01T12:00:00Z

// A world in YAML: PriorityClass train (preemptible), queues, nodes, PodGroups of GPU pods.
class World {
 public:
  World() {
    y_ = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: train}\n"
         "value: 50\n---\n";
  }
  // GPU quota and limit in GPUs (-1: none); `extra` adds spec fields (flow form, ", k: v").
  World& Queue(const std::string& name, const std::string& quota, const std::string& limit,
               const std::string& parent = "", const std::string& extra = "",
               const std::string& weight = "1") {
    y_ += "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: " + name + "}\nspec: {" +
          (parent.empty() ? "" : "parentQueue: " + parent + ", ") +
          "resources: {gpu: {quota: " + quota + ", limit: " + limit +
          ", overQuotaWeight: " + weight +
          "}, cpu: {quota: -1, limit: -1, overQuotaWeight: 1}, memory: "
          "{quota: -1, limit: -1, overQuotaWeight: 1}}" +
          extra + "}\n---\n";
    return *this;
  }
  World& Node(const std::string& name, int gpus, const std::string& labels = "",
              const std::string& taints = "") {
    y_ += "apiVersion: v1\nkind: Node\nmetadata: {name: " + name + ", labels: {" + labels +
          "}}\nspec: {taints: [" + taints +
          "]}\nstatus:\n  allocatable: {cpu: '64', memory: 256Gi, pods: '110', nvidia.com/gpu: '" +
          std::to_string(gpus) + "'}\n---\n";
    return *this;
  }
  struct JobSpec {
    std::string queue = "a";
    int pods = 1;
    int gpus = 1;
    std::vector<std::string> running;  // nodes of the first pods, which run
    std::string pod_spec;              // extra pod spec lines, indented two spaces
    std::string pg_spec;               // extra PodGroup spec fields (", k: v")
    std::string pg_annotations;        // PodGroup annotations (flow form)
  };
  World& Job(const std::string& name, const JobSpec& j) {
    y_ += "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: " + name +
          ", namespace: default, creationTimestamp: '2025-01-01T10:00:00Z', annotations: {" +
          j.pg_annotations + "}}\nspec: {queue: " + j.queue +
          ", priorityClassName: train, minMember: " + std::to_string(j.pods) + j.pg_spec +
          "}\n---\n";
    for (int i = 0; i < j.pods; ++i) AddPod(name, i, j);
    return *this;
  }
  const std::string& yaml() const { return y_; }

 private:
  void AddPod(const std::string& job, int i, const JobSpec& j) {
    const bool runs = static_cast<size_t>(i) < j.running.size();
    const std::string gpus = std::to_string(j.gpus);
    y_ += "apiVersion: v1\nkind: Pod\nmetadata: {name: " + job + "-" + std::to_string(i) +
          ", namespace: default, creationTimestamp: '2025-01-01T10:00:00Z', annotations: "
          "{pod-group-name: " +
          job + "}}\nspec:\n  schedulerName: kai-scheduler\n" +
          (runs ? "  nodeName: " + j.running[i] + "\n" : "") + j.pod_spec +
          "  containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi, "
          "nvidia.com/gpu: '" +
          gpus + "'}, limits: {nvidia.com/gpu: '" + gpus + "'}}}]\n" +
          (runs ? "status: {phase: Running}\n" : "") + "---\n";
  }
  std::string y_;
};

ClusterState Decode(const std::string& yaml) {
  ClusterState state;
  const auto errors = ProblemsOf(DecodeManifestText(yaml, "world.yaml", state));
  EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors.front());
  return state;
}

SchedulerConfig DefaultConfig() { return ConfigFromShard(std::nullopt).value(); }

Explanation Explain(const ClusterState& world, const std::string& pod_group) {
  ExplainOptions o;
  o.simulate.now = kTestNow;
  auto e = ExplainWorkload(world, DefaultConfig(), ExplainTarget{true, "default", pod_group}, o);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
  return e.ok() ? std::move(e.value()) : Explanation{};
}

const Suggestion* Find(const Explanation& e, ChangeKind kind) {
  for (const Suggestion& s : e.suggestions) {
    if (s.change.kind == kind) return &s;
  }
  return nullptr;
}

std::string Kinds(const Explanation& e) {
  std::string out;
  for (const Suggestion& s : e.suggestions) out += s.description + "; ";
  for (const std::string& r : e.rejected) out += "rejected: " + r + "; ";
  return out;
}

bool Scheduled(const std::string& status) {
  return status == "Binding" || status == "Pipelined" || status == "Running" ||
         status == "Allocated" || status == "Bound";
}

// Applies the suggestion to the input world and runs one cycle of kai simulate: every pod of
// the PodGroup is then scheduled.
void ExpectRunsAfter(const ClusterState& input, const std::string& pod_group, const Suggestion& s) {
  ClusterState world = input;
  UnixSeconds now = kTestNow;
  ASSERT_TRUE(ApplyChange(s.change, world, now).ok());
  auto report = sim::RunCycle(world, DefaultConfig(), sim::SimulateOptions{.now = now}, 1);
  ASSERT_TRUE(report.ok());
  int pods = 0;
  for (const auto& p : report->pods) {
    if (p.pod_group != pod_group) continue;
    ++pods;
    EXPECT_TRUE(Scheduled(p.status)) << p.name << " is " << p.status << " after " << s.description;
  }
  EXPECT_GT(pods, 0);
}

// Before the change the cycle leaves the PodGroup pending.
void ExpectPending(const ClusterState& input, const std::string& pod_group) {
  ClusterState world = input;
  auto report = sim::RunCycle(world, DefaultConfig(), sim::SimulateOptions{.now = kTestNow}, 1);
  ASSERT_TRUE(report.ok());
  for (const auto& p : report->pods) {
    if (p.pod_group == pod_group) {
      EXPECT_EQ(p.status, "Pending") << p.name;
    }
  }
}

// Finds the suggestion of `kind`, checks it makes the job run when applied, and returns it.
Suggestion Verified(const ClusterState& world, const std::string& job, ChangeKind kind) {
  ExpectPending(world, job);
  const Explanation e = Explain(world, job);
  EXPECT_FALSE(e.outcome.runs);
  const Suggestion* s = Find(e, kind);
  EXPECT_NE(s, nullptr) << "no " << ChangeKindName(kind) << " among: " << Kinds(e);
  if (!s) return {};
  EXPECT_TRUE(s->after.runs);
  ExpectRunsAfter(world, job, *s);
  return *s;
}

TEST(ExplainCounterfactual, RaiseLimitByTheShortfall) {
  World w;
  w.Queue("a", "-1", "2").Node("n1", 8).Job("big", {.pods = 4});
  const ClusterState world = Decode(w.yaml());
  const Suggestion s = Verified(world, "big", ChangeKind::kRaiseLimit);
  EXPECT_EQ(s.change.queue, "a");
  EXPECT_EQ(s.change.resource, "nvidia.com/gpu");
  EXPECT_EQ(s.change.amount, 2000);
}

// Queue b holds the whole cluster, 2 GPUs above its quota; a (quota 0, no over-quota weight)
// has no fair share to reclaim with. With 2 GPUs of quota its fair share covers the job and
// reclaim takes b's 2 GPUs above quota.
TEST(ExplainCounterfactual, RaiseQuotaSoThatReclaimTakesRoom) {
  World w;
  w.Queue("a", "0", "-1", "", "", "0").Queue("b", "6", "-1").Node("n1", 8);
  for (int i = 0; i < 8; ++i) w.Job("b" + std::to_string(i), {.queue = "b", .running = {"n1"}});
  w.Job("want", {.queue = "a", .pods = 2});
  const ClusterState world = Decode(w.yaml());
  const Suggestion s = Verified(world, "want", ChangeKind::kRaiseQuota);
  EXPECT_EQ(s.change.queue, "a");
  EXPECT_EQ(s.change.amount, 2000);
}

// Fragmentation: four nodes with one GPU free each, a gang of two 2-GPU pods; the running
// one-GPU jobs are non-preemptible, so consolidation cannot move them.
TEST(ExplainCounterfactual, FreeGpusOnNamedNodes) {
  World w;
  w.Queue("a", "-1", "-1").Queue("b", "2", "-1");
  for (int i = 0; i < 4; ++i) {
    const std::string n = "n" + std::to_string(i);
    w.Node(n, 2).Job(
        "small" + std::to_string(i),
        {.queue = "b", .running = {n}, .pg_spec = ", preemptibility: non-preemptible"});
  }
  w.Job("gang", {.pods = 2, .gpus = 2});
  const ClusterState world = Decode(w.yaml());
  const Suggestion s = Verified(world, "gang", ChangeKind::kFreeGpus);
  EXPECT_EQ(s.change.amount, 2000);
  ASSERT_EQ(s.change.freed.size(), 2u);
  EXPECT_EQ(s.change.nodes.size(), 2u);
  EXPECT_TRUE(s.change.freed[0].over_quota);  // queue b holds 4 GPUs, quota 2
  EXPECT_EQ(s.change.freed[0].queue, "b");
}

constexpr const char* kZoneRack =
    "apiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {name: dc}\nspec:\n  levels:\n"
    "  - {nodeLabel: zone}\n  - {nodeLabel: rack}\n---\n";

TEST(ExplainCounterfactual, RelaxTopologyFromRackToZone) {
  World w;
  w.Queue("a", "-1", "-1")
      .Node("a1", 2, "zone: z1, rack: r1")
      .Node("b1", 2, "zone: z1, rack: r2")
      .Job("ring",
           {.pods = 4,
            .pg_spec = ", topologyConstraint: {topology: dc, requiredTopologyLevel: rack}"});
  const ClusterState world = Decode(std::string(kZoneRack) + w.yaml());
  const Suggestion s = Verified(world, "ring", ChangeKind::kRelaxTopology);
  EXPECT_EQ(s.change.from_level, "rack");
  EXPECT_EQ(s.change.to_level, "zone");
}

TEST(ExplainCounterfactual, RemoveTheNodeSelectorNoNodeMatches) {
  World w;
  w.Queue("a", "-1", "-1")
      .Node("n1", 8, "gpu-type: h100")
      .Job("sel", {.pods = 2, .pod_spec = "  nodeSelector: {gpu-type: a100}\n"});
  const Suggestion s = Verified(Decode(w.yaml()), "sel", ChangeKind::kRemoveNodeSelector);
  EXPECT_EQ(s.change.key, "gpu-type");
}

TEST(ExplainCounterfactual, RemoveTheRequiredNodeAffinity) {
  World w;
  w.Queue("a", "-1", "-1")
      .Node("n1", 8, "zone: east")
      .Job("aff", {.pods = 2,
                   .pod_spec = "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuring"
                               "Execution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, "
                               "operator: In, values: [west]}]}]}}}\n"});
  Verified(Decode(w.yaml()), "aff", ChangeKind::kRemoveNodeAffinity);
}

TEST(ExplainCounterfactual, TolerateTheTaintOfTheFreeNodes) {
  World w;
  w.Queue("a", "-1", "-1")
      .Node("n1", 8, "", "{key: dedicated, value: infer, effect: NoSchedule}")
      .Job("tol", {.pods = 2});
  const Suggestion s = Verified(Decode(w.yaml()), "tol", ChangeKind::kTolerateTaints);
  ASSERT_EQ(s.change.taints.size(), 1u);
  EXPECT_EQ(s.change.taints[0].key, "dedicated");
}

// The victim started at 11:45 and its queue protects it from reclaim for 30 minutes: waiting
// until 12:15 lets reclaim take its GPUs for the owner's job.
TEST(ExplainCounterfactual, WaitForTheVictimsMinRuntime) {
  World w;
  w.Queue("dept", "-1", "-1")
      .Queue("owner", "2", "-1", "dept")
      .Queue("borrower", "0", "-1", "dept", ", reclaimMinRuntime: 30m")
      .Node("n0", 2)
      .Job("victim", {.queue = "borrower",
                      .pods = 2,
                      .running = {"n0", "n0"},
                      .pg_annotations = "kai.scheduler/last-start-timestamp: "
                                        "'2025-01-01T11:45:00Z'"})
      .Job("reclaimer", {.queue = "owner", .pods = 2});
  const Suggestion s = Verified(Decode(w.yaml()), "reclaimer", ChangeKind::kWait);
  EXPECT_EQ(FormatRfc3339(s.change.at), "2025-01-01T12:15:00Z");
  EXPECT_NE(s.change.waiting_for.find("default/victim"), std::string::npos);
}

TEST(ExplainCounterfactual, SmallestChangeFirst) {
  // The gang fits on the tainted node, or on n2 once its running job stops: the toleration (an
  // edit of the workload itself) ranks before disrupting another workload.
  World w;
  w.Queue("a", "-1", "-1")
      .Queue("b", "-1", "-1")
      .Node("n1", 8, "", "{key: dedicated, value: infer, effect: NoSchedule}")
      .Node("n2", 2)
      .Job("other",
           {.queue = "b", .running = {"n2"}, .pg_spec = ", preemptibility: non-preemptible"})
      .Job("both", {.pods = 2});
  const Explanation e = Explain(Decode(w.yaml()), "both");
  ASSERT_EQ(e.suggestions.size(), 2u) << Kinds(e);
  EXPECT_EQ(e.suggestions[0].change.kind, ChangeKind::kTolerateTaints);
  EXPECT_EQ(e.suggestions[1].change.kind, ChangeKind::kFreeGpus);
}

// Reclaim evicts the borrower's job for the owner's: the rule, the beneficiary, and what would
// have kept it running, each verified (applied, the cycle re-run: it is not evicted).
TEST(ExplainCounterfactual, EvictedWorkloadAndWhatWouldHaveProtectedIt) {
  World w;
  w.Queue("dept", "-1", "-1")
      .Queue("owner", "2", "-1", "dept")
      .Queue("borrower", "0", "-1", "dept")
      .Node("n0", 2)
      .Job("victim", {.queue = "borrower",
                      .pods = 2,
                      .running = {"n0", "n0"},
                      .pg_annotations = "kai.scheduler/last-start-timestamp: "
                                        "'2025-01-01T11:45:00Z'"})
      .Job("reclaimer", {.queue = "owner", .pods = 2});
  const ClusterState world = Decode(w.yaml());
  const Explanation e = Explain(world, "victim");
  ASSERT_TRUE(e.outcome.evicted);
  EXPECT_EQ(e.outcome.eviction.action, "reclaim");
  EXPECT_EQ(e.outcome.beneficiary, "default/reclaimer");
  EXPECT_FALSE(e.outcome.eviction.rule_text().empty());
  const Suggestion* np = Find(e, ChangeKind::kNonPreemptible);
  ASSERT_NE(np, nullptr) << Kinds(e);
  const Suggestion* mr = Find(e, ChangeKind::kMinRuntime);
  ASSERT_NE(mr, nullptr) << Kinds(e);
  EXPECT_EQ(mr->change.amount, 15 * 60 + 1);
  for (const Suggestion* s : {np, mr}) {
    EXPECT_FALSE(s->after.evicted) << s->description;
    ClusterState changed = world;
    UnixSeconds now = kTestNow;
    ASSERT_TRUE(ApplyChange(s->change, changed, now).ok());
    auto report = sim::RunCycle(changed, DefaultConfig(), sim::SimulateOptions{.now = now}, 1);
    ASSERT_TRUE(report.ok());
    for (const auto& p : report->pods) {
      if (p.pod_group == "victim") {
        EXPECT_EQ(p.status, "Running") << s->description;
      }
    }
  }
}

TEST(ExplainCounterfactual, PodTargetEditsItsPodGroup) {
  World w;
  w.Queue("a", "-1", "-1")
      .Node("n1", 8, "gpu-type: h100")
      .Job("sel", {.pods = 2, .pod_spec = "  nodeSelector: {gpu-type: a100}\n"});
  ExplainOptions o;
  o.simulate.now = kTestNow;
  auto e = ExplainWorkload(Decode(w.yaml()), DefaultConfig(),
                           ExplainTarget{false, "default", "sel-1"}, o);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->pod_group, "default/sel");
  EXPECT_EQ(e->outcome.required, 1);
  const Suggestion* s = Find(*e, ChangeKind::kRemoveNodeSelector);
  ASSERT_NE(s, nullptr) << Kinds(*e);
  EXPECT_EQ(s->change.workload.Name(), "default/sel");
}

TEST(ExplainCounterfactual, PodWithoutPodGroupSaysSo) {
  World w;
  w.Queue("a", "-1", "-1").Node("n1", 8);
  const std::string yaml =
      w.yaml() +
      "apiVersion: v1\nkind: Pod\nmetadata: {name: lone, namespace: default}\nspec:\n"
      "  schedulerName: kai-scheduler\n  containers: [{name: c, resources: {requests: "
      "{nvidia.com/gpu: '1'}, limits: {nvidia.com/gpu: '1'}}}]\n";
  ExplainOptions o;
  o.simulate.now = kTestNow;
  auto e =
      ExplainWorkload(Decode(yaml), DefaultConfig(), ExplainTarget{false, "default", "lone"}, o);
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_EQ(e->outcome.reasons.size(), 1u);
  EXPECT_NE(e->outcome.reasons[0].Message().find("not part of a PodGroup"), std::string::npos)
      << e->outcome.reasons[0].Message();
  EXPECT_TRUE(e->suggestions.empty());
}

TEST(ExplainCounterfactual, UnknownTargetIsAnError) {
  World w;
  w.Queue("a", "-1", "-1").Node("n1", 8);
  ExplainOptions o;
  o.simulate.now = kTestNow;
  auto e = ExplainWorkload(Decode(w.yaml()), DefaultConfig(),
                           ExplainTarget{true, "default", "ghost"}, o);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("podgroup default/ghost"), std::string::npos);
}

TEST(ExplainCounterfactual, ScheduledWorkloadNeedsNothing) {
  World w;
  w.Queue("a", "-1", "-1").Node("n1", 8).Job("fits", {.pods = 2});
  const Explanation e = Explain(Decode(w.yaml()), "fits");
  EXPECT_TRUE(e.outcome.runs);
  EXPECT_TRUE(e.suggestions.empty());
  EXPECT_EQ(e.cycles, 1);
}

}  // namespace
}  // namespace kai
