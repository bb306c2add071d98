#include "kai/daemons/controllers/queue_metrics.h"

#include <gtest/gtest.h>

namespace kai::controllersd {
namespace {

TEST(QueueMetricFamilies, KaisNamesAndLabelsPerQueue) {
  controllers::QueueMetrics m;
  m.name = "q";
  m.display_name = "Q";
  m.allocated_memory_bytes = 1073741824;
  const std::string text = serve::TextOf(QueueMetricFamilies({m}, "kai"));
  // Labels by name, as Prometheus' Go client writes them.
  EXPECT_NE(text.find("# TYPE kai_queue_info gauge\nkai_queue_info{queue_display_name=\"Q\","
                      "queue_metadata_name=\"q\",queue_name=\"q\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kai_queue_allocated_memory_bytes{queue_display_name=\"Q\","
                      "queue_metadata_name=\"q\",queue_name=\"q\"} 1073741824\n"),
            std::string::npos)
      << text;
}

TEST(QueueMetricFamilies, NoQueueNoSeriesAndTheNamespacePrefixes) {
  const auto families = QueueMetricFamilies({}, "acme");
  ASSERT_EQ(families.size(), 7u);
  EXPECT_EQ(families[0].name, "acme_queue_info");
  for (const auto& f : families) EXPECT_TRUE(f.metric.empty());
}

}  // namespace
}  // namespace kai::controllersd
