#include "kai/daemons/scheduler/usage_recorder.h"

#include <atomic>

#include "kai/core/sim/simulator.h"
#include "kai/kube/client/api_client.h"
#include "kai/kube/client/http.h"
#include "kai/kube/io/usage_dir.h"

namespace kai::scheduler {

using usage::QueueUsage;
using UsageMap = std::map<std::string, QueueUsage>;

// Reads the usage from Prometheus every fetchInterval on its own thread, as KAI's usage lister
// does; the cycles take the latest good answer.
class PrometheusUsage {
 public:
  PrometheusUsage(const std::string& url, const usage::UsageDbConfig& c,
                  std::function<void(const std::string&)> log, std::function<void(double)> on_fetch)
      : config_(c),
        log_(std::move(log)),
        on_fetch_(std::move(on_fetch)),
        http_(k8s::ClusterConfig{.server = url}),
        url_(url) {}
  ~PrometheusUsage() { Stop(); }

  void Start() {
    thread_ = std::thread([this] { Run(); });
  }
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  // The latest answer; none before the first. Data older than the staleness period is still
  // used, with a warning (once per stale spell).
  std::optional<UsageMap> Latest() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!latest_) return std::nullopt;
    const auto age = std::chrono::steady_clock::now() - fetched_at_;
    if (age > std::chrono::seconds(config_.staleness_seconds) && !warned_stale_) {
      warned_stale_ = true;
      log_("usage from " + url_ + " is stale (last good answer " +
           std::to_string(std::chrono::duration_cast<std::chrono::seconds>(age).count()) +
           " s ago); using it until a fetch succeeds");
    }
    return latest_;
  }
  int64_t errors() const { return errors_; }

  // Waits for the first fetch to end (KAI's scheduler waits for its first usage data), at most
  // `timeout`.
  void WaitForFirstFetch(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    wake_.wait_for(lock, timeout, [this] { return fetches_ > 0 || stop_; });
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      lock.unlock();
      const auto started = std::chrono::steady_clock::now();
      auto got = Fetch(WallClockSeconds());
      if (on_fetch_) {
        on_fetch_(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                .count());
      }
      lock.lock();
      if (got.ok()) {
        latest_ = std::move(got.value());
        fetched_at_ = std::chrono::steady_clock::now();
        warned_stale_ = false;
      } else {
        ++errors_;
        log_("usage from " + url_ + ": " + got.error().message);
      }
      ++fetches_;
      wake_.notify_all();
      wake_.wait_for(lock, std::chrono::seconds(config_.fetch_interval_seconds),
                     [this] { return stop_; });
    }
  }

  Result<std::vector<usage::Sample>> Query(const std::string& query, UnixSeconds now) const {
    k8s::HttpRequest r;
    r.path = "/api/v1/query?query=" + k8s::UrlEscape(query) + "&time=" + std::to_string(now);
    r.timeout = std::chrono::milliseconds(config_.query_timeout_millis);
    const k8s::HttpResponse a = http_.Do(r);
    if (a.status == 0) return Error{query + ": " + a.transport_error};
    auto samples = usage::ParseVectorAnswer(a.body);
    if (!samples.ok())
      return Error{query + ": HTTP " + std::to_string(a.status) + ": " + samples.error().message};
    return samples;
  }

  // Per resource: the queues' decayed allocation over the decayed capacity (KAI's division).
  Result<UsageMap> Fetch(UnixSeconds now) const {
    UsageMap out;
    for (size_t i = 0; i < 3; ++i) {
      auto cap = Query(usage::SlidingWindowQuery(config_, config_.capacity_metrics[i], now), now);
      if (!cap.ok()) return cap.error();
      if (cap->empty()) return Error{"no data for " + config_.capacity_metrics[i]};
      const double capacity = cap->front().value;
      auto used =
          Query(usage::SlidingWindowQuery(config_, config_.allocation_metrics[i], now), now);
      if (!used.ok()) return used.error();
      for (const usage::Sample& s : *used) out[s.queue][i] = capacity > 0 ? s.value / capacity : 0;
    }
    return out;
  }

  const usage::UsageDbConfig config_;
  const std::function<void(const std::string&)> log_;
  const std::function<void(double)> on_fetch_;
  const k8s::HttpClient http_;
  const std::string url_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
  std::optional<UsageMap> latest_;
  std::chrono::steady_clock::time_point fetched_at_{};
  bool warned_stale_ = false;
  int64_t fetches_ = 0;
  std::atomic<int64_t> errors_{0};
};

namespace {

// The Prometheus to read: the flag, else the shard's (clientType prometheus). "" = none.
Result<std::string> PrometheusUrl(const UsageOptions& o,
                                  const std::optional<usage::UsageDbConfig>& c,
                                  const std::string& where) {
  if (!o.prometheus_url.empty()) return o.prometheus_url;
  if (!c || !o.usage_dir.empty()) return std::string();  // --usage-dir: the embedded store
  if (c->client_type != "prometheus") {
    return Error{where + ": spec.usageDBConfig.clientType: \"" + c->client_type +
                 "\" is not supported (kai reads \"prometheus\", or its own store with "
                 "--usage-dir)"};
  }
  std::string url = c->connection_string;
  if (!c->connection_string_env_var.empty() && o.env) {
    url = o.env(c->connection_string_env_var).value_or("");
  }
  if (url.empty()) {
    return Error{where + ": spec.usageDBConfig: connectionString (or connectionStringEnvVar) " +
                 "is needed for clientType prometheus"};
  }
  return url;
}

Resources Capacity(const ClusterState& world) {
  Resources sum;
  for (const NodeObject& n : world.nodes) {
    sum.milli_cpu += n.capacity.milli_cpu;
    sum.memory += n.capacity.memory;
    sum.milli_gpu += n.capacity.milli_gpu;
  }
  return sum;
}

}  // namespace

UsageRecorder::UsageRecorder(const UsageOptions& o, std::optional<usage::UsageDbConfig> config)
    : o_(o), config_(config.value_or(usage::UsageDbConfig{})) {}

UsageRecorder::~UsageRecorder() = default;

void UsageRecorder::Log(const std::string& line) const {
  if (o_.log) o_.log(line);
}

Result<std::unique_ptr<UsageRecorder>> UsageRecorder::Open(const UsageOptions& o,
                                                           const doc::Node& spec,
                                                           const std::string& shard_source,
                                                           UnixSeconds now) {
  auto config = usage::ParseUsageDbConfig(spec, shard_source);
  if (!config.ok()) return config.error();
  auto url = PrometheusUrl(o, *config, shard_source);
  if (!url.ok()) return url.error();
  if (o.usage_dir.empty() && url->empty() && !*config) return std::unique_ptr<UsageRecorder>();
  std::unique_ptr<UsageRecorder> r(new UsageRecorder(o, *config));
  if (!o.usage_dir.empty()) {
    r->dir_ = std::make_unique<usage::UsageDir>(o.usage_dir);
    auto loaded = r->dir_->Load(now);
    if (!loaded.ok()) return loaded.error();
    if (loaded->removed_temp)
      r->Log("removed " + r->dir_->path() + ".tmp, left by an interrupted save");
    if (!loaded->corrupt.empty()) {
      ++r->corrupt_files_;
      r->Log("usage history " + loaded->corrupt + "; set aside as " + loaded->set_aside_as +
             ", starting an empty history");
    }
    if (loaded->file) r->history_ = std::move(loaded->file->history);
  }
  if (!url->empty()) {
    r->prometheus_ = std::make_unique<PrometheusUsage>(*url, r->config_, o.log, o.on_fetch_millis);
    r->prometheus_->Start();
    r->prometheus_->WaitForFirstFetch(std::chrono::milliseconds(r->config_.wait_timeout_millis));
  }
  return r;
}

void UsageRecorder::Apply(Snapshot& snap, UnixSeconds now) {
  if (prometheus_) {
    // No answer yet, or none ever: usage 0 (plain fair share), as KAI without usage data.
    if (auto latest = prometheus_->Latest()) sim::ApplyQueueUsage(snap, *latest);
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  sim::ApplyQueueUsage(snap, history_.Usage(now, config_.params));
}

void UsageRecorder::Record(const Snapshot& snap, const ClusterState& world, UnixSeconds now) {
  if (!dir_) return;
  std::map<std::string, Resources> held;
  for (const SnapQueue& q : snap.queues) held[std::string(q.name)] = q.allocated;
  {
    std::lock_guard<std::mutex> lock(mu_);
    history_.Record(now, held, Capacity(world), config_.params.window_seconds);
    dirty_ = true;
  }
  Save(false);
}

void UsageRecorder::Save(bool force) {
  const auto t = std::chrono::steady_clock::now();
  if (!dir_ || !dirty_ || (!force && t - last_save_ < o_.save_interval)) return;
  std::string text;
  {
    std::lock_guard<std::mutex> lock(mu_);
    text = usage::EncodeHistory(history_, config_.params);
    dirty_ = false;
  }
  last_save_ = t;
  const auto err = dir_->Save(text);
  std::lock_guard<std::mutex> lock(mu_);
  if (err) {
    ++save_errors_;
    dirty_ = true;
    Log("usage history: " + err->message);
  } else {
    ++saves_;
  }
}

void UsageRecorder::Close() {
  if (prometheus_) prometheus_->Stop();
  Save(true);
}

std::vector<prometheus::MetricFamily> UsageRecorder::Metrics(const std::string& ns) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto name = [&ns](const char* n) { return serve::Prefixed(ns, n); };
  const auto count = [](int64_t v) { return static_cast<double>(v); };
  return {
      serve::CounterOf(name("usage_history_corrupt_files_total"),
                       "Usage history files that could not be read (kai).", count(corrupt_files_)),
      serve::CounterOf(name("usage_history_saves_total"), "Usage history saves (kai).",
                       count(saves_)),
      serve::CounterOf(name("usage_history_save_errors_total"),
                       "Usage history saves that failed (kai).", count(save_errors_)),
      serve::GaugeOf(name("usage_history_intervals"), "Intervals the usage history holds (kai).",
                     count(static_cast<int64_t>(history_.interval_count()))),
      serve::CounterOf(name("usage_prometheus_errors_total"),
                       "Usage fetches from Prometheus that failed (kai).",
                       count(prometheus_ ? prometheus_->errors() : 0)),
  };
}

}  // namespace kai::scheduler
