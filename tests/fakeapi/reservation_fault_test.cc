// `kai resource-reservation`'s program logic against the fake API server (fake_apiserver.py):
// the pod is annotated with its GPU's UUID once, a pod that already carries the annotation is
// left alone without asking NVML, failed reads and patches are retried a bounded number of
// times; and the binary itself, with the fake NVML, annotates its pod and exits 0 on SIGTERM.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_server.h"
#include "kai/daemons/reservation/reservation.h"
#include "kai/kube/client/api_client.h"
#include "kai/testing/log_record.h"
#include "kai/testing/scoped_env.h"

namespace kai::reservation {
namespace {

using namespace std::chrono_literals;
using fakeapi::FakeApiServer;
using fakeapi::Quote;
using fakeapi::StrAt;
namespace res = k8s::resources;

constexpr const char* kNamespace = "kai-resource-reservation";
constexpr const char* kAnnotation = "run.ai/reserve_for_gpu_index";

std::string ReservationPodJson(const std::string& name, const std::string& reserved = "") {
  const std::string annotations =
      reserved.empty() ? "{}" : "{" + Quote(kAnnotation) + ":" + Quote(reserved) + "}";
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":)" + Quote(name) +
         R"(,"namespace":)" + Quote(kNamespace) +
         R"(,"labels":{"app":"kai-resource-reservation"},"annotations":)" + annotations +
         R"(},"spec":{"nodeName":"n1","containers":[{"name":"r","resources":)" +
         R"({"limits":{"nvidia.com/gpu":"1"}}}]},"status":{"phase":"Running"}})";
}

std::string CreateOp(const std::string& object) {
  return R"({"op":"create","object":)" + object + "}";
}

class ReservationFakeApi : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    const FakeApiServer::StartResult started = server_.Start(why);
    if (started == FakeApiServer::StartResult::kNoPython) GTEST_SKIP() << why;
    ASSERT_EQ(started, FakeApiServer::StartResult::kStarted) << why;
    client_ = fakeapi::QuickClient(server_);
    options_.attempts = 3;
    options_.retry_delay = 10ms;
    options_.sleep = [this](std::chrono::milliseconds d) { sleeps_.push_back(d); };
  }

  UuidSource Gpu(std::string uuid) {
    return [this, uuid]() -> Result<std::string> {
      ++uuid_calls_;
      return uuid;
    };
  }

  // The pod's annotation as the server stores it ("" when absent).
  std::string StoredAnnotation(const std::string& name) {
    const rapidjson::Document d = server_.Objects(res::kPod);
    if (!d.IsObject() || !d.HasMember("items")) return "";
    for (const auto& pod : d["items"].GetArray()) {
      if (StrAt(pod, {"metadata", "name"}) == name) {
        return StrAt(pod, {"metadata", "annotations", kAnnotation});
      }
    }
    return "";
  }

  int Requests(const std::string& method) {
    int n = 0;
    for (const auto& e : server_.Log()) n += e.method == method ? 1 : 0;
    return n;
  }

  FakeApiServer server_;
  std::unique_ptr<k8s::ApiClient> client_;
  ReserveOptions options_;
  std::vector<std::chrono::milliseconds> sleeps_;
  int uuid_calls_ = 0;
};

TEST_F(ReservationFakeApi, AnnotatesThePodWithItsGpuOnce) {
  server_.Ops({CreateOp(ReservationPodJson("gpu-reservation-n1-abcde"))});
  auto r =
      ReserveGpu(*client_, {kNamespace, "gpu-reservation-n1-abcde"}, Gpu("GPU-aaaa"), options_);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, Reserved::kPatched);
  EXPECT_EQ(uuid_calls_, 1);
  EXPECT_EQ(StoredAnnotation("gpu-reservation-n1-abcde"), "GPU-aaaa");
  EXPECT_EQ(Requests("GET"), 1);
  EXPECT_EQ(Requests("PATCH"), 1);
  const rapidjson::Document log = server_.Control("GET", "/_control/log");
  ASSERT_TRUE(log.IsArray() && log.Size() == 2);
  EXPECT_EQ(StrAt(log[1], {"content_type"}), "application/merge-patch+json");
}

TEST_F(ReservationFakeApi, AnnotatedPodIsLeftAloneWithoutAskingForTheGpu) {
  server_.Ops({CreateOp(ReservationPodJson("restarted", "GPU-bbbb"))});
  auto r = ReserveGpu(*client_, {kNamespace, "restarted"}, Gpu("GPU-aaaa"), options_);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, Reserved::kAlreadyAnnotated);
  EXPECT_EQ(uuid_calls_, 0);
  EXPECT_EQ(StoredAnnotation("restarted"), "GPU-bbbb");
  EXPECT_EQ(Requests("PATCH"), 0);
}

TEST_F(ReservationFakeApi, FailedReadAndPatchAreRetried) {
  server_.Ops({CreateOp(ReservationPodJson("p"))});
  // 403 and 404 are not the client's to retry; this program tries again, 10 then 20 ms later.
  server_.AddFault(R"({"method":"GET","path":"/pods/p$","action":{"status":403}})");
  server_.AddFault(R"({"method":"PATCH","path":"/pods/p$","action":{"status":404}})");
  auto r = ReserveGpu(*client_, {kNamespace, "p"}, Gpu("GPU-aaaa"), options_);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(StoredAnnotation("p"), "GPU-aaaa");
  EXPECT_EQ(Requests("GET"), 2);
  EXPECT_EQ(Requests("PATCH"), 2);
  EXPECT_EQ(sleeps_, (std::vector<std::chrono::milliseconds>{10ms, 10ms}));
  EXPECT_EQ(uuid_calls_, 1);
}

TEST_F(ReservationFakeApi, GivesUpAfterTheLastAttemptNamingThePod) {
  server_.Ops({CreateOp(ReservationPodJson("p"))});
  server_.AddFault(R"({"method":"GET","path":"/pods/p$","times":-1,"action":{"status":403}})");
  auto r = ReserveGpu(*client_, {kNamespace, "p"}, Gpu("GPU-aaaa"), options_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("cannot read pod kai-resource-reservation/p: GET "
                                    "/api/v1/namespaces/kai-resource-reservation/pods/p: 403",
                                    0),
            0u)
      << r.error().message;
  EXPECT_EQ(Requests("GET"), 3);
  EXPECT_EQ(sleeps_, (std::vector<std::chrono::milliseconds>{10ms, 20ms}));
  EXPECT_EQ(uuid_calls_, 0);
}

TEST_F(ReservationFakeApi, GpuErrorPatchesNothing) {
  server_.Ops({CreateOp(ReservationPodJson("p"))});
  UuidSource broken = []() -> Result<std::string> {
    return Error{"found 2 devices, 1 was expected"};
  };
  auto r = ReserveGpu(*client_, {kNamespace, "p"}, broken, options_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "found 2 devices, 1 was expected");
  EXPECT_EQ(Requests("PATCH"), 0);
}

TEST(Reservation, PatchBodyIsAMergePatchOfTheAnnotation) {
  EXPECT_EQ(ReservationPatch("GPU-aaaa"),
            R"({"metadata":{"annotations":{"run.ai/reserve_for_gpu_index":"GPU-aaaa"}}})");
}

TEST(Reservation, PodComesFromTheDownwardApi) {
  auto env = [](std::map<std::string, std::string> vars) -> k8s::EnvLookup {
    return [vars](const std::string& k) -> std::optional<std::string> {
      auto it = vars.find(k);
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
  };
  auto pod = CurrentPod(env({{"POD_NAMESPACE", "ns"}, {"POD_NAME", "p"}}));
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ(pod->ns, "ns");
  EXPECT_EQ(pod->name, "p");
  auto no_ns = CurrentPod(env({{"POD_NAME", "p"}}));
  ASSERT_FALSE(no_ns.ok());
  EXPECT_EQ(no_ns.error().message.rfind("POD_NAMESPACE is not set", 0), 0u);
  auto no_name = CurrentPod(env({{"POD_NAMESPACE", "ns"}, {"POD_NAME", ""}}));
  ASSERT_FALSE(no_name.ok());
  EXPECT_EQ(no_name.error().message.rfind("POD_NAME is not set", 0), 0u);
}

// ---- the binary: kai resource-reservation --kubeconfig, with the fake NVML ----

class ReservationProgram : public ReservationFakeApi {
 protected:
  void SetUp() override {
    ReservationFakeApi::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    dir_ = std::filesystem::temp_directory_path() /
           ("kai-reservation-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    kubeconfig_ = (dir_ / "kubeconfig").string();
    std::ofstream(kubeconfig_) << "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
                               << "clusters:\n- name: fake\n  cluster:\n    server: "
                               << server_.url() << "\nusers:\n- name: u\n  user: {}\n"
                               << "contexts:\n- name: fake\n  context: {cluster: fake, user: u}\n";
    for (const char* v :
         {"FAKE_NVML_DEVICES", "FAKE_NVML_COUNT", "FAKE_NVML_INIT_RC", "FAKE_NVML_COUNT_RC",
          "FAKE_NVML_UUID_RC", "FAKE_NVML_LOG", "KUBERNETES_SERVICE_HOST", "KUBECONFIG"}) {
      env_.Unset(v);
    }
    env_.Set("KAI_NVML_LIBRARY", KAI_FAKE_NVML);
    env_.Set("POD_NAMESPACE", kNamespace);
    env_.Set("POD_NAME", "p");
  }

  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  void Start() {
    std::vector<std::string> args = {KAI_BINARY, "resource-reservation", "--kubeconfig",
                                     kubeconfig_};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string out = (dir_ / "output").string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const int rc = posix_spawn(&pid_, KAI_BINARY, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ASSERT_EQ(rc, 0) << "cannot start " << KAI_BINARY;
  }

  std::string Output() const {
    std::ifstream in(dir_ / "output");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // The exit status after SIGTERM (-1 when it did not exit on its own within 10 s).
  int TerminateAndWait() {
    ::kill(pid_, SIGTERM);
    return WaitExit();
  }

  int WaitExit() {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(10ms);
    }
    return -1;
  }

  bool StillRunning() {
    int status = 0;
    return ::waitpid(pid_, &status, WNOHANG) == 0;
  }

  testutil::ScopedEnv env_;
  std::filesystem::path dir_;
  std::string kubeconfig_;
  pid_t pid_ = -1;
};

TEST_F(ReservationProgram, AnnotatesItsPodThenHoldsUntilSigterm) {
  env_.Set("FAKE_NVML_DEVICES", "GPU-5d7d0c4e:NVIDIA H200:143771");
  server_.Ops({CreateOp(ReservationPodJson("p"))});
  ASSERT_NO_FATAL_FAILURE(Start());
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (StoredAnnotation("p").empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(StoredAnnotation("p"), "GPU-5d7d0c4e") << Output();
  EXPECT_TRUE(StillRunning()) << Output();
  EXPECT_EQ(TerminateAndWait(), 0) << Output();
}

// A restarted reservation pod: NVML would fail, but it is not asked.
TEST_F(ReservationProgram, RestartedPodDoesNotAskNvml) {
  env_.Set("FAKE_NVML_INIT_RC", "9");
  server_.Ops({CreateOp(ReservationPodJson("p", "GPU-bbbb"))});
  ASSERT_NO_FATAL_FAILURE(Start());
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (Output().find("already carries") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(StillRunning()) << Output();
  EXPECT_EQ(TerminateAndWait(), 0) << Output();
  EXPECT_EQ(StoredAnnotation("p"), "GPU-bbbb");
  EXPECT_EQ(Requests("PATCH"), 0);
}

TEST_F(ReservationProgram, NvmlFailureExitsNonZeroWithOneKaiLine) {
  env_.Set("FAKE_NVML_DEVICES", "GPU-aaaa:A:1;GPU-bbbb:B:1");
  server_.Ops({CreateOp(ReservationPodJson("p"))});
  ASSERT_NO_FATAL_FAILURE(Start());
  EXPECT_EQ(WaitExit(), 1) << Output();
  EXPECT_EQ(testutil::WithoutTime(Output()),
            "ERROR\tresource-reservation\tfound 2 devices, 1 was expected\n");
  EXPECT_EQ(Requests("PATCH"), 0);
}

}  // namespace
}  // namespace kai::reservation
