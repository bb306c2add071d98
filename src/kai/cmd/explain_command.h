#pragma once
// `kai explain pod|podgroup NS/NAME`: why a workload is pending (or was evicted) and the smallest
// verified changes that would make it run next cycle (explain/counterfactual.h).
#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace kai::cmd {

struct ExplainArgs {
  std::string kind;    // pod or podgroup
  std::string target;  // NAMESPACE/NAME
  std::vector<std::string> files;
  std::string now, actions, output = "table", usage_file;
  int max_cycles = 48;
  // A live cluster instead of files (read as `kai queues --kubeconfig` reads it).
  std::string kubeconfig, context, shard, node_pool_key = "kai.scheduler/node-pool";
};

CLI::App* AddExplainCommand(CLI::App& app, ExplainArgs& a);

// 0, or 2 with a `kai: ...` line on `err` for bad input.
int RunExplain(const ExplainArgs& a, std::ostream& out, std::ostream& err);

}  // namespace kai::cmd
