// `kai check-update --before A --after B`: a manifest update checked as admission checks it
// (rules that compare the new objects with the ones they replace, e.g. minMember).
#include <CLI/CLI.hpp>

#include <iostream>

#include "kai/cmd/command.h"
#include "kai/cmd/common.h"
#include "kai/core/k8s/decode.h"
#include "kai/kube/io/manifest_files.h"

namespace kai::cmd {
namespace {

class CheckUpdateCommand final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "check-update", "check manifests that replace others as admission would (e.g. minMember)");
    c->add_option("--before", before_, "the current manifests (file or directory)")->required();
    c->add_option("--after", after_, "the updated manifests (file or directory)")->required();
    return c;
  }

  int Run() override {
    auto before = LoadManifests(before_);
    if (!before.ok()) return Fail(before.error().message);
    auto after = LoadManifests(after_);
    if (!after.ok()) return Fail(after.error().message);
    const Status valid = ValidateWorldUpdate(before.value(), after.value());
    for (const auto& e : ProblemsOf(valid)) std::cerr << "kai: " << e << "\n";
    if (!valid.ok()) return kExitBadInput;
    std::cout << "update accepted\n";
    return 0;
  }

 private:
  std::vector<std::string> before_, after_;
};

}  // namespace

std::unique_ptr<Command> MakeCheckUpdateCommand() { return std::make_unique<CheckUpdateCommand>(); }

}  // namespace kai::cmd
