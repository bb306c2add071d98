// `kai numa-exporter` against the fake API server (fake_apiserver.py) and an in-process fake
// kubelet pod-resources server, with faults injected: a patch the server fails (500, beyond the
// client's own retries) is written again at a later poll, since only a written placement is
// remembered; a pod the API server does not have (404) is skipped without stopping the others;
// a failing drift list is logged and the exporter keeps going.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "fake_server.h"
#include "kai/daemons/numaexporter/exporter.h"
#include "kai/kube/client/api_client.h"
#include "kai/kube/runtime/manager.h"
#include "podresources_v1.grpc.pb.h"

namespace kai::numaexporterd {
namespace {

using namespace std::chrono_literals;
using fakeapi::FakeApiServer;
using fakeapi::StrAt;
namespace fs = std::filesystem;
namespace res = k8s::resources;

constexpr const char* kKey = "kai.scheduler/numa-placement-observed";
constexpr const char* kValue = R"([{"zone":"node-1","amount":{"cpu":"1"}}])";

// Every pod listed holds CPU 4 (NUMA node 1 of the fake sysfs).
class Lister final : public v1::PodResourcesLister::Service {
 public:
  explicit Lister(std::vector<std::string> pods) : pods_(std::move(pods)) {}
  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* out) override {
    for (const std::string& name : pods_) {
      v1::PodResources* p = out->add_pod_resources();
      p->set_name(name);
      p->set_namespace_("team");
      p->add_containers()->add_cpu_ids(4);
    }
    return grpc::Status::OK;
  }

 private:
  std::vector<std::string> pods_;
};

std::string PodJson(const std::string& name) {
  return R"({"op":"create","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","namespace":"team"},"spec":{"nodeName":"n1","containers":[{"name":"c"}]}}})";
}

class NumaExporterFakeApi : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    const FakeApiServer::StartResult started = server_.Start(why);
    if (started == FakeApiServer::StartResult::kNoPython) GTEST_SKIP() << why;
    ASSERT_EQ(started, FakeApiServer::StartResult::kStarted) << why;
    client_ = fakeapi::QuickClient(server_);
    char tmpl[] = "/tmp/kai-npe-fault-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    for (const auto& [node, cpus] : {std::pair{"node0", "0-3"}, std::pair{"node1", "4-7"}}) {
      fs::create_directories(fs::path(dir_) / "devices/system/node" / node);
      std::ofstream(fs::path(dir_) / "devices/system/node" / node / "cpulist") << cpus << "\n";
    }
    options_.node_name = "n1";
    options_.sysfs_root = dir_;
    options_.podresources_socket = dir_ + "/kubelet.sock";
    options_.poll_interval = 100ms;
    options_.drift_resync_interval = 0ms;
  }

  void TearDown() override {
    if (thread_.joinable()) {
      runtime::RequestProcessStop();
      thread_.join();
    }
    if (kubelet_) kubelet_->Shutdown(std::chrono::system_clock::now());
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  void Kubelet(std::vector<std::string> pods) {
    lister_ = std::make_unique<Lister>(std::move(pods));
    grpc::ServerBuilder b;
    b.AddListeningPort("unix:" + options_.podresources_socket, grpc::InsecureServerCredentials());
    b.RegisterService(lister_.get());
    kubelet_ = b.BuildAndStart();
    ASSERT_NE(kubelet_, nullptr);
  }

  void Start() {
    thread_ = std::thread([this] { rc_ = RunNumaExporter(options_, *client_, err_); });
  }

  int Stop() {
    runtime::RequestProcessStop();
    thread_.join();
    return rc_;
  }

  std::string Annotation(const std::string& name) {
    const rapidjson::Document d = server_.Objects(res::kPod);
    if (!d.IsObject() || !d.HasMember("items")) return "";
    for (const auto& item : d["items"].GetArray()) {
      if (StrAt(item, {"metadata", "name"}) == name) {
        return StrAt(item, {"metadata", "annotations", kKey});
      }
    }
    return "";
  }

  int Calls(const std::string& method, const std::string& path_part) {
    int n = 0;
    for (const auto& e : server_.Log()) {
      n += e.method == method && e.path.find(path_part) != std::string::npos;
    }
    return n;
  }

  bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds timeout = 15s) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
      if (done()) return true;
      std::this_thread::sleep_for(50ms);
    }
    return done();
  }

  FakeApiServer server_;
  std::unique_ptr<k8s::ApiClient> client_;
  std::string dir_;
  NumaExporterOptions options_;
  std::unique_ptr<Lister> lister_;
  std::unique_ptr<grpc::Server> kubelet_;
  std::ostringstream err_;
  std::thread thread_;
  int rc_ = -1;
};

TEST_F(NumaExporterFakeApi, AFailedPatchIsWrittenAgainAtALaterPoll) {
  server_.Ops({PodJson("p")});
  server_.AddFault(R"({"method":"PATCH","path":"/pods/p$","times":3,"action":{"status":500}})");
  Kubelet({"p"});
  Start();
  ASSERT_TRUE(WaitFor([&] { return Annotation("p") == kValue; })) << err_.str();
  std::this_thread::sleep_for(500ms);       // a few more polls: nothing left to write
  EXPECT_EQ(Calls("PATCH", "/pods/p"), 4);  // 3 failed, one that landed
  EXPECT_EQ(Stop(), 0);
  EXPECT_NE(err_.str().find("500"), std::string::npos) << err_.str();
}

TEST_F(NumaExporterFakeApi, APodTheApiServerLacksIsSkipped) {
  server_.Ops({PodJson("p")});
  Kubelet({"ghost", "p"});
  Start();
  ASSERT_TRUE(WaitFor([&] { return Annotation("p") == kValue; })) << err_.str();
  EXPECT_TRUE(WaitFor([&] { return Calls("PATCH", "/pods/ghost") >= 2; }));  // tried each poll
  EXPECT_EQ(Stop(), 0);
}

TEST_F(NumaExporterFakeApi, AFailingDriftListIsLoggedAndTheExporterGoesOn) {
  server_.Ops({PodJson("p")});
  server_.AddFault(R"({"method":"GET","path":"/api/v1/pods$","times":-1,"action":{"status":500}})");
  options_.drift_resync_interval = 200ms;
  Kubelet({"p"});
  Start();
  ASSERT_TRUE(WaitFor([&] { return Annotation("p") == kValue; })) << err_.str();
  ASSERT_TRUE(WaitFor([&] {
    return err_.str().find("list the pods of node n1") != std::string::npos;
  })) << err_.str();
  server_.ClearFaults();
  // The drift pass now sees the annotation removed out of band and writes it again.
  std::string update = PodJson("p");
  update.replace(update.find("create"), 6, "update");
  server_.Ops({update});
  EXPECT_TRUE(WaitFor([&] { return Annotation("p") == kValue; })) << err_.str();
  EXPECT_EQ(Stop(), 0);
}

TEST_F(NumaExporterFakeApi, AnUnreadableSysfsTreeIsExit2) {
  options_.sysfs_root = dir_ + "/nowhere";
  Start();
  EXPECT_EQ(Stop(), 2);
  EXPECT_NE(err_.str().find(dir_ + "/nowhere/devices/system/node"), std::string::npos)
      << err_.str();
}

}  // namespace
}  // namespace kai::numaexporterd
