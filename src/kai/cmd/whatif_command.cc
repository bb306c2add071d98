#include "kai/cmd/whatif_command.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "kai/cmd/command.h"
#include "kai/cmd/flags.h"
#include "kai/core/framework/config.h"
#include "kai/core/k8s/decode.h"
#include "kai/core/k8s/doc.h"
#include "kai/core/usage/db_config.h"
#include "kai/core/util/time.h"
#include "kai/core/whatif/engine.h"
#include "kai/core/whatif/html.h"
#include "kai/core/whatif/metrics.h"
#include "kai/core/whatif/output.h"
#include "kai/core/whatif/variant.h"
#include "kai/kube/io/manifest_files.h"

namespace kai::cmd {
namespace {

constexpr int kExitBadInput = 2;

int Fail(const std::string& message) {
  std::cerr << "kai: " << message << "\n";
  return kExitBadInput;
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot read"};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The latest creationTimestamp of the cluster's objects: a dump's "now", near enough.
UnixSeconds DefaultStart(const ClusterState& c) {
  UnixSeconds t = *ParseRfc3339("2025-01-01T00:00:00Z");
  const auto see = [&t](const ObjectMeta& m) {
    if (m.creation && *m.creation > t) t = *m.creation;
  };
  for (const auto& o : c.nodes) see(o.meta);
  for (const auto& o : c.pods) see(o.meta);
  for (const auto& o : c.pod_groups) see(o.meta);
  for (const auto& o : c.queues) see(o.meta);
  return t;
}

// The shard's spec.usageDBConfig, read again from the file it came from (the decoded shard keeps
// only what scheduling reads). None without a shard or without the field.
Result<std::optional<usage::UsageDbConfig>> ShardUsage(const ClusterState& c) {
  if (!c.shard || c.shard->meta.source.empty()) return std::optional<usage::UsageDbConfig>();
  const std::string source(c.shard->meta.source);
  auto text = ReadFile(source);
  if (!text.ok()) return text.error();
  auto d = doc::ParseYaml(*text);
  if (!d.ok()) return Error{source + ": " + d.error().message};
  for (const doc::Node& root : d->Roots()) {
    if (root["kind"].Scalar() != "SchedulingShard") continue;
    if (root["metadata"]["name"].Scalar() != c.shard->meta.name) continue;
    return usage::ParseUsageDbConfig(root["spec"], source);
  }
  return std::optional<usage::UsageDbConfig>();
}

// A variant's objects, decoded but not validated on their own (a Queue may name a parent that
// only the base has); the merged cluster is validated.
Result<ClusterState> LoadVariant(const ClusterState& base, const std::string& spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
    return Error{"--variant: expected NAME=FILE, got \"" + spec + "\""};
  }
  const std::string file = spec.substr(eq + 1);
  auto text = ReadFile(file);
  if (!text.ok()) return Error{"--variant " + spec.substr(0, eq) + ": " + text.error().message};
  ClusterState overlay;
  const Status decoded = DecodeManifestText(*text, file, overlay);
  if (!decoded.ok()) return Error{ProblemsOf(decoded).front()};
  ClusterState merged = whatif::ApplyVariant(base, std::move(overlay));
  const Status valid = ValidateCluster(merged);
  if (!valid.ok()) {
    return Error{"--variant " + spec.substr(0, eq) + ": " + ProblemsOf(valid).front()};
  }
  return merged;
}

// Simulated time reached, events per second and the time left, redrawn in place on a terminal.
class ProgressBar {
 public:
  explicit ProgressBar(std::string label) : label_(std::move(label)) {}
  void Draw(const whatif::Progress& p) {
    const auto now = std::chrono::steady_clock::now();
    if (p.simulated_seconds < p.until_seconds && now - last_ < std::chrono::milliseconds(100))
      return;
    last_ = now;
    const double wall = std::chrono::duration<double>(now - begin_).count();
    const double done = p.until_seconds > 0 ? static_cast<double>(p.simulated_seconds) /
                                                  static_cast<double>(p.until_seconds)
                                            : 1.0;
    const int filled = static_cast<int>(done * 30);
    const double eta = done > 0 ? wall / done - wall : 0;
    char line[256];
    std::snprintf(line, sizeof line,
                  "\r%-10s [%-30s] %s/%s  %.0f events/s  %.0f cycles/s  ETA %.0fs ", label_.c_str(),
                  std::string(static_cast<size_t>(filled), '=').c_str(),
                  whatif::FormatSpan(p.simulated_seconds).c_str(),
                  whatif::FormatSpan(p.until_seconds).c_str(),
                  wall > 0 ? static_cast<double>(p.events) / wall : 0,
                  wall > 0 ? static_cast<double>(p.cycles) / wall : 0, eta);
    std::cerr << line << std::flush;
    if (p.simulated_seconds >= p.until_seconds) std::cerr << "\n";
  }

 private:
  std::string label_;
  std::chrono::steady_clock::time_point begin_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

struct Prepared {
  std::vector<std::pair<std::string, ClusterState>> clusters;  // base first, then the variants
  std::vector<whatif::TraceJob> jobs;
  whatif::WhatIfOptions options;
  bool full_evaluation = false;
};

std::optional<std::string> ReadSpanFlag(const std::string& flag, const std::string& text,
                                        int64_t& out) {
  const auto v = whatif::ParseSpan(text);
  if (!v || *v <= 0)
    return flag + ": expected a positive duration such as 90s, 2h or 7d, got \"" + text + "\"";
  out = *v;
  return std::nullopt;
}

std::optional<std::string> ReadOptions(const WhatIfArgs& a, const ClusterState& base,
                                       whatif::WhatIfOptions& o) {
  if (auto e = ReadSpanFlag("--until", a.until, o.until_seconds)) return e;
  if (auto e = ReadSpanFlag("--recheck", a.recheck, o.recheck_seconds)) return e;
  if (!a.period.empty()) {
    if (auto e = ReadSpanFlag("--period", a.period, o.period_seconds)) return e;
  }
  if (a.buckets < 1 || a.buckets > 10000) return "--buckets: must be from 1 to 10000";
  o.buckets = a.buckets;
  o.verify_kept_verdicts = a.verify_kept_verdicts;
  o.start = DefaultStart(base);
  if (!a.start.empty()) {
    const auto t = ParseRfc3339(a.start);
    if (!t) return "--start: expected an RFC 3339 time, got \"" + a.start + "\"";
    o.start = *t;
  }
  return std::nullopt;
}

Result<Prepared> Prepare(const WhatIfArgs& a) {
  Prepared p;
  auto base = LoadManifests(a.files);
  if (!base.ok()) return base.error();
  for (const auto& w : base->warnings) std::cerr << "kai: warning: " << w << "\n";
  if (auto e = ReadOptions(a, *base, p.options)) return Error{*e};
  p.full_evaluation = a.full_evaluation;
  auto text = ReadFile(a.workload);
  if (!text.ok()) return text.error();
  auto jobs = whatif::ParseTrace(*text, a.workload, a.seed);
  if (!jobs.ok()) return jobs.error();
  p.jobs = std::move(jobs.value());
  for (const std::string& spec : a.variants) {
    auto v = LoadVariant(*base, spec);
    if (!v.ok()) return v.error();
    p.clusters.emplace_back(spec.substr(0, spec.find('=')), std::move(v.value()));
  }
  p.clusters.insert(p.clusters.begin(), {"base", std::move(base.value())});
  return p;
}

Result<whatif::VariantSummary> RunOne(const std::string& name, ClusterState cluster,
                                      const Prepared& p, bool bar) {
  auto config = ConfigFromShard(cluster.shard);
  if (!config.ok()) return Error{name + ": " + config.error().message};
  if (p.full_evaluation) config->keep_verdicts = false;
  auto usage = ShardUsage(cluster);
  if (!usage.ok()) return Error{name + ": " + usage.error().message};
  whatif::WhatIfOptions o = p.options;
  o.usage = *usage;
  ProgressBar progress(name);
  if (bar) o.progress = [&progress](const whatif::Progress& pr) { progress.Draw(pr); };
  auto run = whatif::RunWhatIf(std::move(cluster), *config, p.jobs, o);
  if (!run.ok()) return Error{name + ": " + run.error().message};
  return whatif::Summarize(name, std::move(run.value()));
}

std::optional<std::string> WriteReport(const std::string& dir,
                                       const std::vector<whatif::VariantSummary>& variants) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return "--report: cannot create " + dir + ": " + ec.message();
  const std::string path = dir + "/index.html";
  std::ofstream out(path, std::ios::binary);
  out << whatif::HtmlReport(variants);
  if (!out) return "--report: cannot write " + path;
  std::cerr << "kai: wrote " << path << "\n";
  return std::nullopt;
}

}  // namespace

CLI::App* AddWhatIfCommand(CLI::App& app, WhatIfArgs& a) {
  CLI::App* c = app.add_subcommand(
      "whatif", "simulate a trace of jobs over time on a cluster and on variants of it");
  AddFilesOption(c, a.files, "cluster manifests, file or directory")->required();
  c->add_option("--workload", a.workload, "the jobs: a CSV trace or a generator spec (YAML)")
      ->required();
  c->add_option("--until", a.until, "simulated time to run (90s, 12h, 7d)");
  c->add_option("--seed", a.seed, "the generator spec's seed");
  c->add_option("--variant", a.variants,
                "NAME=FILE: objects replacing or added to the cluster (repeatable)");
  c->add_option("--report", a.report_dir, "write an HTML report (index.html) to this directory");
  c->add_option("-o,--output", a.output, "table or json")->check(CLI::IsMember({"table", "json"}));
  c->add_option("--start", a.start,
                "the simulated clock at time 0, RFC 3339 (default: the cluster's latest "
                "creationTimestamp)");
  c->add_option("--period", a.period, "schedule period (default: the shard's, else 1s)");
  c->add_option("--recheck", a.recheck,
                "how often a cycle runs while jobs wait and nothing changes");
  c->add_option("--buckets", a.buckets, "points of the timelines");
  c->add_flag("--verify-kept-verdicts", a.verify_kept_verdicts,
              "run every cycle also with every pending job decided again and fail on the first "
              "decision or reason that differs");
  c->add_flag("--full-evaluation", a.full_evaluation,
              "decide every pending job every cycle: no verdict kept or shared");
  return c;
}

int RunWhatIfCommand(const WhatIfArgs& a) {
  auto prepared = Prepare(a);
  if (!prepared.ok()) return Fail(prepared.error().message);
  const bool bar = a.progress && isatty(STDERR_FILENO);
  std::vector<whatif::VariantSummary> variants;
  for (auto& [name, cluster] : prepared->clusters) {
    auto v = RunOne(name, std::move(cluster), *prepared, bar);
    if (!v.ok()) return Fail(v.error().message);
    variants.push_back(std::move(v.value()));
  }
  if (a.output == "json") {
    whatif::WriteJson(variants, std::cout);
  } else {
    whatif::WriteTable(variants, std::cout);
  }
  if (!a.report_dir.empty()) {
    if (auto e = WriteReport(a.report_dir, variants)) return Fail(*e);
  }
  return 0;
}

namespace {

class WhatIfCommand final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override { return AddWhatIfCommand(app, a_); }
  int Run() override { return RunWhatIfCommand(a_); }

 private:
  WhatIfArgs a_;
};

}  // namespace

std::unique_ptr<Command> MakeWhatIfCommand() { return std::make_unique<WhatIfCommand>(); }

}  // namespace kai::cmd
