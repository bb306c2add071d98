#include "kai/kube/runtime/server.h"

#include <algorithm>

#include "kai/kube/serve/http_server.h"

namespace kai::runtime {

struct Servers::Impl {
  ServerHooks hooks;
  std::vector<std::unique_ptr<serve::HttpServer>> servers;

  std::vector<serve::Route> Metrics() const {
    if (!hooks.metrics) return {};
    return {serve::MetricsRoute(*hooks.metrics)};
  }
  // Answered on the io thread: no slow handler or client delays a probe.
  std::vector<serve::Route> Health() const {
    return {serve::Get("/healthz",
                       [](const serve::Request&) {
                         return serve::Response{200, "text/plain", "ok\n", {}};
                       }),
            serve::Get("/readyz", [this](const serve::Request&) {
              const bool ok = hooks.ready();
              return serve::Response{
                  ok ? 200 : 503, "text/plain", ok ? "ok\n" : "caches not synced\n", {}};
            })};
  }
  std::vector<serve::Route> Snapshot() const {
    return {serve::Get(
        "/debug/snapshot",
        [this](const serve::Request&) {
          return serve::Response{200, "application/yaml", hooks.snapshot(), {}};
        },
        /*blocking=*/true)};
  }
};

Servers::Servers(ServerHooks hooks) : impl_(std::make_unique<Impl>()) {
  impl_->hooks = std::move(hooks);
}

Servers::~Servers() { Stop(); }

Status Servers::Listen(const std::string& metrics_address, const std::string& health_address,
                       const std::string& snapshot_address) {
  // Address -> its routes, in the order given (one server per address).
  std::vector<std::pair<std::string, std::vector<serve::Route>>> plan;
  auto add = [&plan](const std::string& address, std::vector<serve::Route> routes) {
    if (address.empty()) return;
    auto it =
        std::find_if(plan.begin(), plan.end(), [&](const auto& p) { return p.first == address; });
    if (it == plan.end()) it = plan.insert(plan.end(), {address, {}});
    for (auto& r : routes) it->second.push_back(std::move(r));
  };
  add(metrics_address, impl_->Metrics());
  add(health_address, impl_->Health());
  if (impl_->hooks.snapshot) add(snapshot_address, impl_->Snapshot());
  std::string failed;
  for (auto& [address, routes] : plan) {
    auto s = std::make_unique<serve::HttpServer>();
    for (auto& r : routes) s->Add(std::move(r));
    if (Status st = s->Listen(address); !st.ok()) {
      failed += (failed.empty() ? "" : "; ") + st.error().message;
      continue;
    }
    impl_->servers.push_back(std::move(s));
  }
  if (!failed.empty()) return Error{failed};
  return Ok();
}

void Servers::Stop() {
  for (auto& s : impl_->servers) s->Stop();
  impl_->servers.clear();
}

}  // namespace kai::runtime
