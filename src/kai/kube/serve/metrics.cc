#include "kai/kube/serve/metrics.h"

#include <prometheus/text_serializer.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace kai::serve {
namespace {

prometheus::MetricFamily Family(std::string name, std::string help, prometheus::MetricType type,
                                std::vector<Sample> samples) {
  prometheus::MetricFamily f{std::move(name), std::move(help), type, {}};
  for (Sample& s : samples) {
    prometheus::ClientMetric m;
    for (auto& [k, v] : s.labels) m.label.push_back({std::move(k), std::move(v)});
    std::sort(m.label.begin(), m.label.end());  // by name, as the registry's own series
    if (type == prometheus::MetricType::Counter) {
      m.counter.value = s.value;
    } else {
      m.gauge.value = s.value;
    }
    f.metric.push_back(std::move(m));
  }
  return f;
}

std::string ReadFile(const char* path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The fields of /proc/self/stat after the command name (field 3 on), as text.
std::vector<std::string> StatFields() {
  const std::string stat = ReadFile("/proc/self/stat");
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream in(stat.substr(close + 1));
  return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

// The boot time (seconds since the epoch) from /proc/stat's btime line; 0 when unknown.
double BootTime() {
  std::istringstream in(ReadFile("/proc/stat"));
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double t = 0;
      in >> t;
      return t;
    }
  }
  return 0;
}

double OpenFds() {
  std::error_code ec;
  double n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

double MaxFds() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return 0;
  return static_cast<double>(r.rlim_cur);
}

double Field(const std::vector<std::string>& f, size_t stat_field) {
  const size_t i = stat_field - 3;  // StatFields starts at field 3
  return i < f.size() ? std::stod(f[i]) : 0;
}

}  // namespace

MetricsRegistry::MetricsRegistry() : registry_(std::make_shared<prometheus::Registry>()) {}

void MetricsRegistry::AddSource(ScrapeSource source) {
  std::lock_guard<std::mutex> lock(mu_);
  sources_.push_back(std::move(source));
}

void MetricsRegistry::OnScrape(std::function<void()> refresh) {
  std::lock_guard<std::mutex> lock(mu_);
  refreshes_.push_back(std::move(refresh));
}

std::vector<prometheus::MetricFamily> MetricsRegistry::Collect() const {
  std::vector<ScrapeSource> sources;
  std::vector<std::function<void()>> refreshes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sources = sources_;
    refreshes = refreshes_;
  }
  for (const auto& refresh : refreshes) refresh();
  std::vector<prometheus::MetricFamily> out = ProcessMetrics();
  for (auto& f : registry_->Collect()) out.push_back(std::move(f));
  for (const ScrapeSource& s : sources) {
    for (auto& f : s()) out.push_back(std::move(f));
  }
  return out;
}

std::string MetricsRegistry::Text() const { return TextOf(Collect()); }

std::string TextOf(const std::vector<prometheus::MetricFamily>& families) {
  return prometheus::TextSerializer().Serialize(families);
}

std::vector<prometheus::MetricFamily> ProcessMetrics() {
  const std::vector<std::string> f = StatFields();
  if (f.size() < 22) return {};
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  return {
      CounterOf("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                (Field(f, 14) + Field(f, 15)) / tick),
      GaugeOf("process_resident_memory_bytes", "Resident memory size in bytes.",
              Field(f, 24) * page),
      GaugeOf("process_virtual_memory_bytes", "Virtual memory size in bytes.", Field(f, 23)),
      GaugeOf("process_open_fds", "Number of open file descriptors.", OpenFds()),
      GaugeOf("process_max_fds", "Maximum number of open file descriptors.", MaxFds()),
      GaugeOf("process_start_time_seconds",
              "Start time of the process since unix epoch in seconds.",
              BootTime() + Field(f, 22) / tick),
  };
}

prometheus::MetricFamily CounterFamily(std::string name, std::string help,
                                       std::vector<Sample> samples) {
  return Family(std::move(name), std::move(help), prometheus::MetricType::Counter,
                std::move(samples));
}

prometheus::MetricFamily GaugeFamily(std::string name, std::string help,
                                     std::vector<Sample> samples) {
  return Family(std::move(name), std::move(help), prometheus::MetricType::Gauge,
                std::move(samples));
}

prometheus::MetricFamily CounterOf(std::string name, std::string help, double value) {
  return CounterFamily(std::move(name), std::move(help), {Sample{{}, value}});
}

prometheus::MetricFamily GaugeOf(std::string name, std::string help, double value) {
  return GaugeFamily(std::move(name), std::move(help), {Sample{{}, value}});
}

prometheus::Histogram::BucketBoundaries ExponentialBuckets(double start, double factor, int count) {
  prometheus::Histogram::BucketBoundaries b;
  for (double v = start; static_cast<int>(b.size()) < count; v *= factor) b.push_back(v);
  return b;
}

GaugeSet::GaugeSet(prometheus::Registry& registry, const std::string& name, const std::string& help)
    : family_(prometheus::BuildGauge().Name(name).Help(help).Register(registry)) {}

void GaugeSet::Replace(const std::vector<std::pair<prometheus::Labels, double>>& series) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<prometheus::Gauge*> next;
  for (const auto& [labels, value] : series) {
    prometheus::Gauge& g = family_.Add(labels);  // the series already there, if it is
    g.Set(value);
    next.push_back(&g);
  }
  std::sort(next.begin(), next.end());
  for (prometheus::Gauge* g : live_) {
    if (!std::binary_search(next.begin(), next.end(), g)) family_.Remove(g);
  }
  live_ = std::move(next);
}

std::string Prefixed(const std::string& ns, const std::string& name) {
  return ns.empty() ? name : ns + "_" + name;
}

Route MetricsRoute(const MetricsRegistry& metrics) {
  return Get(
      "/metrics",
      [&metrics](const Request&) {
        return Response{200, "text/plain; version=0.0.4", metrics.Text(), {}};
      },
      /*blocking=*/true);
}

}  // namespace kai::serve
