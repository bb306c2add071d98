// `kai queues`: the queue tree with each queue's fair share, and why it is what it is.
#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/writer.h>
#include <CLI/CLI.hpp>

#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "kai/cmd/command.h"
#include "kai/cmd/common.h"
#include "kai/cmd/flags.h"
#include "kai/core/explain/queues.h"
#include "kai/core/framework/config.h"
#include "kai/core/framework/session.h"
#include "kai/core/resource/quantity.h"
#include "kai/core/sim/simulator.h"
#include "kai/daemons/scheduler/scheduler.h"
#include "kai/kube/io/manifest_files.h"
#include "kai/kube/io/usage_dir.h"

namespace kai::cmd {
namespace {

struct QueuesArgs {
  std::vector<std::string> files;
  std::string now;
  std::string output = "table";
  std::string usage_file;
  // A live cluster instead of files (the scheduler's view: its shard, its watches).
  std::string kubeconfig, context, shard, node_pool_key = "kai.scheduler/node-pool";
  std::string usage_dir;  // the history kai scheduler --usage-dir records
};

std::string Amount(kai::CoreResource r, int64_t v) {
  return v < 0 ? "unlimited" : kai::FormatAmount(r, v);
}

std::string Saturation(double s) {
  if (std::isinf(s)) return "inf";
  std::ostringstream o;
  o << std::fixed << std::setprecision(2) << s;
  return o.str();
}

void PrintQueuesTable(const std::vector<kai::QueueExplanation>& queues) {
  constexpr kai::CoreResource kRes[] = {kai::CoreResource::kCpu, kai::CoreResource::kMemory,
                                        kai::CoreResource::kGpu};
  std::cout << std::left << std::setw(22) << "QUEUE" << std::setw(6) << "PRIO" << std::setw(16)
            << "RESOURCE" << std::setw(12) << "QUOTA" << std::setw(12) << "LIMIT" << std::setw(8)
            << "WEIGHT" << std::setw(14) << "REQUESTED" << std::setw(14) << "ALLOCATED"
            << std::setw(14) << "FAIR SHARE" << std::setw(6) << "SAT"
            << "HOW\n";
  for (const auto& q : queues) {
    for (size_t i = 0; i < q.resources.size(); ++i) {
      const auto& e = q.resources[i];
      const std::string name = i == 0 ? std::string(q.depth * 2, ' ') + q.name : "";
      std::cout << std::setw(22) << name << std::setw(6)
                << (i == 0 ? std::to_string(q.priority) : "") << std::setw(16) << e.resource
                << std::setw(12) << Amount(kRes[i], e.quota) << std::setw(12)
                << Amount(kRes[i], e.limit) << std::setw(8) << kai::FormatMilli(e.weight_milli)
                << std::setw(14) << Amount(kRes[i], e.requested) << std::setw(14)
                << Amount(kRes[i], e.allocated) << std::setw(14) << Amount(kRes[i], e.fair_share)
                << std::setw(6) << Saturation(e.saturation) << e.Summary() << "\n";
    }
  }
}

void PrintQueuesJson(const std::vector<kai::QueueExplanation>& queues) {
  rapidjson::OStreamWrapper os(std::cout);
  rapidjson::Writer<rapidjson::OStreamWrapper> w(os);
  w.StartObject();
  w.Key("queues");
  w.StartArray();
  for (const auto& q : queues) {
    w.StartObject();
    w.Key("name");
    w.String(q.name.c_str());
    w.Key("parent");
    w.String(q.parent.c_str());
    w.Key("priority");
    w.Int(q.priority);
    w.Key("leaf");
    w.Bool(q.leaf);
    w.Key("resources");
    w.StartObject();
    for (const auto& e : q.resources) {
      w.Key(e.resource.c_str());
      w.StartObject();
      const std::pair<const char*, int64_t> fields[] = {{"quota", e.quota},
                                                        {"limit", e.limit},
                                                        {"overQuotaWeightMilli", e.weight_milli},
                                                        {"requested", e.requested},
                                                        {"allocated", e.allocated},
                                                        {"fairShare", e.fair_share},
                                                        {"levelTotal", e.level_total},
                                                        {"deservedPart", e.deserved_part},
                                                        {"surplusPart", e.surplus_part}};
      for (const auto& [k, v] : fields) {
        w.Key(k);
        w.Int64(v);
      }
      w.Key("saturation");
      if (std::isinf(e.saturation)) {
        w.Null();
      } else {
        w.Double(e.saturation);
      }
      w.Key("usage");
      w.Double(e.usage);
      w.Key("cappedBy");
      w.String(e.capped_by.c_str());
      w.Key("explanation");
      w.String(e.Summary().c_str());
      w.EndObject();
    }
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.Key("units");
  w.String("cpu: millicores, memory: bytes, nvidia.com/gpu: milli-GPU; -1: unlimited");
  w.EndObject();
  std::cout << "\n";
}

// The world of `kai queues`: the manifests, or the live cluster as the scheduler lists it.
kai::Result<kai::ClusterState> QueuesWorld(const QueuesArgs& a) {
  if (a.files.empty() == a.kubeconfig.empty()) {
    return kai::Error{"-f or --kubeconfig: give the manifests or a cluster (one of them)"};
  }
  if (!a.files.empty()) return kai::LoadManifests(a.files);
  kai::scheduler::SchedulerOptions o;
  o.kubeconfig = a.kubeconfig;
  o.context = a.context;
  o.shard = a.shard;
  o.node_pool_key = a.node_pool_key;
  return kai::scheduler::ReadLiveWorld(o);
}

// The history kai scheduler recorded under `dir`, with the usage parameters it used.
std::optional<std::string> ReadUsageDir(const std::string& dir,
                                        std::optional<kai::usage::UsageStore>& usage) {
  auto file = kai::usage::UsageDir(dir).Read();
  if (!file.ok()) return file.error().message;
  if (!*file) {
    std::cerr << "kai: warning: --usage-dir: no usage history in " << dir << " yet\n";
    return std::nullopt;
  }
  usage = (*file)->history.ToStore((*file)->params);
  return std::nullopt;
}

int RunQueues(const QueuesArgs& a) {
  kai::sim::SimulateOptions options;
  std::optional<kai::usage::UsageStore> usage;
  if (!a.usage_file.empty() && !a.usage_dir.empty())
    return Fail("--usage and --usage-dir: give one of them");
  if (auto err = ReadClockAndUsage(a.now, a.usage_file, options, usage)) return Fail(*err);
  if (!a.usage_dir.empty()) {
    if (auto err = ReadUsageDir(a.usage_dir, usage)) return Fail(*err);
    if (usage) options.usage = &*usage;
  }
  auto world = QueuesWorld(a);
  if (!world.ok()) return Fail(world.error().message);
  auto config = kai::ConfigFromShard(world->shard);
  if (!config.ok()) return Fail(config.error().message);
  if (!config->Plugin("proportion"))
    return Fail("the proportion plugin is disabled: no fair share");
  kai::Session session(kai::sim::BuildSimSnapshot(world.value(), options), config.value());
  if (auto opened = session.OpenPlugins(); !opened.ok()) return Fail(opened.error().message);
  const auto queues = kai::ExplainQueues(session.snap());
  if (a.output == "json") {
    PrintQueuesJson(queues);
  } else {
    PrintQueuesTable(queues);
  }
  return 0;
}

class QueuesCommand final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand("queues", "print the queue tree and explain fair shares");
    AddFilesOption(c, a_.files);
    AddClientFlags(c, a_.kubeconfig, a_.context, "read a live cluster instead of files");
    c->add_option("--shard", a_.shard, "SchedulingShard whose node pool and config to read");
    c->add_option("--node-pool-label-key", a_.node_pool_key, "the node-pool label");
    c->add_option("--now", a_.now, "the clock, RFC 3339 (default: wall clock)");
    c->add_option("--usage", a_.usage_file, "time-based fair share history (YAML)");
    c->add_option("--usage-dir", a_.usage_dir,
                  "the usage history kai scheduler --usage-dir records");
    c->add_option("-o,--output", a_.output, "table or json")
        ->check(CLI::IsMember({"table", "json"}));
    return c;
  }
  int Run() override { return RunQueues(a_); }

 private:
  QueuesArgs a_;
};

}  // namespace

std::unique_ptr<Command> MakeQueuesCommand() { return std::make_unique<QueuesCommand>(); }

}  // namespace kai::cmd
