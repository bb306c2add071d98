// `kai binder`: binds pods as their BindRequests ask (KAI's binder).
#include <CLI/CLI.hpp>

#include <iostream>

#include "kai/cmd/command.h"
#include "kai/cmd/common.h"
#include "kai/cmd/flags.h"
#include "kai/daemons/binder/controller.h"
#include "kai/kube/runtime/manager.h"

namespace kai::cmd {
namespace {

class BinderCommand final : public DaemonCommand {
 public:
  BinderCommand() : DaemonCommand("binder") {}

  CLI::App* Add(CLI::App& app) override {
    CLI::App* c =
        app.add_subcommand("binder", "bind pods as their BindRequests ask (KAI's binder)");
    auto& r = o_.reservation;
    AddClientFlags(c, o_.kubeconfig, o_.context);
    AddRateFlags(c, o_.qps, o_.burst);
    kai_.Inert(c, "scheduler-name",
               "kai's binder binds every BindRequest; its pods' schedulerName is not checked");
    c->add_option("--max-concurrent,--max-concurrent-reconciles", o_.max_concurrent,
                  "binds in flight at once (default 10)")
        ->check(CLI::Range(1, 1000));
    c->add_option("--rate-limiter-base-delay", base_delay_, "seconds (default 1)")
        ->check(CLI::Range(1, 3600));
    c->add_option("--rate-limiter-max-delay", max_delay_, "seconds (default 60)")
        ->check(CLI::Range(1, 86400));
    c->add_option(
        "--plugins", o_.plugins_json,
        "plugin overrides, JSON: {\"gpusharing\":{\"arguments\":{\"cdiEnabled\":\"true\"}}}");
    c->add_option("--resource-reservation-namespace", r.ns, "namespace of GPU reservation pods");
    c->add_option("--resource-reservation-service-account", r.service_account,
                  "their service account");
    c->add_option("--resource-reservation-pod-image", r.image,
                  "their image (runs `kai resource-reservation`)");
    c->add_option("--resource-reservation-app-label", r.app_label, "their app label value");
    c->add_option(
        "--resource-reservation-allocation-timeout", reservation_timeout_,
        "how long a reservation pod may take to report its GPU (default 40s; a bare number: "
        "seconds, as KAI's)");
    c->add_option("--resource-reservation-pod-resources", reservation_pod_.resources,
                  "their requests and limits besides the GPU, a JSON ResourceRequirements "
                  "(default {\"requests\":{\"cpu\":\"10m\",\"memory\":\"64Mi\"},"
                  "\"limits\":{\"cpu\":\"100m\",\"memory\":\"256Mi\"}})");
    c->add_option(
        "--resource-reservation-pod-security-context", reservation_pod_.pod_security_context,
        "their pod securityContext, JSON (default: non-root 65532, RuntimeDefault seccomp)");
    c->add_option("--resource-reservation-container-security-context",
                  reservation_pod_.container_security_context,
                  "their container securityContext, JSON (default: restricted: non-root, no "
                  "privilege escalation, every capability dropped, RuntimeDefault seccomp)");
    c->add_option("--scale-adjust-namespace", r.scale_adjust_ns, "namespace of scaling pods");
    c->add_option("--runtime-class-name", r.runtime_class, "runtime class of reservation pods");
    c->add_flag("--fake-gpu-nodes", r.fake_gpu_nodes,
                "reservation pods only sleep (test clusters)");
    c->add_option("--reservation-resync-period", resync_period_,
                  "how often every GPU group's reservation is checked (default 60s)");
    c->add_option("--status-write-deferral", status_deferral_,
                  "how long conditions and events may wait behind a burst of binds (default 10s)");
    leader_.Add(c,
                {&o_.leader_elect, &o_.leader_elect_namespace, &o_.leader_elect_id, &o_.identity,
                 &o_.lease_duration, &o_.renew_deadline, &o_.retry_period},
                "elect a leader on a Lease; only the leader binds");
    AddServerFlags(c, o_.metrics_address, o_.health_address);
    log_.Add(c, 0, false);
    return c;
  }

  int RunComponent(DaemonLog& log) override { return binder::RunBinder(o_, log.stream()); }

 private:
  std::optional<std::string> Apply() override {
    if (auto e =
            ParseSecondsOrDurationFlag("--resource-reservation-allocation-timeout",
                                       reservation_timeout_, o_.reservation.allocation_timeout)) {
      return e;
    }
    if (auto e =
            ParseDurationFlag("--reservation-resync-period", resync_period_, o_.resync_period)) {
      return e;
    }
    if (auto e = leader_.Apply()) return e;
    if (status_deferral_ == "0" || status_deferral_ == "0s") {
      o_.status_write_deferral = std::chrono::milliseconds(0);
    } else if (auto e = ParseDurationFlag("--status-write-deferral", status_deferral_,
                                          o_.status_write_deferral)) {
      return e;
    }
    if (max_delay_ < base_delay_) {
      return "--rate-limiter-max-delay: must not be below --rate-limiter-base-delay";
    }
    if (auto s = binder::ApplyReservationPodFlags(reservation_pod_, o_.reservation.shape);
        !s.ok()) {
      return s.error().message;
    }
    o_.rate_limit.base = std::chrono::seconds(base_delay_);
    o_.rate_limit.max = std::chrono::seconds(max_delay_);
    return std::nullopt;
  }

  binder::BinderOptions o_;
  std::string reservation_timeout_, resync_period_, status_deferral_;
  binder::ReservationPodFlags reservation_pod_;
  int base_delay_ = 1, max_delay_ = 60;
  LeaderFlags leader_;
};

}  // namespace

std::unique_ptr<Command> MakeBinderCommand() { return std::make_unique<BinderCommand>(); }

}  // namespace kai::cmd
