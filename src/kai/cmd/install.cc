// `kai install --print`: kai's installation as manifests, for `kubectl apply -f -`.
#include <CLI/CLI.hpp>

#include <iostream>

#include "kai/cmd/command.h"
#include "kai/cmd/run/install_command.h"

namespace kai::cmd {
namespace {

class InstallCommand final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "install",
        "print kai's installation (CRDs, RBAC, Deployments, webhooks, priority classes)");
    c->add_flag("--print", print_, "write it to stdout, for `kubectl apply -f -` (required)")
        ->required();
    c->add_option("--image", o_.image, "the kai image the Deployments run (default kai:latest)");
    c->add_option("--tls-dir", o_.tls_dir,
                  "keep the webhooks' CA and certificate here (reused when present; default: a "
                  "new one every time)");
    c->add_flag("--crds,!--no-crds", o_.crds, "include deploy/crds (default on)");
    c->add_flag("--defaults-only", o_.defaults_only,
                "only the default queue tree and SchedulingShard, for once the CRDs serve "
                "(`kai controllers --create-defaults` creates them too)");
    return c;
  }

  int Run() override { return run::PrintInstall(o_, std::cout, std::cerr); }

 private:
  run::InstallCommandOptions o_;
  bool print_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeInstallCommand() { return std::make_unique<InstallCommand>(); }

}  // namespace kai::cmd
