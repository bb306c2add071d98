#include "kai/cmd/explain_command.h"

#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/writer.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include "kai/cmd/command.h"
#include "kai/cmd/flags.h"
#include "kai/core/explain/counterfactual.h"
#include "kai/core/framework/config.h"
#include "kai/core/framework/eviction.h"
#include "kai/core/resource/quantity.h"
#include "kai/core/util/time.h"
#include "kai/daemons/scheduler/scheduler.h"
#include "kai/kube/io/manifest_files.h"
#include "kai/kube/io/usage_file.h"

namespace kai::cmd {

CLI::App* AddExplainCommand(CLI::App& app, ExplainArgs& a) {
  CLI::App* c = app.add_subcommand(
      "explain",
      "why is a workload pending (or evicted), and which smallest changes, each verified by "
      "re-running the cycle, would make it run");
  c->add_option("kind", a.kind, "pod or podgroup")
      ->required()
      ->check(CLI::IsMember({"pod", "podgroup"}));
  c->add_option("target", a.target, "NAMESPACE/NAME")->required();
  AddFilesOption(c, a.files);
  c->add_option("--kubeconfig", a.kubeconfig, "read a live cluster instead of files");
  c->add_option("--context", a.context, "kubeconfig context (default: its current-context)");
  AddFipsModeFlag(c);
  c->add_option("--shard", a.shard, "SchedulingShard whose node pool and config to read");
  c->add_option("--node-pool-label-key", a.node_pool_key, "the node-pool label");
  c->add_option("--now", a.now, "the clock, RFC 3339 (default: wall clock)");
  c->add_option("--actions", a.actions, "comma-separated actions (default: the shard's)");
  c->add_option("--usage", a.usage_file, "time-based fair share history (YAML)");
  c->add_option("--max-cycles", a.max_cycles, "cycles to simulate at most (default 48)")
      ->check(CLI::PositiveNumber);
  c->add_option("-o,--output", a.output, "table or json")->check(CLI::IsMember({"table", "json"}));
  return c;
}

namespace {

constexpr int kExitBadInput = 2;

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

Result<ClusterState> ExplainWorld(const ExplainArgs& a) {
  if (a.files.empty() == a.kubeconfig.empty()) {
    return Error{"-f or --kubeconfig: give the manifests or a cluster (one of them)"};
  }
  if (!a.files.empty()) return LoadManifests(a.files);
  scheduler::SchedulerOptions o;
  o.kubeconfig = a.kubeconfig;
  o.context = a.context;
  o.shard = a.shard;
  o.node_pool_key = a.node_pool_key;
  return scheduler::ReadLiveWorld(o);
}

Result<ExplainTarget> ParseTarget(const ExplainArgs& a) {
  const size_t slash = a.target.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == a.target.size() ||
      a.target.find('/', slash + 1) != std::string::npos) {
    return Error{"target: expected NAMESPACE/NAME, got \"" + a.target + "\""};
  }
  return ExplainTarget{a.kind == "podgroup", a.target.substr(0, slash), a.target.substr(slash + 1)};
}

Result<SchedulerConfig> ExplainConfig(const ClusterState& world, const ExplainArgs& a) {
  auto config = ConfigFromShard(world.shard);
  if (!config.ok() || a.actions.empty()) return config;
  return WithActions(std::move(config.value()), Split(a.actions, ','));
}

// ---- table ----

std::string Scheduled(const TargetOutcome& o) {
  return std::to_string(o.scheduled) + " of " + std::to_string(o.required) + " pods scheduled";
}

void PrintHeader(const Explanation& e, std::ostream& out) {
  out << "TARGET   " << e.target.Name();
  if (!e.queue.empty()) out << " (queue " << e.queue << ")";
  if (!e.target.pod_group && !e.pod_group.empty()) out << ", PodGroup " << e.pod_group;
  out << "\nSTATUS   " << e.outcome.status << " after the next cycle (" << Scheduled(e.outcome)
      << ")\n";
  for (size_t i = 0; i < e.outcome.reasons.size(); ++i) {
    out << (i == 0 ? "WHY      " : "         ") << e.outcome.reasons[i].Message() << "\n";
  }
}

void PrintEviction(const Explanation& e, std::ostream& out) {
  const TargetOutcome& o = e.outcome;
  out << "EVICTED  " << EvictionKindName(o.eviction.kind) << " by " << o.eviction.action;
  if (!o.beneficiary.empty()) out << " for " << o.beneficiary;
  out << "\nRULE     " << o.eviction.rule_text() << "\n";
  if (o.eviction.above_semi_preemptible_floor) {
    out << "         (above its semi-preemptible floor: only the pods beyond minMember)\n";
  }
}

void PrintSuggestions(const Explanation& e, std::ostream& out) {
  const bool evicted = e.outcome.evicted;
  out << "\n"
      << (evicted ? "WHAT WOULD HAVE KEPT IT RUNNING" : "WHAT WOULD MAKE IT RUN NEXT CYCLE")
      << " (smallest first; each verified by re-running the cycle)\n";
  if (e.suggestions.empty()) out << "  nothing found among the changes tried\n";
  out << std::left;
  for (size_t i = 0; i < e.suggestions.size(); ++i) {
    const Suggestion& s = e.suggestions[i];
    out << "  " << std::setw(3) << i + 1 << std::setw(22) << ChangeKindName(s.change.kind)
        << s.description << "\n     " << std::setw(22) << ""
        << "-> " << s.after.status << " (" << Scheduled(s.after) << ")\n";
  }
  for (const std::string& r : e.rejected) out << "  tried, not enough: " << r << "\n";
}

void PrintTable(const Explanation& e, double millis, std::ostream& out) {
  PrintHeader(e, out);
  if (e.outcome.evicted) PrintEviction(e, out);
  if (e.outcome.runs && !e.outcome.evicted) {
    out << "\nIt is scheduled by the next cycle: nothing to change.\n";
  } else {
    PrintSuggestions(e, out);
  }
  out << "\ncycles simulated: " << e.cycles << " (" << std::fixed << std::setprecision(1) << millis
      << " ms)" << (e.budget_exhausted ? "; the cycle budget ran out (--max-cycles)" : "") << "\n";
}

// ---- JSON ----

using JsonWriter = rapidjson::Writer<rapidjson::OStreamWrapper>;

void Field(JsonWriter& w, const char* key, const std::string& value) {
  w.Key(key);
  w.String(value.c_str());
}

void Strings(JsonWriter& w, const char* key, const std::vector<std::string>& values) {
  w.Key(key);
  w.StartArray();
  for (const auto& v : values) w.String(v.c_str());
  w.EndArray();
}

void WriteOutcome(JsonWriter& w, const TargetOutcome& o) {
  Field(w, "status", o.status);
  w.Key("scheduled");
  w.Int(o.scheduled);
  w.Key("required");
  w.Int(o.required);
  w.Key("runs");
  w.Bool(o.runs);
  w.Key("evicted");
  w.Bool(o.evicted);
}

void WriteReasons(JsonWriter& w, const std::vector<Reason>& reasons) {
  w.Key("reasons");
  w.StartArray();
  for (const Reason& r : reasons) {
    w.StartObject();
    Field(w, "kind", r.KindName());
    Field(w, "message", r.Message());
    w.EndObject();
  }
  w.EndArray();
}

void WriteFreed(JsonWriter& w, const std::vector<FreedJob>& freed) {
  w.Key("freed");
  w.StartArray();
  for (const FreedJob& j : freed) {
    w.StartObject();
    Field(w, "job", j.job);
    Field(w, "queue", j.queue);
    w.Key("overQuota");
    w.Bool(j.over_quota);
    w.Key("milliGpu");
    w.Int64(j.milli_gpu);
    Strings(w, "pods", j.pods);
    Strings(w, "nodes", j.nodes);
    w.EndObject();
  }
  w.EndArray();
}

void WriteTaints(JsonWriter& w, const std::vector<Taint>& taints) {
  w.Key("taints");
  w.StartArray();
  for (const Taint& t : taints) {
    w.StartObject();
    Field(w, "key", t.key);
    Field(w, "value", t.value);
    Field(w, "effect", t.effect);
    w.EndObject();
  }
  w.EndArray();
}

// The fields of a change that its kind uses.
void WriteChange(JsonWriter& w, const Change& c) {
  w.Key("change");
  w.StartObject();
  Field(w, "workload", c.workload.Name());
  const std::pair<const char*, const std::string*> texts[] = {
      {"queue", &c.queue},          {"resource", &c.resource},    {"key", &c.key},
      {"subGroup", &c.sub_group},   {"fromLevel", &c.from_level}, {"waitingFor", &c.waiting_for},
      {"disruption", &c.disruption}};
  for (const auto& [k, v] : texts) {
    if (!v->empty()) Field(w, k, *v);
  }
  if (c.kind == ChangeKind::kRelaxTopology) Field(w, "toLevel", c.to_level);
  if (c.amount != 0) {
    w.Key("amount");
    w.Int64(c.amount);
  }
  if (c.kind == ChangeKind::kWait) Field(w, "at", FormatRfc3339(c.at));
  if (!c.taints.empty()) WriteTaints(w, c.taints);
  if (!c.nodes.empty()) Strings(w, "nodes", c.nodes);
  if (!c.freed.empty()) WriteFreed(w, c.freed);
  w.EndObject();
}

void WriteSuggestion(JsonWriter& w, const Suggestion& s) {
  w.StartObject();
  Field(w, "kind", ChangeKindName(s.change.kind));
  Field(w, "description", s.description);
  WriteChange(w, s.change);
  w.Key("after");
  w.StartObject();
  WriteOutcome(w, s.after);
  w.EndObject();
  w.EndObject();
}

void WriteEviction(JsonWriter& w, const TargetOutcome& o) {
  w.Key("eviction");
  if (!o.evicted) {
    w.Null();
    return;
  }
  w.StartObject();
  Field(w, "kind", EvictionKindName(o.eviction.kind));
  Field(w, "action", o.eviction.action);
  Field(w, "beneficiary", o.beneficiary);
  Field(w, "rule", o.eviction.rule_text());
  w.Key("aboveSemiPreemptibleFloor");
  w.Bool(o.eviction.above_semi_preemptible_floor);
  w.EndObject();
}

void WriteTarget(JsonWriter& w, const Explanation& e) {
  w.Key("target");
  w.StartObject();
  Field(w, "kind", e.target.pod_group ? "podgroup" : "pod");
  Field(w, "namespace", e.target.ns);
  Field(w, "name", e.target.name);
  w.EndObject();
  Field(w, "queue", e.queue);
  Field(w, "podGroup", e.pod_group);
}

void PrintJson(const Explanation& e, double millis, std::ostream& out) {
  rapidjson::OStreamWrapper os(out);
  JsonWriter w(os);
  w.StartObject();
  WriteTarget(w, e);
  WriteOutcome(w, e.outcome);
  WriteReasons(w, e.outcome.reasons);
  WriteEviction(w, e.outcome);
  w.Key("suggestions");
  w.StartArray();
  for (const Suggestion& s : e.suggestions) WriteSuggestion(w, s);
  w.EndArray();
  Strings(w, "rejected", e.rejected);
  w.Key("cycles");
  w.Int(e.cycles);
  w.Key("budgetExhausted");
  w.Bool(e.budget_exhausted);
  w.Key("millis");
  w.Double(millis);
  Field(w, "units", "cpu: millicores, memory: bytes, nvidia.com/gpu: milli-GPU, min runtime: s");
  w.EndObject();
  out << "\n";
}

int Fail(std::ostream& err, const std::string& message) {
  err << "kai: " << message << "\n";
  return kExitBadInput;
}

Result<ExplainOptions> Options(const ExplainArgs& a, std::optional<usage::UsageStore>& usage) {
  ExplainOptions o;
  o.max_cycles = a.max_cycles;
  o.simulate.now = WallClockSeconds();
  if (!a.now.empty()) {
    auto t = ParseRfc3339(a.now);
    if (!t)
      return Error{"--now: expected an RFC 3339 time such as 2025-01-01T12:00:00Z, got \"" + a.now +
                   "\""};
    o.simulate.now = *t;
  }
  if (!a.usage_file.empty()) {
    auto u = usage::LoadUsageFile(a.usage_file);
    if (!u.ok()) return u.error();
    usage = std::move(u.value());
    o.simulate.usage = &*usage;
  }
  return o;
}

}  // namespace

int RunExplain(const ExplainArgs& a, std::ostream& out, std::ostream& err) {
  auto target = ParseTarget(a);
  if (!target.ok()) return Fail(err, target.error().message);
  std::optional<usage::UsageStore> usage;
  auto options = Options(a, usage);
  if (!options.ok()) return Fail(err, options.error().message);
  auto world = ExplainWorld(a);
  if (!world.ok()) return Fail(err, world.error().message);
  for (const auto& w : world->warnings) err << "kai: warning: " << w << "\n";
  auto config = ExplainConfig(*world, a);
  if (!config.ok()) return Fail(err, config.error().message);
  const auto start = std::chrono::steady_clock::now();
  auto e = ExplainWorkload(*world, *config, *target, *options);
  if (!e.ok()) return Fail(err, e.error().message);
  const double millis =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (a.output == "json") {
    PrintJson(*e, millis, out);
  } else {
    PrintTable(*e, millis, out);
  }
  return 0;
}

namespace {

class ExplainCommand final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override { return AddExplainCommand(app, a_); }
  int Run() override { return RunExplain(a_, std::cout, std::cerr); }

 private:
  ExplainArgs a_;
};

}  // namespace

std::unique_ptr<Command> MakeExplainCommand() { return std::make_unique<ExplainCommand>(); }

}  // namespace kai::cmd
