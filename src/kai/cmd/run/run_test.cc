#include "kai/cmd/run/run.h"

#include <gtest/gtest.h>

#include <atomic>
#include <sstream>
#include <thread>

#include "kai/kube/runtime/manager.h"

namespace kai::run {
namespace {

k8s::ApiClient Client() { return k8s::ApiClient(k8s::ClusterConfig{}); }

// A component that logs until stopped (or exits with `rc` after `lines` lines).
struct Fake {
  std::atomic<bool> stop{false};
  Component Make(const std::string& name, int lines, int rc) {
    return {name, [this, name, lines, rc](const k8s::ApiClient&, std::ostream& log,
                                          const std::atomic<bool>& stopped) {
              for (int i = 0; !stopped; ++i) {
                if (lines > 0 && i == lines) return rc;
                log << name << " line " << i << " of a component's log\n";
                if (i > 2000) std::this_thread::sleep_for(std::chrono::milliseconds(1));
              }
              stop = true;
              return 0;
            }};
  }
};

TEST(Run, AComponentThatFailsStopsTheOthersAndGivesItsStatus) {
  Fake a, b;
  std::stringstream err;
  const int rc = RunComponents({a.Make("a", 0, 0), b.Make("b", 50, 3)}, Client(), err);
  EXPECT_EQ(rc, 3);
  EXPECT_TRUE(a.stop);
  EXPECT_NE(err.str().find("kai run: error: b exited with status 3; stopped the others\n"),
            std::string::npos);
}

TEST(Run, LinesOfDifferentComponentsNeverInterleave) {
  Fake a, b;
  std::stringstream err;
  RunComponents({a.Make("a", 3000, 0), b.Make("b", 3000, 0)}, Client(), err);
  std::string line;
  int lines = 0;
  while (std::getline(err, line)) {
    ++lines;
    const bool whole = line.starts_with("a line ") || line.starts_with("b line ");
    ASSERT_TRUE(whole && line.ends_with(" of a component's log")) << line;
  }
  EXPECT_GE(lines, 3000);
}

TEST(Run, AProcessStopStopsEveryComponent) {
  Fake a, b;
  std::stringstream err;
  std::thread stopper([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    runtime::RequestProcessStop();
  });
  EXPECT_EQ(RunComponents({a.Make("a", 0, 0), b.Make("b", 0, 0)}, Client(), err), 0);
  stopper.join();
  EXPECT_TRUE(a.stop && b.stop);
}

TEST(Run, OffsetAddressGivesTheNextPorts) {
  EXPECT_EQ(OffsetAddress(":8080", 2), ":8082");
  EXPECT_EQ(OffsetAddress("127.0.0.1:9000", 0), "127.0.0.1:9000");
  EXPECT_EQ(OffsetAddress("", 3), "");
  EXPECT_EQ(OffsetAddress("localhost", 1), "");
  EXPECT_EQ(OffsetAddress(":65535", 1), "");
  EXPECT_EQ(OffsetAddress(":80x", 1), "");
}

}  // namespace
}  // namespace kai::run
