#include "kai/scheduler/server.h"

#include <algorithm>
#include <array>
#include <set>
#include <sstream>

#include "kai/k8s/encode.h"
#include "kai/serve/http_server.h"

namespace kai::scheduler {

void SchedulerMetrics::ObserveCycle(std::chrono::steady_clock::duration d) {
  std::lock_guard<std::mutex> lock(mu_);
  e2e_ms_ = std::chrono::duration<double, std::milli>(d).count();
  ++cycles_;
}

void SchedulerMetrics::ObserveActions(const std::vector<std::pair<std::string, double>>& millis) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [a, ms] : millis) action_ms_[a] = ms;
}

void SchedulerMetrics::ObserveCommit(const Decisions& d, const CommitResult& r) {
  std::lock_guard<std::mutex> lock(mu_);
  binds_ += r.binds;
  evictions_ += r.evictions;
  write_failures_ += r.failed;
  for (const auto& e : d.evictions) {
    ++evicted_pods_[{e.pod_group.name, e.pod_group.ns, e.pod_group.uid, node_pool_, e.action}];
  }
}

void SchedulerMetrics::ObserveQueues(const Snapshot& snap) {
  std::lock_guard<std::mutex> lock(mu_);
  queues_.clear();
  for (const SnapQueue& q : snap.queues) {
    QueueLine& l = queues_[std::string(q.name)];
    l.fair_gpu = static_cast<double>(q.fair_share.milli_gpu) / 1000.0;
    l.fair_cpu = static_cast<double>(q.fair_share.milli_cpu) / 1000.0;
    l.fair_mem_gb = static_cast<double>(q.fair_share.memory) / 1e9;
    l.use_gpu = static_cast<double>(q.allocated.milli_gpu) / 1000.0;
    l.use_cpu = static_cast<double>(q.allocated.milli_cpu) / 1000.0;
    l.use_mem_gb = static_cast<double>(q.allocated.memory) / 1e9;
  }
}

void SchedulerMetrics::KeepPodGroups(const std::vector<PodGroupObject>& pod_groups) {
  std::lock_guard<std::mutex> lock(mu_);
  if (evicted_pods_.empty()) return;
  // One pass over the world and one over the series (uids are unique).
  std::set<std::string_view> series_uids, live;
  for (const auto& [k, n] : evicted_pods_) series_uids.insert(k[2]);
  for (const PodGroupObject& pg : pod_groups) {
    if (series_uids.count(pg.meta.uid)) live.insert(pg.meta.uid);
  }
  std::erase_if(evicted_pods_, [&](const auto& kv) { return !live.count(kv.first[2]); });
}

void SchedulerMetrics::ObserveShardSettings(const std::vector<std::string>& not_applied_fields) {
  std::lock_guard<std::mutex> lock(mu_);
  shard_not_applied_ = not_applied_fields;
}

namespace {

std::string Escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

void Header(std::ostringstream& o, const char* name, const char* type, const char* help) {
  o << "# HELP kai_" << name << " " << help << "\n# TYPE kai_" << name << " " << type << "\n";
}

}  // namespace

std::string SchedulerMetrics::Render() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::ostringstream o;
  Header(o, "e2e_scheduling_latency_milliseconds", "gauge", "Duration of the last cycle.");
  o << "kai_e2e_scheduling_latency_milliseconds " << e2e_ms_ << "\n";
  Header(o, "action_scheduling_latency_milliseconds", "gauge", "Duration of each action.");
  for (const auto& [a, ms] : action_ms_) {
    o << "kai_action_scheduling_latency_milliseconds{action=\"" << Escape(a) << "\"} " << ms
      << "\n";
  }
  Header(o, "scheduling_cycles_total", "counter", "Cycles run (kai).");
  o << "kai_scheduling_cycles_total " << cycles_ << "\n";
  Header(o, "bind_requests_created_total", "counter", "BindRequests written (kai).");
  o << "kai_bind_requests_created_total " << binds_ << "\n";
  Header(o, "evictions_total", "counter", "Pods deleted for an eviction (kai).");
  o << "kai_evictions_total " << evictions_ << "\n";
  Header(o, "write_failures_total", "counter", "API writes that failed after retries (kai).");
  o << "kai_write_failures_total " << write_failures_ << "\n";
  Header(o, "pod_group_evicted_pods_total", "counter", "Pods evicted per PodGroup.");
  for (const auto& [k, n] : evicted_pods_) {
    o << "kai_pod_group_evicted_pods_total{podgroup=\"" << Escape(k[0]) << "\",namespace=\""
      << Escape(k[1]) << "\",uid=\"" << Escape(k[2]) << "\",nodepool=\"" << Escape(k[3])
      << "\",action=\"" << Escape(k[4]) << "\"} " << n << "\n";
  }
  Header(o, "shard_settings_not_applied", "gauge",
         "Settings of the SchedulingShard kai did not apply (kai).");
  o << "kai_shard_settings_not_applied " << shard_not_applied_.size() << "\n";
  Header(o, "shard_setting_not_applied", "gauge", "Each such setting, by field (kai).");
  for (const std::string& field : shard_not_applied_)
    o << "kai_shard_setting_not_applied{field=\"" << Escape(field) << "\"} 1\n";
  const std::pair<const char*, double QueueLine::*> queue_metrics[] = {
      {"queue_fair_share_gpu", &QueueLine::fair_gpu},
      {"queue_fair_share_cpu_cores", &QueueLine::fair_cpu},
      {"queue_fair_share_memory_gb", &QueueLine::fair_mem_gb},
      {"queue_gpu_usage", &QueueLine::use_gpu},
      {"queue_cpu_usage", &QueueLine::use_cpu},
      {"queue_memory_usage", &QueueLine::use_mem_gb},
  };
  for (const auto& [name, field] : queue_metrics) {
    Header(o, name, "gauge", "Per queue, from the last cycle.");
    for (const auto& [q, line] : queues_) {
      o << "kai_" << name << "{queue_name=\"" << Escape(q) << "\",queue_metadata_name=\""
        << Escape(q) << "\",queue_display_name=\"" << Escape(q) << "\"} " << line.*field << "\n";
    }
  }
  return o.str();
}

struct Servers::Impl {
  ServerHooks hooks;
  std::vector<std::unique_ptr<serve::HttpServer>> servers;

  std::vector<serve::Route> Metrics() const {
    return {serve::Get(
        "/metrics",
        [this](const serve::Request&) {
          return serve::Response{200, "text/plain; version=0.0.4", hooks.metrics(), {}};
        },
        /*blocking=*/true)};
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

std::string DumpWorld(const ClusterState& world) { return EncodeManifests(world); }

}  // namespace kai::scheduler
