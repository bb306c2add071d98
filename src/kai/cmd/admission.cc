// `kai admission`: the admission webhooks (GPU-sharing pods, Queues, PodGroups), or with
// --print-webhook-config the configurations that point the API server at them.
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "kai/cmd/command.h"
#include "kai/cmd/common.h"
#include "kai/cmd/flags.h"
#include "kai/core/admission/review.h"
#include "kai/daemons/admission/server.h"
#include "kai/kube/runtime/manager.h"

namespace kai::cmd {
namespace {

class AdmissionCommand final : public DaemonCommand {
 public:
  // GPU sharing on, as KAI's operator deploys it.
  AdmissionCommand() : DaemonCommand("admission") {}

  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "admission", "the admission webhooks: GPU-sharing pods, Queues and PodGroups (KAI's)");
    c->add_option("--bind-address", o_.address,
                  "HOST:PORT to serve HTTPS on (default 0.0.0.0:9443)");
    c->add_option("--metrics-bind-address", o_.metrics_address,
                  "HOST:PORT for a plain HTTP /metrics (\"\": off, the default; /metrics is also "
                  "served on the HTTPS address)");
    c->add_option("--webhook-addr", webhook_port_,
                  "KAI's: serve HTTPS on 0.0.0.0:PORT (as --bind-address)")
        ->check(CLI::Range(1, 65535));
    c->add_option("--health-probe-bind-address", o_.health_address,
                  "HOST:PORT for a plain HTTP /healthz, /readyz (\"\": off, the default)");
    c->add_option("--tls-cert-file", o_.cert_file,
                  "PEM certificate chain, read again on a change (default " +
                      std::string(kDefaultCertDir) + "/tls.crt, controller-runtime's)");
    c->add_option("--tls-key-file", o_.key_file,
                  "PEM private key of the certificate (default " + std::string(kDefaultCertDir) +
                      "/tls.key)");
    AddClientFlags(c, o_.kubeconfig, o_.context);
    AddRateFlags(c, o_.qps, o_.burst);
    c->add_option("--scheduler-name", o_.admission.scheduler_name,
                  "pods of this scheduler are admitted (default kai-scheduler)");
    c->add_flag("--gpu-sharing-enabled,!--no-gpu-sharing-enabled", o_.admission.gpu_sharing_enabled,
                "accept GPU fractions and gpu-memory (default off, as KAI)");
    c->add_flag("--block-nvidia-visible-devices", o_.admission.block_nvidia_visible_devices,
                "containers that request no GPU get NVIDIA_VISIBLE_DEVICES=void");
    c->add_flag("--hami-core-enabled", o_.admission.hami_core_enabled,
                "GPU-sharing containers read CUDA_DEVICE_MEMORY_LIMIT (HAMi-core's limit) from "
                "the key the binder's hamicore plugin writes (default off, as KAI)");
    c->add_option(
        "--gpu-fraction-runtime-class-name", o_.admission.gpu_fraction_runtime_class_name,
        "runtime class for GPU-sharing pods that name none (default nvidia; \"\" = none)");
    c->add_option("--nvfractions-devices-writer", o_.admission.nvfractions_devices_writer,
                  "the only user who may change a pod's nvidia.com/container.<c>.gpus.devices "
                  "annotation (default system:serviceaccount:kai-scheduler:kai-binder)");
    c->add_option("--limit-descendents-over-subscription",
                  o_.admission.descendants_over_subscription,
                  "children's quotas above their parent's: none, warning or block (default none)")
        ->transform(CLI::CheckedTransformer(
            std::map<std::string, admission::OverSubscription>{
                {"none", admission::OverSubscription::kNone},
                {"warning", admission::OverSubscription::kWarning},
                {"block", admission::OverSubscription::kBlock}},
            CLI::ignore_case));
    c->add_flag_callback(
        "--queue-quota-warnings",
        [this] {
          o_.admission.descendants_over_subscription = admission::OverSubscription::kWarning;
        },
        "the same as --limit-descendents-over-subscription=warning");
    AddKaiOnlyFlags(c);
    c->add_flag("--print-webhook-config", print_config_,
                "print the webhook configurations for --url and --ca-bundle, then exit");
    c->add_option("--ca-bundle", ca_bundle_, "PEM file of the CA that signed the certificate");
    c->add_option("--url", url_, "https://HOST:PORT the API server reaches the webhooks at");
    log_.Add(c, 0, false);
    return c;
  }

  std::optional<std::string> Apply() override {
    if (webhook_port_ != 0) o_.address = "0.0.0.0:" + std::to_string(webhook_port_);
    if (o_.cert_file.empty()) o_.cert_file = std::string(kDefaultCertDir) + "/tls.crt";
    if (o_.key_file.empty()) o_.key_file = std::string(kDefaultCertDir) + "/tls.key";
    return std::nullopt;
  }
  int RunComponent(DaemonLog& log) override {
    if (print_config_) return PrintWebhookConfig();
    return webhook::RunAdmission(o_, log.stream());
  }

 private:
  // Where controller-runtime's webhook server (KAI's admission) reads its certificate.
  static constexpr const char* kDefaultCertDir = "/tmp/k8s-webhook-server/serving-certs";

  // KAI's admission flags kai takes only for compatibility.
  void AddKaiOnlyFlags(CLI::App* c) {
    kai_.Inert(c, "rate-limiter-base-delay", "kai's admission has no reconcile queue to delay");
    kai_.Inert(c, "rate-limiter-max-delay", "kai's admission has no reconcile queue to delay");
    kai_.Inert(c, "leader-elect", "kai's admission only answers webhooks, which every replica does",
               true);
    kai_.Inert(c, "fake-gpu-nodes",
               "kai's admission checks GPU-sharing pods the same on real and fake GPU nodes", true);
    kai_.Inert(c, "gpu-pod-runtime-class-name",
               "kai sets a runtime class on GPU-sharing pods only "
               "(--gpu-fraction-runtime-class-name)");
  }

  int webhook_port_ = 0;
  int PrintWebhookConfig() const {
    if (ca_bundle_.empty() || url_.empty()) {
      return Fail("--print-webhook-config: needs --ca-bundle FILE and --url https://HOST:PORT");
    }
    if (url_.rfind("https://", 0) != 0) return Fail("--url: must start with https://");
    std::ifstream in(ca_bundle_, std::ios::binary);
    std::stringstream pem;
    pem << in.rdbuf();
    if (!in || pem.str().find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
      return Fail("--ca-bundle " + ca_bundle_ + ": no PEM certificate in it");
    }
    auto config = admission::WebhookConfigYaml(url_, pem.str(), o_.admission.scheduler_name);
    if (!config.ok()) return Fail(config.error().message);
    std::cout << *config;
    return 0;
  }

  webhook::ServerOptions o_;
  bool print_config_ = false;
  std::string ca_bundle_, url_;
};

}  // namespace

std::unique_ptr<Command> MakeAdmissionCommand() { return std::make_unique<AdmissionCommand>(); }

}  // namespace kai::cmd
