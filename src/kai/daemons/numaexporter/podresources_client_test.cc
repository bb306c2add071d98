#include "kai/daemons/numaexporter/podresources_client.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "podresources_v1.grpc.pb.h"

namespace kai::numaexporterd {
namespace {

namespace fs = std::filesystem;

// A temporary directory for the sockets (a unix socket path is short: under /tmp).
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/kai-podres-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string Path(const std::string& name) const { return (fs::path(path_) / name).string(); }

 private:
  std::string path_;
};

void AddTopology(v1::TopologyInfo* t, std::initializer_list<int64_t> nodes) {
  for (int64_t n : nodes) t->add_nodes()->set_id(n);
}

// A pod with two GPUs on NUMA node 1, CPUs 0-2, and 1 GiB of memory on node 0.
v1::ListPodResourcesResponse CannedAnswer() {
  v1::ListPodResourcesResponse r;
  v1::PodResources* pod = r.add_pod_resources();
  pod->set_name("trainer");
  pod->set_namespace_("team-a");
  v1::ContainerResources* c = pod->add_containers();
  c->set_name("main");
  v1::ContainerDevices* d = c->add_devices();
  d->set_resource_name("nvidia.com/gpu");
  d->add_device_ids("GPU-0");
  d->add_device_ids("GPU-1");
  AddTopology(d->mutable_topology(), {1});
  for (int64_t cpu : {0, 1, 2}) c->add_cpu_ids(cpu);
  v1::ContainerMemory* m = c->add_memory();
  m->set_memory_type("memory");
  m->set_size(1 << 30);
  AddTopology(m->mutable_topology(), {0});
  r.add_pod_resources()->set_name("best-effort");
  return r;
}

class FakeLister final : public v1::PodResourcesLister::Service {
 public:
  v1::ListPodResourcesResponse answer = CannedAnswer();
  std::chrono::milliseconds delay{0};
  std::atomic<int> calls{0};

  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* out) override {
    ++calls;
    std::this_thread::sleep_for(delay);
    *out = answer;
    return grpc::Status::OK;
  }
};

class PodResourcesClientTest : public ::testing::Test {
 protected:
  void Serve() {
    grpc::ServerBuilder b;
    b.AddListeningPort("unix:" + socket_, grpc::InsecureServerCredentials());
    b.RegisterService(&lister_);
    server_ = b.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now());
  }
  PodResourcesOptions Options(std::chrono::milliseconds timeout = std::chrono::seconds(5)) const {
    PodResourcesOptions o;
    o.socket = socket_;
    o.timeout = timeout;
    return o;
  }

  TempDir dir_;
  std::string socket_ = dir_.Path("kubelet.sock");
  FakeLister lister_;
  std::unique_ptr<grpc::Server> server_;
};

TEST_F(PodResourcesClientTest, ListsThePodsAllocations) {
  Serve();
  PodResourcesClient client(Options());
  auto pods = client.List();
  ASSERT_TRUE(pods.ok()) << pods.error().message;
  ASSERT_EQ(pods->size(), 2u);
  const numaexporter::PodAllocation& p = (*pods)[0];
  EXPECT_EQ(p.ns, "team-a");
  EXPECT_EQ(p.name, "trainer");
  ASSERT_EQ(p.containers.size(), 1u);
  const numaexporter::ContainerAllocation& c = p.containers[0];
  EXPECT_EQ(c.name, "main");
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(c.devices[0].resource, "nvidia.com/gpu");
  EXPECT_EQ(c.devices[0].device_count, 2);
  EXPECT_EQ(c.devices[0].numa_nodes, std::vector<int64_t>{1});
  EXPECT_EQ(c.cpu_ids, (std::vector<int64_t>{0, 1, 2}));
  ASSERT_EQ(c.memory.size(), 1u);
  EXPECT_EQ(c.memory[0].size, uint64_t{1} << 30);
  EXPECT_EQ(c.memory[0].numa_nodes, std::vector<int64_t>{0});
  EXPECT_TRUE((*pods)[1].containers.empty());
  // The placement the exporter would write for it.
  const numaexporter::CpuToNuma cpus = {{0, 0}, {1, 0}, {2, 1}};
  EXPECT_EQ(numaexporter::PlacementText(numaexporter::ComputePlacement(p, cpus)),
            R"([{"zone":"node-0","amount":{"cpu":"2","memory":"1073741824"}},)"
            R"({"zone":"node-1","amount":{"cpu":"1","nvidia.com/gpu":"2"}}])");
}

TEST_F(PodResourcesClientTest, ASocketThatIsNotThereIsAnErrorNamingIt) {
  PodResourcesClient client(Options(std::chrono::milliseconds(500)));
  auto pods = client.List();
  ASSERT_FALSE(pods.ok());
  EXPECT_NE(pods.error().message.find(socket_), std::string::npos) << pods.error().message;
  Serve();  // a kubelet that comes up later is found within the reconnect backoff (1s at most)
  Result<std::vector<numaexporter::PodAllocation>> again = Error{"not called"};
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (!(again = client.List()).ok() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(again.ok()) << again.error().message;
}

TEST_F(PodResourcesClientTest, ASlowAnswerMeetsTheDeadline) {
  lister_.delay = std::chrono::milliseconds(1500);
  Serve();
  PodResourcesClient client(Options(std::chrono::milliseconds(200)));
  const auto started = std::chrono::steady_clock::now();
  auto pods = client.List();
  ASSERT_FALSE(pods.ok());
  EXPECT_NE(pods.error().message.find("gRPC status 4"), std::string::npos)  // DEADLINE_EXCEEDED
      << pods.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(1400));
}

TEST_F(PodResourcesClientTest, AnAnswerOverTheLimitIsRefused) {
  for (int i = 0; i < 2000; ++i)
    *lister_.answer.add_pod_resources() = lister_.answer.pod_resources(0);
  Serve();
  PodResourcesOptions o = Options();
  o.max_message_bytes = 4096;
  PodResourcesClient client(o);
  auto pods = client.List();
  ASSERT_FALSE(pods.ok());
  EXPECT_NE(pods.error().message.find("gRPC status 8"), std::string::npos)  // RESOURCE_EXHAUSTED
      << pods.error().message;
}

// A socket whose server speaks no gRPC: it writes garbage and hangs up.
TEST_F(PodResourcesClientTest, ALyingSocketIsAnError) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  socket_.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 8), 0);
  std::atomic<bool> done{false};
  std::thread liar([&] {
    while (!done) {
      const int c = accept(fd, nullptr, nullptr);
      if (c < 0) return;
      const char garbage[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello\xff\xff\xff\xff";
      (void)!write(c, garbage, sizeof(garbage));
      close(c);
    }
  });
  PodResourcesClient client(Options(std::chrono::milliseconds(1000)));
  auto pods = client.List();
  done = true;
  shutdown(fd, SHUT_RDWR);
  close(fd);
  liar.join();
  ASSERT_FALSE(pods.ok());
  EXPECT_NE(pods.error().message.find("listing pod resources on"), std::string::npos);
}

}  // namespace
}  // namespace kai::numaexporterd
