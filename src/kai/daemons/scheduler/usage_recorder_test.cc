#include "kai/daemons/scheduler/usage_recorder.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

namespace kai::scheduler {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
constexpr UnixSeconds kT0 = 1735732800;

// Two top-level queues; `a` holds `gpus` milli-GPUs.
Snapshot Queues(int64_t milli_gpu) {
  Snapshot s;
  for (const char* name : {"a", "b"}) {
    SnapQueue q;
    q.name = name;
    s.queues.push_back(q);
    s.root_queues.push_back(static_cast<QueueId>(s.queues.size() - 1));
  }
  s.queues[0].allocated.milli_gpu = milli_gpu;
  return s;
}

ClusterState TenGpus() {
  ClusterState w;
  NodeObject n;
  n.capacity.milli_gpu = 10000;
  w.nodes.push_back(n);
  return w;
}

doc::Document Spec(const std::string& yaml) { return std::move(doc::ParseYaml(yaml).value()); }

class UsageRecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kai-usage-recorder-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  UsageOptions Options() {
    UsageOptions o;
    o.usage_dir = dir_.string();
    o.save_interval = 0ms;
    o.log = [this](const std::string& l) {
      std::lock_guard<std::mutex> lock(mu_);
      log_ += l + "\n";
    };
    return o;
  }
  std::unique_ptr<UsageRecorder> Open(const UsageOptions& o, const std::string& spec = "{}") {
    const doc::Document d = Spec(spec);
    auto r = UsageRecorder::Open(o, d.Roots().at(0), "SchedulingShard s", kT0);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? std::move(r.value()) : nullptr;
  }
  std::string Log() {
    std::lock_guard<std::mutex> lock(mu_);
    return log_;
  }

  fs::path dir_;
  std::mutex mu_;
  std::string log_;
};

TEST_F(UsageRecorderTest, RecordedAllocationBecomesUsageAndSurvivesARestart) {
  auto r =
      Open(Options(), "usageDBConfig: {clientType: prometheus, usageParams: {windowSize: 1h}}");
  for (UnixSeconds t = kT0; t <= kT0 + 600; t += 60) r->Record(Queues(5000), TenGpus(), t);
  Snapshot s = Queues(0);
  r->Apply(s, kT0 + 600);
  EXPECT_DOUBLE_EQ(s.queues[0].usage[2], 0.5);  // half the GPUs for the whole time
  EXPECT_DOUBLE_EQ(s.queues[1].usage[2], 0.0);
  r->Close();
  ASSERT_TRUE(fs::exists(dir_ / "usage-history"));
  auto again =
      Open(Options(), "usageDBConfig: {clientType: prometheus, usageParams: {windowSize: 1h}}");
  Snapshot s2 = Queues(0);
  again->Apply(s2, kT0 + 600);
  EXPECT_DOUBLE_EQ(s2.queues[0].usage[2], 0.5);
  EXPECT_NE(serve::TextOf(again->Metrics("kai")).find("kai_usage_history_intervals 2\n"),
            std::string::npos)
      << serve::TextOf(again->Metrics("kai"));
}

TEST_F(UsageRecorderTest, ACorruptFileIsLoggedCountedAndSetAside) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "usage-history") << "kai-usage-history 1 3 00000000";
  auto r = Open(Options());
  EXPECT_NE(Log().find((dir_ / "usage-history").string() + ": "), std::string::npos) << Log();
  EXPECT_NE(Log().find("set aside as " + (dir_ / "usage-history.corrupt-").string()),
            std::string::npos)
      << Log();
  EXPECT_NE(serve::TextOf(r->Metrics("kai")).find("kai_usage_history_corrupt_files_total 1\n"),
            std::string::npos);
  r->Record(Queues(1000), TenGpus(), kT0);
  r->Close();
  EXPECT_TRUE(fs::exists(dir_ / "usage-history"));  // a new history, beside the old one
}

TEST_F(UsageRecorderTest, NothingAskedForIsNoRecorderAndAnUnknownClientTypeIsRefused) {
  UsageOptions o;
  const doc::Document empty = Spec("{}");
  auto none = UsageRecorder::Open(o, empty.Roots().at(0), "s", kT0);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->get(), nullptr);
  const doc::Document fake = Spec("usageDBConfig: {clientType: fake}");
  auto bad = UsageRecorder::Open(o, fake.Roots().at(0), "SchedulingShard s", kT0);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("spec.usageDBConfig.clientType: \"fake\" is not supported"),
            std::string::npos);
}

// A fake Prometheus: 10 GPUs, 100 cores of capacity; queue a used 5 GPUs' worth.
class FakePrometheus {
 public:
  FakePrometheus() {
    server_.Get("/api/v1/query", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string q = req.get_param_value("query");
      {
        std::lock_guard<std::mutex> lock(mu_);
        queries_.push_back(q);
      }
      std::string result;
      if (q.find("kube_node_status_capacity") != std::string::npos) {
        result = R"({"metric":{},"value":[1,")" +
                 std::string(q.find("nvidia_com_gpu") != std::string::npos ? "10" : "100") +
                 R"("]})";
      } else if (q.find("kai_queue_allocated_gpus") != std::string::npos) {
        result = R"({"metric":{"queue_name":"a"},"value":[1,"5"]})";
      }
      res.set_content(
          R"({"status":"success","data":{"resultType":"vector","result":[)" + result + "]}}",
          "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakePrometheus() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> queries() {
    std::lock_guard<std::mutex> lock(mu_);
    return queries_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> queries_;
};

TEST_F(UsageRecorderTest, PrometheusUsageIsKaisDivisionOfAllocationByCapacity) {
  FakePrometheus prom;
  UsageOptions o = Options();
  o.usage_dir.clear();
  auto r = Open(o, "usageDBConfig: {clientType: prometheus, connectionString: " + prom.url() + "}");
  Snapshot s = Queues(0);
  for (int i = 0; i < 200 && s.queues[0].usage[2] == 0; ++i) {
    std::this_thread::sleep_for(20ms);
    r->Apply(s, kT0);
  }
  EXPECT_DOUBLE_EQ(s.queues[0].usage[2], 0.5);
  EXPECT_DOUBLE_EQ(s.queues[0].usage[0], 0.0);
  r->Close();
  const auto q = prom.queries();
  ASSERT_EQ(q.size(), 6u);  // capacity and allocation of cpu, memory, gpu
  EXPECT_EQ(q[0], "sum_over_time((sum(kube_node_status_capacity{resource=\"cpu\"}))[1w:60s])");
  EXPECT_EQ(q[5], "sum_over_time((kai_queue_allocated_gpus)[1w:60s])");
}

TEST_F(UsageRecorderTest, AnUnreachablePrometheusIsLoggedAndSchedulingGoesOnWithoutUsage) {
  UsageOptions o = Options();
  o.usage_dir.clear();
  o.prometheus_url = "http://127.0.0.1:1";  // nothing listens there
  auto r = Open(o);
  for (int i = 0; i < 200 && Log().empty(); ++i) std::this_thread::sleep_for(20ms);
  Snapshot s = Queues(0);
  r->Apply(s, kT0);
  EXPECT_EQ(s.queues[0].usage[2], 0.0);
  EXPECT_NE(Log().find("usage from http://127.0.0.1:1: "), std::string::npos) << Log();
  EXPECT_NE(serve::TextOf(r->Metrics("kai")).find("kai_usage_prometheus_errors_total 1\n"),
            std::string::npos);
  r->Close();
}

}  // namespace
}  // namespace kai::scheduler
