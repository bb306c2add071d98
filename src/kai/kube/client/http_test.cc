#include "kai/kube/client/http.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

namespace kai::k8s {
namespace {

using namespace std::chrono_literals;

// A local server whose answers are larger than the client's limits: one whole answer of 64 KiB,
// and one streamed line of 64 KiB that never ends.
class HttpLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Get("/big", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(64 << 10, 'x'), "application/json");
    });
    server_.Get("/small", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("{}", "application/json");
    });
    server_.Get("/stream", [](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("application/json", [](size_t, httplib::DataSink& sink) {
        sink.write("{\"type\":\"ADDED\"}\n", 17);
        const std::string chunk(4096, 'y');
        for (int i = 0; i < 16 && sink.is_writable(); ++i) sink.write(chunk.data(), chunk.size());
        sink.done();
        return true;
      });
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(1ms);
  }
  void TearDown() override {
    server_.stop();
    thread_.join();
  }
  HttpClient Client(HttpLimits limits) {
    ClusterConfig c;
    c.server = "http://127.0.0.1:" + std::to_string(port_);
    return HttpClient(c, limits);
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

TEST_F(HttpLimitsTest, AnAnswerAboveTheLimitIsStoppedWithAnErrorNamingIt) {
  HttpClient client = Client(HttpLimits{.max_answer_bytes = 16 << 10});
  HttpRequest r;
  r.path = "/big";
  const HttpResponse big = client.Do(r);
  EXPECT_FALSE(big.ok());
  EXPECT_NE(big.transport_error.find("the answer is larger than the limit of 16384 bytes"),
            std::string::npos)
      << big.transport_error;
  EXPECT_LE(big.body.size(), size_t{16} << 10);
  r.path = "/small";
  EXPECT_TRUE(client.Do(r).ok());  // the client goes on serving requests
}

TEST_F(HttpLimitsTest, AStreamedLineAboveTheLimitEndsTheStreamAfterTheLinesBeforeIt) {
  HttpClient client = Client(HttpLimits{.max_line_bytes = 8 << 10});
  HttpRequest r;
  r.path = "/stream";
  std::vector<std::string> lines;
  const std::atomic<bool> stop{false};
  const HttpResponse resp = client.Stream(
      r,
      [&](std::string_view line) {
        lines.emplace_back(line);
        return true;
      },
      stop, 10s);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "{\"type\":\"ADDED\"}");
  EXPECT_NE(
      resp.transport_error.find("a line of the stream is larger than the limit of 8192 bytes"),
      std::string::npos)
      << resp.transport_error;
}

}  // namespace
}  // namespace kai::k8s
