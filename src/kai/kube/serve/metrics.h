#pragma once
// One Prometheus registry per process (prometheus-cpp), and its text exposition for /metrics.
// Besides the families a component registers, every scrape carries the process_* metrics
// (cpu seconds, resident and virtual memory, open and maximum file descriptors, start time) read
// from /proc at that moment, and the samples of the component's scrape-time sources (values it
// already keeps, such as atomic counters, read when scraped instead of mirrored).
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kai/kube/serve/http_server.h"

namespace kai::serve {

// The families of one scrape-time source (a collector called on every scrape).
using ScrapeSource = std::function<std::vector<prometheus::MetricFamily>()>;

class MetricsRegistry {
 public:
  MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  prometheus::Registry& registry() { return *registry_; }
  // A source whose families join every scrape (kept for the registry's life).
  void AddSource(ScrapeSource source);
  // Called before each scrape collects the registry (to set gauges read at that moment). The
  // callee must outlive the scrapes (declare it after the registry, before the servers).
  void OnScrape(std::function<void()> refresh);
  // The families of this process now: process_*, the registry's, the sources'.
  std::vector<prometheus::MetricFamily> Collect() const;
  // Prometheus text format 0.0.4 of Collect().
  std::string Text() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  mutable std::mutex mu_;
  std::vector<ScrapeSource> sources_;
  std::vector<std::function<void()>> refreshes_;
};

// Prometheus text format 0.0.4 of the families.
std::string TextOf(const std::vector<prometheus::MetricFamily>& families);

// The process_* families, read from /proc/self (empty where /proc is not readable).
std::vector<prometheus::MetricFamily> ProcessMetrics();

// A family of one sample per value, built at scrape time.
struct Sample {
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
};
prometheus::MetricFamily CounterFamily(std::string name, std::string help,
                                       std::vector<Sample> samples);
prometheus::MetricFamily GaugeFamily(std::string name, std::string help,
                                     std::vector<Sample> samples);
// One unlabelled sample.
prometheus::MetricFamily CounterOf(std::string name, std::string help, double value);
prometheus::MetricFamily GaugeOf(std::string name, std::string help, double value);

// A family registered on `r`: builder is prometheus::BuildGauge(), BuildCounter() or
// BuildHistogram().
template <typename Builder>
auto& Register(Builder builder, MetricsRegistry& r, const std::string& name,
               const std::string& help) {
  return builder.Name(name).Help(help).Register(r.registry());
}

// start, start*factor, ... (count bounds), as client_golang's ExponentialBuckets.
prometheus::Histogram::BucketBoundaries ExponentialBuckets(double start, double factor, int count);

// A gauge family whose series are all replaced at once (per-object gauges: a series of an object
// that is gone goes with it).
class GaugeSet {
 public:
  GaugeSet(prometheus::Registry& registry, const std::string& name, const std::string& help);
  void Replace(const std::vector<std::pair<prometheus::Labels, double>>& series);
  void Clear() { Replace({}); }

 private:
  std::mutex mu_;
  prometheus::Family<prometheus::Gauge>& family_;
  std::vector<prometheus::Gauge*> live_;  // sorted
};

// The name with its namespace prefix ("kai" + "_" + name; an empty namespace: the name alone), as
// client_golang joins Namespace and Name.
std::string Prefixed(const std::string& ns, const std::string& name);

// GET /metrics answered with the registry's text (on a worker: rendering may take a while).
Route MetricsRoute(const MetricsRegistry& metrics);

}  // namespace kai::serve
