// Reports: percentiles, spans, the table, JSON and the HTML page (self-contained, labelled axes).
#include "kai/core/whatif/output.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <sstream>

#include "kai/core/whatif/html.h"
#include "kai/core/whatif/metrics.h"

namespace kai::whatif {
namespace {

VariantSummary Sample() {
  RunResult r;
  r.until_seconds = 7200;
  r.bucket_seconds = 3600;
  r.capacity_milli_gpu = 4000;
  r.cluster_allocated = {4000LL * 3600, 2000LL * 3600};
  QueueTotals q{.name = "team-a",
                .parent = "",
                .used_milli_gpu_seconds = 6000LL * 3600,
                .fair_milli_gpu_seconds = 8000LL * 3600,
                .evictions_suffered = 2,
                .evictions_caused = 1,
                .allocated = r.cluster_allocated,
                .fair_share = {4000LL * 3600, 4000LL * 3600}};
  r.queues = {q};
  r.jobs = {JobOutcome{.queue = "team-a", .submit = 0, .first_start = 0, .completed = 100},
            JobOutcome{.queue = "team-a", .submit = 10, .first_start = 610},
            JobOutcome{.queue = "team-a", .submit = 20},     // never started
            JobOutcome{.queue = "team-a", .submit = 9000}};  // after the end: left out
  return Summarize("base", r);
}

TEST(WhatIfMetrics, PercentilesAndWaits) {
  EXPECT_EQ(Percentile({}, 95), 0);
  EXPECT_EQ(Percentile({1, 2, 3, 4}, 50), 2);
  EXPECT_EQ(Percentile({1, 2, 3, 4}, 95), 4);
  const VariantSummary v = Sample();
  ASSERT_EQ(v.queues.size(), 1u);
  const QueueSummary& q = v.queues[0];
  EXPECT_EQ(q.jobs, 3);
  EXPECT_EQ(q.started, 2);
  EXPECT_EQ(q.completed, 1);
  EXPECT_EQ(q.waits, (std::vector<int64_t>{0, 600, 7180}));
  EXPECT_EQ(q.wait_p50, 600);
  EXPECT_EQ(q.wait_max, 7180);
  EXPECT_DOUBLE_EQ(MeanUtilisation(v.run), 0.75);
}

TEST(WhatIfOutput, SpansAndTable) {
  EXPECT_EQ(FormatSpan(45), "45s");
  EXPECT_EQ(FormatSpan(3900), "1h5m");
  EXPECT_EQ(FormatSpan(2 * 86400 + 3 * 3600 + 5), "2d3h");
  std::ostringstream out;
  WriteTable({Sample()}, out);
  EXPECT_NE(out.str().find("base     team-a  3     1     1          10m"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("GPU utilisation 75.0% mean over 2h of 4 GPUs"), std::string::npos);
}

TEST(WhatIfOutput, JsonCarriesQueuesAndTimelines) {
  std::ostringstream out;
  WriteJson({Sample()}, out);
  rapidjson::Document d;
  d.Parse(out.str().c_str());
  ASSERT_FALSE(d.HasParseError());
  const auto& v = d["variants"][0];
  EXPECT_EQ(std::string(v["name"].GetString()), "base");
  EXPECT_EQ(v["utilisation"].Size(), 2u);
  EXPECT_DOUBLE_EQ(v["utilisation"][0].GetDouble(), 1.0);
  const auto& q = v["queues"][0];
  EXPECT_EQ(q["waitP95Seconds"].GetInt64(), 7180);
  EXPECT_EQ(q["evictionsSuffered"].GetInt64(), 2);
  EXPECT_DOUBLE_EQ(q["gpuHoursUsed"].GetDouble(), 6.0);
  EXPECT_DOUBLE_EQ(q["fairShareGpus"][1].GetDouble(), 4.0);
}

TEST(WhatIfHtml, SelfContainedWithLabelledCharts) {
  const std::string h = HtmlReport({Sample(), Sample()});
  EXPECT_EQ(h.find("<script"), std::string::npos);
  EXPECT_EQ(h.find("http://"), h.find("http://www.w3.org/2000/svg"));  // only the SVG namespace
  EXPECT_EQ(h.find("src="), std::string::npos);
  size_t charts = 0;
  for (size_t p = h.find("<svg"); p != std::string::npos; p = h.find("<svg", p + 1)) ++charts;
  EXPECT_EQ(charts, 3u);  // utilisation, team-a's allocation, team-a's waits
  EXPECT_NE(h.find("simulated time (minutes)"), std::string::npos);
  EXPECT_NE(h.find("GPUs allocated (%)"), std::string::npos);
  EXPECT_NE(h.find("wait (minutes)"), std::string::npos);
  EXPECT_NE(h.find("Queue team-a: allocation (solid) and fair share (dashed)"), std::string::npos);
}

}  // namespace
}  // namespace kai::whatif
