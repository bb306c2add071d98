#include "kai/scheduler/server.h"

#include <set>

#include <httplib.h>

#include <array>
#include <charconv>
#include <sstream>
#include <thread>

#include "kai/k8s/encode.h"

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

std::optional<std::pair<std::string, int>> ParseAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  std::string host = address.substr(0, colon);
  if (host.empty()) host = "0.0.0.0";
  int port = 0;
  const std::string p = address.substr(colon + 1);
  auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
  if (ec != std::errc() || ptr != p.data() + p.size() || port < 0 || port > 65535) {
    return std::nullopt;
  }
  return std::make_pair(host, port);
}

struct Servers::Impl {
  ServerHooks hooks;
  std::vector<std::unique_ptr<httplib::Server>> servers;
  std::vector<std::thread> threads;

  void Routes(httplib::Server& s, bool metrics, bool health) {
    if (metrics) {
      s.Get("/metrics", [this](const httplib::Request&, httplib::Response& r) {
        r.set_content(hooks.metrics(), "text/plain; version=0.0.4");
      });
    }
    if (health) {
      s.Get("/healthz", [](const httplib::Request&, httplib::Response& r) {
        r.set_content("ok\n", "text/plain");
      });
      s.Get("/readyz", [this](const httplib::Request&, httplib::Response& r) {
        const bool ok = hooks.ready();
        r.status = ok ? 200 : 503;
        r.set_content(ok ? "ok\n" : "caches not synced\n", "text/plain");
      });
      s.Get("/debug/snapshot", [this](const httplib::Request&, httplib::Response& r) {
        r.set_content(hooks.snapshot(), "application/yaml");
      });
    }
  }
};

Servers::Servers(ServerHooks hooks) : impl_(std::make_unique<Impl>()) {
  impl_->hooks = std::move(hooks);
}

Servers::~Servers() { Stop(); }

Status Servers::Listen(const std::string& metrics_address, const std::string& health_address) {
  std::vector<std::tuple<std::string, bool, bool>> plan;
  if (!metrics_address.empty() && metrics_address == health_address) {
    plan.emplace_back(metrics_address, true, true);
  } else {
    if (!metrics_address.empty()) plan.emplace_back(metrics_address, true, false);
    if (!health_address.empty()) plan.emplace_back(health_address, false, true);
  }
  for (const auto& [address, metrics, health] : plan) {
    auto hp = ParseAddress(address);
    if (!hp) return Error{"bad address \"" + address + "\" (expected HOST:PORT)"};
    auto s = std::make_unique<httplib::Server>();
    impl_->Routes(*s, metrics, health);
    if (!s->bind_to_port(hp->first.c_str(), hp->second)) {
      return Error{"cannot listen on " + address};
    }
    httplib::Server* raw = s.get();
    impl_->threads.emplace_back([raw] { raw->listen_after_bind(); });
    impl_->servers.push_back(std::move(s));
  }
  return Ok();
}

void Servers::Stop() {
  for (auto& s : impl_->servers) s->stop();
  for (auto& t : impl_->threads) {
    if (t.joinable()) t.join();
  }
  impl_->servers.clear();
  impl_->threads.clear();
}

std::string DumpWorld(const ClusterState& world) { return EncodeManifests(world); }

}  // namespace kai::scheduler
