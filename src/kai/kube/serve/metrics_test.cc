#include "kai/kube/serve/metrics.h"

#include <gtest/gtest.h>

#include "kai/kube/serve/controller_metrics.h"

namespace kai::serve {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

TEST(MetricsRegistry, ServesTheProcessMetricsReadFromProc) {
  MetricsRegistry r;
  const std::string text = r.Text();
  for (const char* name : {"process_cpu_seconds_total", "process_resident_memory_bytes",
                           "process_virtual_memory_bytes", "process_open_fds", "process_max_fds",
                           "process_start_time_seconds"}) {
    EXPECT_TRUE(Has(text, std::string("# TYPE ") + name)) << name << "\n" << text;
  }
  double rss = 0;
  for (const auto& f : ProcessMetrics()) {
    if (f.name == "process_resident_memory_bytes") rss = f.metric.at(0).gauge.value;
  }
  EXPECT_GT(rss, 1e6);
}

TEST(MetricsRegistry, HistogramsAreRealHistograms) {
  MetricsRegistry r;
  auto& h = prometheus::BuildHistogram().Name("x_ms").Help("h").Register(r.registry());
  h.Add({}, ExponentialBuckets(5, 2, 3)).Observe(7);
  const std::string text = r.Text();
  EXPECT_TRUE(Has(text, "# TYPE x_ms histogram")) << text;
  EXPECT_TRUE(Has(text, "x_ms_bucket{le=\"5\"} 0")) << text;
  EXPECT_TRUE(Has(text, "x_ms_bucket{le=\"10\"} 1")) << text;
  EXPECT_TRUE(Has(text, "x_ms_bucket{le=\"20\"} 1")) << text;
  EXPECT_TRUE(Has(text, "x_ms_count 1")) << text;
  EXPECT_TRUE(Has(text, "x_ms_sum 7")) << text;
}

TEST(MetricsRegistry, SourcesAndRefreshesRunAtEachScrape) {
  MetricsRegistry r;
  int scrapes = 0;
  auto& g = prometheus::BuildGauge().Name("g").Help("h").Register(r.registry()).Add({});
  r.OnScrape([&] { g.Set(++scrapes); });
  r.AddSource([&] {
    return std::vector<prometheus::MetricFamily>{
        CounterFamily("c_total", "h", {{{{"b", "2"}, {"a", "1"}}, 3}})};
  });
  EXPECT_TRUE(Has(r.Text(), "g 1\n"));
  const std::string text = r.Text();
  EXPECT_TRUE(Has(text, "g 2\n")) << text;
  EXPECT_TRUE(Has(text, "c_total{a=\"1\",b=\"2\"} 3\n")) << text;  // labels by name
}

TEST(GaugeSet, ReplaceDropsTheSeriesThatAreGone) {
  MetricsRegistry r;
  GaugeSet set(r.registry(), "q_gauge", "h");
  set.Replace({{{{"queue", "a"}}, 1}, {{{"queue", "b"}}, 2}});
  set.Replace({{{{"queue", "b"}}, 3}});
  std::string text = r.Text();
  EXPECT_FALSE(Has(text, "queue=\"a\"")) << text;
  EXPECT_TRUE(Has(text, "q_gauge{queue=\"b\"} 3")) << text;
  set.Clear();
  EXPECT_FALSE(Has(r.Text(), "q_gauge{"));
}

TEST(Prefixed, JoinsAsClientGolang) {
  EXPECT_EQ(Prefixed("kai", "x"), "kai_x");
  EXPECT_EQ(Prefixed("", "x"), "x");
}

TEST(WorkQueueMetrics, CountsAddsRetriesAndTimesTheWork) {
  MetricsRegistry r;
  WorkQueueMetrics q(r, "pod");
  q.Added("a", 1);
  q.Added("b", 2);
  q.Retried();
  q.Taken("a", 1);
  std::string text = r.Text();
  EXPECT_TRUE(Has(text, "workqueue_adds_total{name=\"pod\"} 2")) << text;
  EXPECT_TRUE(Has(text, "workqueue_retries_total{name=\"pod\"} 1")) << text;
  EXPECT_TRUE(Has(text, "workqueue_depth{name=\"pod\"} 1")) << text;
  EXPECT_TRUE(Has(text, "workqueue_queue_duration_seconds_count{name=\"pod\"} 1")) << text;
  EXPECT_TRUE(Has(text, "workqueue_longest_running_processor_seconds{name=\"pod\"}")) << text;
  q.Done("a");
  text = r.Text();
  EXPECT_TRUE(Has(text, "workqueue_work_duration_seconds_count{name=\"pod\"} 1")) << text;
  EXPECT_TRUE(Has(text, "workqueue_unfinished_work_seconds{name=\"pod\"} 0")) << text;
}

TEST(ReconcileMetrics, CountsByResultAndErrors) {
  MetricsRegistry r;
  ReconcileMetrics m(r, "queue", 2);
  m.Observe(std::chrono::milliseconds(3), ReconcileMetrics::Result::kSuccess);
  m.Observe(std::chrono::milliseconds(3), ReconcileMetrics::Result::kError);
  const std::string text = r.Text();
  EXPECT_TRUE(
      Has(text, "controller_runtime_reconcile_total{controller=\"queue\",result=\"success\"} 1"))
      << text;
  EXPECT_TRUE(
      Has(text, "controller_runtime_reconcile_total{controller=\"queue\",result=\"error\"} 1"))
      << text;
  EXPECT_TRUE(Has(text, "controller_runtime_reconcile_errors_total{controller=\"queue\"} 1"));
  EXPECT_TRUE(Has(text, "controller_runtime_reconcile_time_seconds_count{controller=\"queue\"} 2"));
  EXPECT_TRUE(Has(text, "controller_runtime_max_concurrent_reconciles{controller=\"queue\"} 2"));
}

}  // namespace
}  // namespace kai::serve
