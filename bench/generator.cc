#include "generator.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <variant>

#include "kai/core/k8s/keys.h"
#include "kai/core/k8s/typed_labels.h"
#include "kai/core/resource/quantity.h"

namespace kai::bench {
namespace {

int64_t Quantity(const std::string& text, int scale) {
  auto r = ParseQuantity(text, scale);
  if (r.ok()) return r.value();
  std::abort();  // a bad literal in a benchmark shape is a programming error
}

// Queue amounts: -1 stays -1 (unlimited); otherwise devices -> milli.
int64_t QueueMilli(double v) { return v < 0 ? -1 : std::llround(v * kMilliPerUnit); }
int64_t WeightMilli(double w) { return w < 0 ? -kMilliPerUnit : std::llround(w * kMilliPerUnit); }

ObjectMeta Meta(std::string kind, std::string name, bool namespaced) {
  ObjectMeta m;
  m.kind = std::move(kind);
  m.uid = name;
  m.name = std::move(name);
  if (namespaced) m.ns = "default";
  m.source = "generator";
  return m;
}

QueueObject MakeQueue(const QueueSpec& spec, UnixSeconds creation) {
  QueueObject q;
  q.meta = Meta("Queue", spec.name, false);
  q.meta.creation = creation;
  q.parent = spec.parent;
  q.has_resources = true;
  q.gpu = {QueueMilli(spec.gpu_quota), QueueMilli(spec.gpu_limit), WeightMilli(spec.gpu_weight)};
  q.cpu = {-1, -1, kMilliPerUnit};
  q.memory = {-1, -1, kMilliPerUnit};
  return q;
}

}  // namespace

std::vector<QueueSpec> QueuesUnderDefault(int leaves, double gpu_quota, double gpu_limit,
                                          double gpu_weight) {
  std::vector<QueueSpec> out;
  out.push_back(QueueSpec{"default", "", -1, -1, -1});
  for (int i = 0; i < leaves; ++i) {
    out.push_back(
        QueueSpec{"queue-" + std::to_string(i), "default", gpu_quota, gpu_limit, gpu_weight});
  }
  return out;
}

ClusterShape KaiAllocateShape(int nodes, int jobs) {
  ClusterShape s;
  s.nodes = nodes;
  s.gpus_per_node = 8;
  s.jobs = jobs;
  s.pods_per_job = 1;
  s.gpus_per_pod = 1;
  const double total = nodes * 8.0;
  s.queues = {
      {"dept-a", "", total / 2, -1, total / 2}, {"dept-b", "", total / 2, -1, total / 2},
      {"queue-0", "dept-a", total / 4, -1, 1},  {"queue-1", "dept-a", total / 4, -1, 1},
      {"queue-2", "dept-b", total / 4, -1, 1},  {"queue-3", "dept-b", total / 4, -1, 1},
  };
  return s;
}

namespace {

// `jobs` one-pod one-GPU train jobs over queue-0..3, run as `run` says.
ClusterShape KaiFourQueueShape(int nodes, int jobs, JobGroup::Run run) {
  ClusterShape s = KaiAllocateShape(nodes, jobs);
  JobGroup g;
  g.jobs = jobs;
  g.run = run;
  s.job_groups = {g};
  return s;
}

// The two queues of KAI's reclaim benchmarks, under the harness' implicit `default`.
ClusterShape KaiReclaimShape(int nodes, const std::string& running_queue, double running_deserved,
                             const std::string& pending_queue, double pending_deserved) {
  ClusterShape s;
  s.nodes = nodes;
  s.node_prefix = "node";
  s.gpus_per_node = 8;
  s.queues = {{"default", "", -1, -1, -1},
              {running_queue, "default", running_deserved, -1, 0},
              {pending_queue, "default", pending_deserved, -1, 0}};
  JobGroup running;
  running.prefix = "running-job-";
  running.jobs = nodes * 8;
  running.queues = {running_queue};
  running.run = JobGroup::Run::kAll;
  s.job_groups = {running};
  return s;
}

JobGroup PendingGang(const std::string& name, const std::string& queue, int pods, int gpus) {
  JobGroup g;
  g.name = name;
  g.jobs = 1;
  g.pods_per_job = pods;
  g.gpus_per_pod = gpus;
  g.queues = {queue};
  return g;
}

}  // namespace

ClusterShape KaiRunningShape(int nodes, int jobs) {
  return KaiFourQueueShape(nodes, jobs, JobGroup::Run::kAll);
}

ClusterShape KaiMixedShape(int nodes, int jobs) {
  return KaiFourQueueShape(nodes, jobs, JobGroup::Run::kEven);
}

ClusterShape KaiManyQueuesShape(int nodes, int jobs, int queues) {
  const int depts = std::max((queues + 3) / 4, 1);
  const double total = nodes * 8.0;
  ClusterShape s;
  s.nodes = nodes;
  s.jobs = jobs;
  for (int d = 0; d < depts; ++d) {
    s.queues.push_back({"dept-" + std::to_string(d), "", total / depts, -1, total / depts});
  }
  // Leaves listed queue-0..n-1: the round-robin puts job i in queue-(i % n).
  for (int i = 0; i < queues; ++i) {
    s.queues.push_back(
        {"queue-" + std::to_string(i), "dept-" + std::to_string(i % depts), total / queues, -1, 1});
  }
  return s;
}

ClusterShape KaiGangShape(int nodes, int jobs, int tasks) {
  ClusterShape s = KaiAllocateShape(nodes, jobs);
  s.pods_per_job = tasks;
  return s;
}

ClusterShape KaiReclaimLargeJobsShape(int nodes) {
  ClusterShape s = KaiReclaimShape(nodes, "queue-0", 0, "queue-1", nodes * 8.0);
  s.job_groups.push_back(PendingGang("very-large-job", "queue-1", nodes / 2, 8));
  return s;
}

ClusterShape KaiReclaimUnschedulableShape(int nodes) {
  ClusterShape s = KaiReclaimShape(nodes, "queue-0", nodes * 8.0 - 80 + 1, "queue-1", 80);
  s.job_groups.push_back(PendingGang("unschedulable-distributed-job", "queue-1", 10, 8));
  return s;
}

ClusterShape KaiReclaimManySingleGPUShape(int nodes) {
  const std::string running = "many-single-gpu-running-queue";
  const std::string pending = "many-single-gpu-pending-queue";
  ClusterShape s = KaiReclaimShape(nodes, running, 0, pending, nodes * 8.0);
  s.job_groups[0].prefix = "many-single-gpu-running-job-";
  JobGroup p;
  p.prefix = "many-single-gpu-pending-job-";
  p.jobs = nodes * 8;
  p.queues = {pending};
  s.job_groups.push_back(p);
  return s;
}

ClusterShape ExplainWorldShape(int per_node, bool preemptible, double team_quota,
                               bool with_limit_gang) {
  ClusterShape s;
  s.nodes = 1000;
  s.gpus_per_node = 8;
  const int running = per_node * s.nodes;
  s.queues = QueuesUnderDefault(4, running / 4, running / 4, 1);
  s.queues.push_back(QueueSpec{"team", "default", team_quota, -1, 1});
  const std::vector<std::string> shared = {"queue-0", "queue-1", "queue-2", "queue-3"};
  JobGroup run{.prefix = "run-", .jobs = running, .queues = shared, .run = JobGroup::Run::kAll};
  if (!preemptible) {
    run.priority_class = "build";
    run.priority = 100;
  }
  const int waiting = 10000 - running - 4 - (with_limit_gang ? 8 : 0);
  s.job_groups = {
      run,
      JobGroup{.prefix = "wait-", .jobs = waiting, .queues = shared},
      JobGroup{
          .name = "frag-gang", .jobs = 1, .pods_per_job = 4, .gpus_per_pod = 2, .queues = {"team"}},
  };
  if (with_limit_gang) {
    s.queues.push_back(QueueSpec{"capped", "default", -1, 4, 1});
    s.job_groups.push_back(
        JobGroup{.name = "limit-gang", .jobs = 1, .pods_per_job = 8, .queues = {"capped"}});
  }
  return s;
}

ClusterShape KaiTopologyShape(const std::string& preferred_level) {
  ClusterShape s;
  s.topology_levels = {{"kai.scheduler/zone", "zone", 4},
                       {"kai.scheduler/block", "block", 8},
                       {"kai.scheduler/rack", "rack", 8}};
  s.nodes_per_leaf = 2;
  s.nodes = 4 * 8 * 8 * 2;
  s.gpus_per_node = 8;
  s.node_cpu = s.node_cpu_capacity = "32";
  s.node_memory = s.node_memory_capacity = "256Gi";
  s.jobs = 1;
  s.pods_per_job = 512;
  s.gpus_per_pod = 2;
  s.pod_cpu = "0";
  s.pod_memory = "0";
  s.job_preferred_level = preferred_level;
  s.queues = QueuesUnderDefault(1, -1, -1, 1);
  return s;
}

namespace {

constexpr const char* kGeneratedTopology = "topology";

// Topology level labels of the node at `index` (the finest domains are filled in order).
void AddTopologyLabels(const ClusterShape& shape, int index, Labels& labels) {
  int leaf = index / std::max(shape.nodes_per_leaf, 1);
  std::vector<std::pair<std::string, std::string>> values;
  for (auto it = shape.topology_levels.rbegin(); it != shape.topology_levels.rend(); ++it) {
    values.emplace_back(it->label, it->short_name + std::to_string(leaf % it->count + 1));
    leaf /= it->count;
  }
  for (auto& [label, value] : values) labels[label] = value;
}

std::optional<TopologyConstraintSpec> JobTopologyConstraint(const ClusterShape& shape) {
  if (shape.topology_levels.empty()) return std::nullopt;
  if (shape.job_required_level.empty() && shape.job_preferred_level.empty()) return std::nullopt;
  return TopologyConstraintSpec{kGeneratedTopology, shape.job_required_level,
                                shape.job_preferred_level};
}

JobGroup LegacyJobGroup(const ClusterShape& shape) {
  JobGroup g;
  g.jobs = shape.jobs;
  g.pods_per_job = shape.pods_per_job;
  g.gpus_per_pod = shape.gpus_per_pod;
  g.priority_class = shape.priority_class;
  g.priority = shape.priority;
  return g;
}

void AddPriorityClasses(const std::vector<JobGroup>& groups, ClusterState& st) {
  for (const JobGroup& g : groups) {
    const bool known =
        std::any_of(st.priority_classes.begin(), st.priority_classes.end(),
                    [&](const auto& pc) { return pc.meta.name == g.priority_class; });
    if (known) continue;
    PriorityClassObject pc;
    pc.meta = Meta("PriorityClass", g.priority_class, false);
    pc.value = g.priority;
    st.priority_classes.push_back(std::move(pc));
  }
}

bool JobRuns(const JobGroup& g, int j) {
  return g.run == JobGroup::Run::kAll || (g.run == JobGroup::Run::kEven && j % 2 == 0);
}

// Job j of group g (pods appended to st.pods, running ones placed on their node).
void AddJob(const ClusterShape& shape, const JobGroup& g, int j, const std::string& queue,
            UnixSeconds created, ClusterState& st) {
  PodGroupObject pg;
  pg.meta = Meta("PodGroup", g.name.empty() ? g.prefix + std::to_string(j) : g.name, true);
  pg.meta.creation = created;
  pg.meta.labels = {{std::string(keys::kQueueLabel), queue}};
  pg.queue = queue;
  pg.priority_class_name = g.priority_class;
  pg.min_member = g.pods_per_job;
  pg.topology_constraint = JobTopologyConstraint(shape);
  const bool runs = JobRuns(g, j);
  if (runs) pg.last_start = shape.now - 60;  // the harness' last-start timestamp
  Resources req;
  req.milli_cpu = Quantity(shape.pod_cpu, 3);
  req.memory = Quantity(shape.pod_memory, 0);
  req.milli_gpu = int64_t{g.gpus_per_pod} * kMilliPerUnit;
  req.pods = 1;
  for (int p = 0; p < g.pods_per_job; ++p) {
    PodObject pod;
    pod.meta = Meta("Pod", pg.meta.name + "-" + std::to_string(p), true);
    pod.meta.creation = created;
    pod.meta.labels = {{std::string(keys::kQueueLabel), queue}, {"job-name", pod.meta.name}};
    pod.meta.annotations = {{std::string(keys::kPodGroupAnnotation), pg.meta.name}};
    pod.scheduler_name = std::string(keys::kSchedulerName);
    pod.request = req;
    pod.pod_group = pg.meta.name;
    if (runs) {
      pod.phase = "Running";
      pod.node_name = shape.node_prefix + std::to_string((j * g.pods_per_job + p) % shape.nodes);
    }
    st.pods.push_back(std::move(pod));
  }
  st.pod_groups.push_back(std::move(pg));
}

}  // namespace

ClusterState Generate(const ClusterShape& shape) {
  ClusterState st;

  Resources node_alloc;
  node_alloc.milli_cpu = Quantity(shape.node_cpu, 3);
  node_alloc.memory = Quantity(shape.node_memory, 0);
  node_alloc.milli_gpu = int64_t{shape.gpus_per_node} * kMilliPerUnit;
  node_alloc.pods = shape.node_pods;
  Resources node_cap = node_alloc;
  node_cap.milli_cpu = Quantity(shape.node_cpu_capacity, 3);
  node_cap.memory = Quantity(shape.node_memory_capacity, 0);
  if (!shape.topology_levels.empty()) {
    TopologyObject t;
    t.meta = Meta("Topology", kGeneratedTopology, false);
    for (const TopologyLevelShape& l : shape.topology_levels) t.levels.push_back({l.label, ""});
    st.topologies.push_back(std::move(t));
  }
  st.nodes.reserve(shape.nodes);
  for (int i = 0; i < shape.nodes; ++i) {
    NodeObject n;
    n.meta = Meta("Node", shape.node_prefix + std::to_string(i), false);
    n.meta.labels = {
        {std::string(keys::kNodeGpuCount), std::to_string(shape.gpus_per_node)},
        {std::string(keys::kNodeGpuMemory), std::to_string(shape.gpu_memory_mib)},
        {"node-role.kubernetes.io/mig-enabled", "false"},
        {"nvidia.com/mig.strategy", ""},
        {"kai.scheduler/type", n.meta.name},
    };
    AddTopologyLabels(shape, i, n.meta.labels);
    n.allocatable = node_alloc;
    n.capacity = node_cap;
    ReadTypedLabels(n);
    st.nodes.push_back(std::move(n));
  }

  // Creation order: top-level queues and child queues each in listed order (the harness numbers
  // departments and queues separately; only relative order matters).
  std::vector<std::string> leaves;
  int top_index = 0, child_index = 0;
  for (const QueueSpec& q : shape.queues) {
    const int idx = q.parent.empty() ? top_index++ : child_index++;
    st.queues.push_back(MakeQueue(q, shape.now + idx * 60));
    bool is_parent = false;
    for (const QueueSpec& other : shape.queues) is_parent |= other.parent == q.name;
    if (!is_parent) leaves.push_back(q.name);
  }
  if (leaves.empty()) std::abort();

  std::vector<JobGroup> groups = shape.job_groups;
  if (groups.empty()) groups.push_back(LegacyJobGroup(shape));
  AddPriorityClasses(groups, st);
  int total_jobs = 0;
  size_t total_pods = 0;
  for (const JobGroup& g : groups) {
    total_jobs += g.jobs;
    total_pods += static_cast<size_t>(g.jobs) * g.pods_per_job;
  }
  st.pod_groups.reserve(total_jobs);
  st.pods.reserve(total_pods);
  int job_index = 0;
  for (const JobGroup& g : groups) {
    const std::vector<std::string>& queues = g.queues.empty() ? leaves : g.queues;
    for (int j = 0; j < g.jobs; ++j, ++job_index) {
      const UnixSeconds created = shape.now - static_cast<UnixSeconds>(total_jobs - job_index) * 60;
      AddJob(shape, g, j, queues[j % queues.size()], created, st);
    }
  }
  return st;
}

// ---------------------------------------------------------------------------------------------
// YAML writer.
namespace {

std::string Q(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += '\'';
    out += c;
  }
  out += '\'';
  return out;
}

std::string Cpu(int64_t milli) {
  return milli % 1000 == 0 ? std::to_string(milli / 1000) : std::to_string(milli) + "m";
}

std::string Bytes(int64_t b) {
  static constexpr std::pair<int64_t, const char*> kSuffixes[] = {{1'000'000'000'000'000'000, "E"},
                                                                  {1'000'000'000'000'000, "P"},
                                                                  {1'000'000'000'000, "T"},
                                                                  {1'000'000'000, "G"},
                                                                  {1'000'000, "M"},
                                                                  {1'000, "k"}};
  if (b == 0) return "0";
  for (const auto& [unit, suffix] : kSuffixes) {
    if (b % unit == 0) return std::to_string(b / unit) + suffix;
  }
  return std::to_string(b);
}

// `v` in units of 10^-digits, as a decimal string that parses back exactly.
std::string Scaled(int64_t v, int digits) {
  int64_t unit = 1;
  for (int i = 0; i < digits; ++i) unit *= 10;
  const bool neg = v < 0;
  const uint64_t a = neg ? static_cast<uint64_t>(-(v + 1)) + 1 : static_cast<uint64_t>(v);
  std::string out = (neg ? "-" : "") + std::to_string(a / unit);
  uint64_t frac = a % unit;
  if (frac != 0) {
    std::string f = std::to_string(frac);
    f.insert(0, digits - f.size(), '0');
    while (f.back() == '0') f.pop_back();
    out += "." + f;
  }
  return out;
}

class Writer {
 public:
  void Doc(std::string_view api, std::string_view kind) {
    out_ += "---\napiVersion: ";
    out_ += api;
    out_ += "\nkind: ";
    out_ += kind;
    out_ += '\n';
  }
  // key: value (value already formatted), at `indent` spaces.
  void Line(int indent, std::string_view key, std::string_view value) {
    out_.append(indent, ' ');
    out_ += key;
    out_ += ": ";
    out_ += value;
    out_ += '\n';
  }
  void Key(int indent, std::string_view key) {
    out_.append(indent, ' ');
    out_ += key;
    out_ += ":\n";
  }
  void Item(int indent, std::string_view key, std::string_view value) {
    out_.append(indent, ' ');
    out_ += "- ";
    out_ += key;
    out_ += ": ";
    out_ += value;
    out_ += '\n';
  }
  void ItemScalar(int indent, std::string_view value) {
    out_.append(indent, ' ');
    out_ += "- ";
    out_ += value;
    out_ += '\n';
  }
  void Map(int indent, std::string_view key, const Labels& m) {
    if (m.empty()) return;
    Key(indent, key);
    for (const auto& [k, v] : m) Line(indent + 2, Q(k), Q(v));
  }
  void Meta(const ObjectMeta& m, const Labels* annotations = nullptr) {
    Key(0, "metadata");
    Line(2, "name", Q(m.name));
    if (!m.ns.empty()) Line(2, "namespace", Q(m.ns));
    if (!m.uid.empty()) Line(2, "uid", Q(m.uid));
    if (m.creation) Line(2, "creationTimestamp", Q(FormatRfc3339(*m.creation)));
    if (m.deletion) Line(2, "deletionTimestamp", Q(FormatRfc3339(*m.deletion)));
    Map(2, "labels", m.labels);
    Map(2, "annotations", annotations ? *annotations : m.annotations);
  }
  void Resources(int indent, std::string_view key, const kai::Resources& r, bool always_gpu) {
    Key(indent, key);
    if (r.milli_cpu) Line(indent + 2, "cpu", Q(Cpu(r.milli_cpu)));
    if (r.memory) Line(indent + 2, "memory", Q(Bytes(r.memory)));
    if (r.milli_gpu || always_gpu)
      Line(indent + 2, keys::kGpuResource, Q(FormatMilli(r.milli_gpu)));
    for (const auto& [id, amount] : r.scalars) {
      Line(indent + 2, Q(ResourceName(id)), Q(std::to_string(amount)));
    }
  }
  void ItemKey(int indent, std::string_view key) {
    out_.append(indent, ' ');
    out_ += "- ";
    out_ += key;
    out_ += ":\n";
  }
  void Requirements(int indent, std::string_view key,
                    const std::vector<SelectorRequirement>& reqs) {
    if (reqs.empty()) return;
    Key(indent, key);
    RequirementItems(indent, reqs);
  }
  void RequirementItems(int indent, const std::vector<SelectorRequirement>& reqs) {
    for (const auto& r : reqs) {
      Item(indent, "key", Q(r.key));
      Line(indent + 2, "operator", Q(r.op));
      if (!r.values.empty()) {
        Key(indent + 2, "values");
        for (const auto& v : r.values) ItemScalar(indent + 2, Q(v));
      }
    }
  }
  void PodAffinity(int indent, std::string_view key, const std::vector<PodAffinityTerm>& terms) {
    if (terms.empty()) return;
    Key(indent, key);
    Key(indent + 2, "requiredDuringSchedulingIgnoredDuringExecution");
    for (const auto& t : terms) {
      Item(indent + 2, "topologyKey", Q(t.topology_key));
      Key(indent + 4, "labelSelector");
      Map(indent + 6, "matchLabels", t.selector.match_labels);
      Requirements(indent + 6, "matchExpressions", t.selector.match_expressions);
      if (!t.namespaces.empty()) {
        Key(indent + 4, "namespaces");
        for (const auto& n : t.namespaces) ItemScalar(indent + 4, Q(n));
      }
    }
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

std::string Seconds(int64_t s) { return Q(std::to_string(s) + "s"); }

void WriteShard(Writer& w, const ShardObject& s) {
  w.Doc("kai.scheduler/v1", "SchedulingShard");
  w.Meta(s.meta);
  w.Key(0, "spec");
  if (!s.placement_gpu.empty() || !s.placement_cpu.empty()) {
    w.Key(2, "placementStrategy");
    if (!s.placement_gpu.empty()) w.Line(4, "gpu", Q(s.placement_gpu));
    if (!s.placement_cpu.empty()) w.Line(4, "cpu", Q(s.placement_cpu));
  }
  if (!s.args.empty()) {
    w.Key(2, "args");
    for (const auto& [k, v] : s.args) w.Line(4, Q(k), Q(v));
  }
  if (!s.actions.empty()) {
    w.Key(2, "actions");
    for (const ActionSetting& a : s.actions) {
      w.Key(4, Q(a.name));
      if (a.enabled) w.Line(6, "enabled", Q(*a.enabled ? "true" : "false"));
      if (a.priority) w.Line(6, "priority", Q(std::to_string(*a.priority)));
    }
  }
  if (!s.plugins.empty()) {
    w.Key(2, "plugins");
    for (const PluginSetting& p : s.plugins) {
      w.Key(4, Q(p.name));
      if (p.enabled) w.Line(6, "enabled", Q(*p.enabled ? "true" : "false"));
      if (p.priority) w.Line(6, "priority", Q(std::to_string(*p.priority)));
      if (p.has_arguments) {
        w.Key(6, "arguments");
        for (const auto& [k, v] : p.arguments) w.Line(8, Q(k), Q(v));
      }
    }
  }
}

void WriteNode(Writer& w, const NodeObject& n) {
  w.Doc("v1", "Node");
  w.Meta(n.meta);
  if (n.unschedulable || !n.taints.empty()) {
    w.Key(0, "spec");
    if (n.unschedulable) w.Line(2, "unschedulable", Q("true"));
    if (!n.taints.empty()) {
      w.Key(2, "taints");
      for (const Taint& t : n.taints) {
        w.Item(2, "key", Q(t.key));
        if (!t.value.empty()) w.Line(4, "value", Q(t.value));
        w.Line(4, "effect", Q(t.effect));
      }
    }
  }
  w.Key(0, "status");
  auto res = [&](std::string_view key, const Resources& r) {
    w.Resources(2, key, r, /*always_gpu=*/true);
    w.Line(4, "pods", Q(std::to_string(r.pods)));
  };
  res("capacity", n.capacity);
  res("allocatable", n.allocatable);
  if (!n.ready || !n.bad_conditions.empty()) {
    w.Key(2, "conditions");
    w.Item(2, "type", Q("Ready"));
    w.Line(4, "status", Q(n.ready ? "True" : "False"));
    for (const auto& c : n.bad_conditions) {
      if (c == "NotReady") continue;
      w.Item(2, "type", Q(c));
      w.Line(4, "status", Q("True"));
    }
  }
}

void WriteQueueResource(Writer& w, std::string_view key, const QueueResource& r, int digits) {
  w.Key(4, key);
  auto amount = [&](int64_t v) { return Q(v == -1 ? "-1" : Scaled(v, digits)); };
  w.Line(6, "quota", amount(r.quota));
  w.Line(6, "overQuotaWeight", Q(r.weight_milli < 0 ? "-1" : FormatMilli(r.weight_milli)));
  w.Line(6, "limit", amount(r.limit));
}

void WriteQueue(Writer& w, const QueueObject& q) {
  w.Doc("scheduling.run.ai/v2", "Queue");
  w.Meta(q.meta);
  w.Key(0, "spec");
  w.Line(2, "displayName", Q(q.meta.name));
  if (!q.parent.empty()) w.Line(2, "parentQueue", Q(q.parent));
  if (q.priority) w.Line(2, "priority", Q(std::to_string(*q.priority)));
  if (q.preempt_min_runtime) w.Line(2, "preemptMinRuntime", Seconds(*q.preempt_min_runtime));
  if (q.reclaim_min_runtime) w.Line(2, "reclaimMinRuntime", Seconds(*q.reclaim_min_runtime));
  if (q.has_resources) {
    w.Key(2, "resources");
    // Units as the decoder reads them: gpu devices, cpu millicores, memory MB.
    WriteQueueResource(w, "gpu", q.gpu, 3);
    WriteQueueResource(w, "cpu", q.cpu, 0);
    WriteQueueResource(w, "memory", q.memory, 6);
  }
}

void WriteTopologyConstraint(Writer& w, int indent, const TopologyConstraintSpec& c) {
  w.Key(indent, "topologyConstraint");
  w.Line(indent + 2, "topology", Q(c.topology));
  if (!c.required_level.empty()) w.Line(indent + 2, "requiredTopologyLevel", Q(c.required_level));
  if (!c.preferred_level.empty()) {
    w.Line(indent + 2, "preferredTopologyLevel", Q(c.preferred_level));
  }
}

void WritePodGroup(Writer& w, const PodGroupObject& pg) {
  w.Doc("scheduling.run.ai/v2alpha2", "PodGroup");
  Labels ann = pg.meta.annotations;
  if (pg.last_start) ann[std::string(keys::kLastStartTimestamp)] = FormatRfc3339(*pg.last_start);
  if (pg.stale_since) ann[std::string(keys::kStaleTimestamp)] = FormatRfc3339(*pg.stale_since);
  if (pg.last_eviction)
    ann[std::string(keys::kLastEvictionTimestamp)] = FormatRfc3339(*pg.last_eviction);
  w.Meta(pg.meta, &ann);
  w.Key(0, "spec");
  w.Line(2, "queue", Q(pg.queue));
  if (!pg.priority_class_name.empty()) w.Line(2, "priorityClassName", Q(pg.priority_class_name));
  if (!pg.preemptibility.empty()) w.Line(2, "preemptibility", Q(pg.preemptibility));
  if (pg.min_member) w.Line(2, "minMember", Q(std::to_string(*pg.min_member)));
  if (pg.min_sub_group) w.Line(2, "minSubGroup", Q(std::to_string(*pg.min_sub_group)));
  if (pg.preemption_delay_seconds)
    w.Line(2, "preemptionDelay", Seconds(*pg.preemption_delay_seconds));
  if (pg.staleness_grace_seconds) {
    w.Line(2, "stalenessGracePeriod", Seconds(*pg.staleness_grace_seconds));
  }
  if (pg.topology_constraint) WriteTopologyConstraint(w, 2, *pg.topology_constraint);
  if (!pg.sub_groups.empty()) {
    w.Key(2, "subGroups");
    for (const SubGroupSpec& sg : pg.sub_groups) {
      w.Item(2, "name", Q(sg.name));
      if (!sg.parent.empty()) w.Line(4, "parent", Q(sg.parent));
      if (sg.min_member) w.Line(4, "minMember", Q(std::to_string(*sg.min_member)));
      if (sg.min_sub_group) w.Line(4, "minSubGroup", Q(std::to_string(*sg.min_sub_group)));
      if (sg.topology_constraint) WriteTopologyConstraint(w, 4, *sg.topology_constraint);
    }
  }
}

// The GPU-sharing annotations of a pod (fraction in thousandths, written as a decimal).
void AddGpuSharing(const PodObject& p, Labels& ann) {
  const GpuSharingRequest& g = p.gpu_sharing;
  if (g.fraction_milli > 0) {
    const std::string digits = std::to_string(1000 + g.fraction_milli).substr(1);
    ann[std::string(keys::kGpuFraction)] = "0." + digits;
  }
  if (g.memory_mib > 0) ann[std::string(keys::kGpuMemory)] = std::to_string(g.memory_mib);
  if (g.IsShared() && g.num_devices != 1) {
    ann[std::string(keys::kGpuFractionNumDevices)] = std::to_string(g.num_devices);
  }
}

void WritePod(Writer& w, const PodObject& p) {
  w.Doc("v1", "Pod");
  Labels ann = p.meta.annotations;
  if (!p.pod_group.empty()) ann[std::string(keys::kPodGroupAnnotation)] = p.pod_group;
  AddGpuSharing(p, ann);
  ObjectMeta meta = p.meta;
  for (size_t i = 0; i < p.gpu_groups.size(); ++i) {
    const std::string key = std::string(keys::kGpuGroupLabel);
    meta.labels[i == 0 ? key : key + "/" + p.gpu_groups[i]] = p.gpu_groups[i];
  }
  w.Meta(meta, &ann);
  w.Key(0, "spec");
  w.Line(2, "schedulerName", Q(p.scheduler_name));
  if (!p.priority_class_name.empty()) w.Line(2, "priorityClassName", Q(p.priority_class_name));
  if (p.priority) w.Line(2, "priority", Q(std::to_string(*p.priority)));
  if (!p.node_name.empty()) w.Line(2, "nodeName", Q(p.node_name));
  w.Map(2, "nodeSelector", p.node_selector);
  if (!p.tolerations.empty()) {
    w.Key(2, "tolerations");
    for (const Toleration& t : p.tolerations) {
      w.Item(2, "operator", Q(t.op.empty() ? "Equal" : t.op));
      if (!t.key.empty()) w.Line(4, "key", Q(t.key));
      if (!t.value.empty()) w.Line(4, "value", Q(t.value));
      if (!t.effect.empty()) w.Line(4, "effect", Q(t.effect));
    }
  }
  if (p.scheduling_gated) {
    w.Key(2, "schedulingGates");
    w.Item(2, "name", Q("gated"));
  }
  if (!p.required_node_affinity.empty() || !p.required_pod_affinity.empty() ||
      !p.required_pod_anti_affinity.empty()) {
    w.Key(2, "affinity");
    if (!p.required_node_affinity.empty()) {
      w.Key(4, "nodeAffinity");
      w.Key(6, "requiredDuringSchedulingIgnoredDuringExecution");
      w.Key(8, "nodeSelectorTerms");
      for (const NodeSelectorTerm& t : p.required_node_affinity) {
        // One list item per term, holding matchExpressions and/or matchFields.
        if (t.match_expressions.empty() && t.match_fields.empty()) {
          w.ItemScalar(8, "{}");
          continue;
        }
        bool first = true;
        auto part = [&](std::string_view key, const std::vector<SelectorRequirement>& reqs) {
          if (reqs.empty()) return;
          if (first) {
            w.ItemKey(8, key);
          } else {
            w.Key(10, key);
          }
          first = false;
          w.RequirementItems(10, reqs);
        };
        part("matchExpressions", t.match_expressions);
        part("matchFields", t.match_fields);
      }
    }
    w.PodAffinity(4, "podAffinity", p.required_pod_affinity);
    w.PodAffinity(4, "podAntiAffinity", p.required_pod_anti_affinity);
  }
  w.Key(2, "containers");
  w.Item(2, "name", Q("main"));
  w.Line(4, "image", Q("busybox"));
  w.Key(4, "resources");
  w.Resources(6, "requests", p.request, /*always_gpu=*/true);
  if (p.request.milli_gpu > 0) {
    w.Key(6, "limits");
    w.Line(8, keys::kGpuResource, Q(FormatMilli(p.request.milli_gpu)));
  }
  w.Key(0, "status");
  w.Line(2, "phase", Q(p.phase));
  if (!p.nominated_node.empty()) w.Line(2, "nominatedNodeName", Q(p.nominated_node));
}

void WriteTopology(Writer& w, const TopologyObject& t) {
  w.Doc("kai.scheduler/v1alpha1", "Topology");
  w.Meta(t.meta);
  w.Key(0, "spec");
  w.Key(2, "levels");
  for (const TopologyLevel& l : t.levels) {
    w.Item(2, "nodeLabel", Q(l.node_label));
    if (!l.alias.empty()) w.Line(4, "alias", Q(l.alias));
  }
}

void WriteBindRequest(Writer& w, const BindRequestObject& b) {
  w.Doc("scheduling.run.ai/v1alpha2", "BindRequest");
  w.Meta(b.meta);
  w.Key(0, "spec");
  w.Line(2, "podName", Q(b.pod_name));
  w.Line(2, "selectedNode", Q(b.selected_node));
  if (!b.received_resource_type.empty())
    w.Line(2, "receivedResourceType", Q(b.received_resource_type));
  if (!b.selected_gpu_groups.empty()) {
    w.Key(2, "selectedGPUGroups");
    for (const auto& g : b.selected_gpu_groups) w.ItemScalar(2, Q(g));
  }
  if (!b.phase.empty()) {
    w.Key(0, "status");
    w.Line(2, "phase", Q(b.phase));
  }
}

}  // namespace

std::string ToYaml(const ClusterState& state) {
  Writer w;
  if (state.shard) WriteShard(w, *state.shard);
  for (const auto& pc : state.priority_classes) {
    w.Doc("scheduling.k8s.io/v1", "PriorityClass");
    w.Meta(pc.meta);
    w.Line(0, "value", std::to_string(pc.value));
    w.Line(0, "globalDefault", pc.global_default ? "true" : "false");
  }
  for (const auto& t : state.topologies) WriteTopology(w, t);
  for (const auto& n : state.nodes) WriteNode(w, n);
  for (const auto& q : state.queues) WriteQueue(w, q);
  for (const auto& pg : state.pod_groups) WritePodGroup(w, pg);
  for (const auto& p : state.pods) WritePod(w, p);
  for (const auto& b : state.bind_requests) WriteBindRequest(w, b);
  return w.Take();
}

namespace {

ResourceSliceObject NodeSlice(const NodeObject& n, int64_t gpus) {
  ResourceSliceObject s;
  s.meta.kind = "ResourceSlice";
  s.meta.name = n.meta.name + "-gpu";
  s.driver = "gpu.nvidia.com";
  s.pool = n.meta.name;
  s.node_name = n.meta.name;
  for (int64_t i = 0; i < gpus; ++i) s.devices.push_back({"gpu-" + std::to_string(i), {}, {}});
  return s;
}

ResourceClaimObject PodClaim(const PodObject& p, int64_t gpus) {
  ResourceClaimObject c;
  c.meta.kind = "ResourceClaim";
  c.meta.name = p.meta.name + "-gpu";
  c.meta.ns = p.meta.ns;
  c.requests.push_back(
      {"gpu", "gpu.nvidia.com", DeviceAllocationMode::kExactCount, gpus, {}, false});
  return c;
}

}  // namespace

void MoveGpusToDra(ClusterState& world) {
  DeviceClassObject cls;
  cls.meta.kind = "DeviceClass";
  cls.meta.name = "gpu.nvidia.com";
  world.dra.classes.push_back(cls);
  for (NodeObject& n : world.nodes) {
    world.dra.slices.push_back(NodeSlice(n, n.allocatable.milli_gpu / 1000));
    n.allocatable.milli_gpu = 0;
    n.capacity.milli_gpu = 0;
    n.gpu_count = 0;
  }
  for (PodObject& p : world.pods) {
    const int64_t gpus = p.request.milli_gpu / 1000;
    if (gpus == 0) continue;
    p.request.milli_gpu = 0;
    world.dra.claims.push_back(PodClaim(p, gpus));
    // Generated from a template (a per-pod claim, not a shared one needing a queue label).
    p.resource_claims.push_back({"gpu", p.meta.name + "-gpu", "gpu-template"});
  }
}

void AddNumaZones(ClusterState& world, int zones) {
  for (const NodeObject& n : world.nodes) {
    NodeTopologyObject t;
    t.meta.kind = "NodeResourceTopology";
    t.meta.name = n.meta.name;
    t.policy = NumaPolicy::kSingleNumaNode;
    t.scope = NumaScope::kPod;
    for (int z = 0; z < zones; ++z) {
      Resources share;
      share.milli_cpu = n.allocatable.milli_cpu / zones;
      share.memory = n.allocatable.memory / zones;
      share.milli_gpu = n.allocatable.milli_gpu / zones;
      t.zones.push_back({"node-" + std::to_string(z), share, share});
    }
    world.node_topologies.push_back(std::move(t));
  }
  for (PodObject& p : world.pods) {
    PodNumaRequest r;
    r.guaranteed = true;
    r.pod_scope.milli_gpu = p.request.milli_gpu;
    if (p.request.milli_cpu % 1000 == 0) r.pod_scope.milli_cpu = p.request.milli_cpu;
    r.concurrent.push_back(r.pod_scope);
    p.numa = {r};
  }
}

}  // namespace kai::bench
