// kai's API client, informer and committer against the fault-injecting fake API server
// (fake_apiserver.py): after each injected fault (dropped and hung watches, 410 Gone on a watch
// and on a list's continue token, 429 with Retry-After, 500s, 409s, slow and truncated answers)
// the informer's cache must equal the server's truth, and no bind may be lost or doubled.
// The ApiClient's backoff and retry rules are tested on their own first, without a server.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fake_server.h"
#include "kai/core/k8s/decode.h"
#include "kai/daemons/scheduler/commit.h"
#include "kai/kube/client/api_client.h"
#include "kai/kube/informer/informer.h"
#include "kai/kube/informer/watch_hub.h"

namespace kai {
namespace {

using std::chrono::milliseconds;
using namespace std::chrono_literals;
namespace res = k8s::resources;
using fakeapi::FakeApiServer;
using fakeapi::LogEntry;
using fakeapi::Quote;
using fakeapi::StrAt;

// ---- an injected clock that records the client's sleeps instead of waiting them out ----

struct SleepLog {
  std::mutex mu;
  std::vector<milliseconds> sleeps;
  std::vector<milliseconds> Get() {
    std::lock_guard<std::mutex> lock(mu);
    return sleeps;
  }
};

// Sleeps are recorded and cut to 1 ms; jitter is fixed, so every backoff is known exactly.
k8s::ClientClock RecordingClock(std::shared_ptr<SleepLog> log, std::shared_ptr<double> jitter) {
  k8s::ClientClock c;
  c.sleep = [log](milliseconds d) {
    {
      std::lock_guard<std::mutex> lock(log->mu);
      log->sleeps.push_back(d);
    }
    std::this_thread::sleep_for(std::min(d, 1ms));
  };
  c.jitter = [jitter] { return *jitter; };
  return c;
}

// initial 100 ms doubling to 1 s, 4 attempts: with jitter 0.5 the retries wait 75, 150, 300 ms.
k8s::RetryPolicy FastPolicy(int max_attempts = 4) {
  k8s::RetryPolicy p;
  p.max_attempts = max_attempts;
  p.initial = 100ms;
  p.max = 1000ms;
  p.max_retry_after = 60000ms;
  return p;
}

k8s::HttpResponse WithRetryAfter(std::string value) {
  k8s::HttpResponse r;
  r.status = 429;
  r.headers["retry-after"] = std::move(value);
  return r;
}

// ---- ApiClient::Backoff and Retryable, no server ----

class ApiClientBackoff : public ::testing::Test {
 protected:
  std::shared_ptr<SleepLog> sleeps_ = std::make_shared<SleepLog>();
  std::shared_ptr<double> jitter_ = std::make_shared<double>(0.0);
  k8s::ApiClient client_{k8s::ClusterConfig{"http://127.0.0.1:1"}, FastPolicy(),
                         RecordingClock(sleeps_, jitter_)};
  milliseconds At(int attempt, double jitter) {
    *jitter_ = jitter;
    return client_.Backoff(attempt, {});
  }
};

TEST_F(ApiClientBackoff, DoublesPerAttemptFromTheInitialDelay) {
  EXPECT_EQ(At(0, 0.0), 50ms);
  EXPECT_EQ(At(1, 0.0), 100ms);
  EXPECT_EQ(At(2, 0.0), 200ms);
  EXPECT_EQ(At(3, 0.0), 400ms);
  EXPECT_EQ(At(2, 0.5), 300ms);
}

TEST_F(ApiClientBackoff, IsCappedAtTheMaximumEvenForHugeAttemptNumbers) {
  EXPECT_EQ(At(4, 0.0), 500ms);  // 1600 ms capped to 1000, then jittered
  EXPECT_EQ(At(5, 0.5), 750ms);
  EXPECT_EQ(At(60, 0.0), 500ms);
  EXPECT_EQ(At(5000, 0.999), 999ms);
}

TEST_F(ApiClientBackoff, JitterStaysInTheUpperHalfBelowTheCap) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    const auto base = std::min<int64_t>(100LL << attempt, 1000);
    for (double j : {0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.9999}) {
      const auto d = At(attempt, j).count();
      EXPECT_GE(d, base / 2) << "attempt " << attempt << " jitter " << j;
      EXPECT_LT(d, base) << "attempt " << attempt << " jitter " << j;
    }
  }
}

TEST_F(ApiClientBackoff, RetryAfterReplacesTheExponentialDelay) {
  *jitter_ = 0.9;
  EXPECT_EQ(client_.Backoff(0, WithRetryAfter("7")), 7000ms);
  EXPECT_EQ(client_.Backoff(9, WithRetryAfter("2")), 2000ms);
  EXPECT_EQ(client_.Backoff(3, WithRetryAfter("0")), 0ms);
}

TEST_F(ApiClientBackoff, RetryAfterIsCappedAtMaxRetryAfter) {
  EXPECT_EQ(client_.Backoff(0, WithRetryAfter("61")), 60000ms);
  EXPECT_EQ(client_.Backoff(0, WithRetryAfter("100000")), 60000ms);
}

TEST_F(ApiClientBackoff, UnreadableRetryAfterFallsBackToExponential) {
  *jitter_ = 0.0;
  EXPECT_EQ(client_.Backoff(1, WithRetryAfter("soon")), 100ms);
  EXPECT_EQ(client_.Backoff(1, WithRetryAfter("-5")), 100ms);
  EXPECT_EQ(client_.Backoff(1, WithRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT")), 100ms);
}

TEST(ApiClientRetryable, RetriesThrottlingServerErrorsAndMissingAnswersOnly) {
  auto answer = [](long status, std::string transport_error = "") {
    k8s::HttpResponse r;
    r.status = status;
    r.transport_error = std::move(transport_error);
    return r;
  };
  EXPECT_TRUE(k8s::Retryable(answer(0, "Couldn't connect to server")));
  EXPECT_TRUE(k8s::Retryable(answer(200, "Transferred a partial file")));
  for (long s : {429L, 500L, 502L, 503L, 504L}) EXPECT_TRUE(k8s::Retryable(answer(s))) << s;
  for (long s : {200L, 201L, 400L, 401L, 403L, 404L, 409L, 410L, 422L}) {
    EXPECT_FALSE(k8s::Retryable(answer(s))) << s;
  }
}

// A port nothing listens on: bound, read back, closed.
int ClosedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

TEST(ApiClientCall, RetriesTransportErrorsWithTheInjectedBackoffThenGivesUp) {
  auto sleeps = std::make_shared<SleepLog>();
  k8s::ClusterConfig cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(ClosedPort());
  k8s::ApiClient client(cfg, FastPolicy(4), RecordingClock(sleeps, std::make_shared<double>(0.5)));
  const k8s::HttpResponse r = client.Get("/api/v1/nodes");
  EXPECT_EQ(r.status, 0);
  EXPECT_FALSE(r.transport_error.empty());
  EXPECT_EQ(sleeps->Get(), (std::vector<milliseconds>{75ms, 150ms, 300ms}));
}

TEST(ApiClientCall, OneAttemptMeansNoRetryAndNoSleep) {
  auto sleeps = std::make_shared<SleepLog>();
  k8s::ClusterConfig cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(ClosedPort());
  k8s::ApiClient client(cfg, FastPolicy(1), RecordingClock(sleeps, std::make_shared<double>(0.5)));
  EXPECT_FALSE(client.Get("/api/v1/nodes").ok());
  EXPECT_TRUE(sleeps->Get().empty());
}

// ---- objects for the fake server ----

using KV = std::vector<std::pair<std::string, std::string>>;

std::string LabelsJson(const KV& labels) {
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    out += (i ? "," : "") + Quote(labels[i].first) + ":" + Quote(labels[i].second);
  }
  return out + "}";
}

std::string PodJson(const std::string& name, const std::string& phase = "Pending",
                    const std::string& node = "", const KV& labels = {}) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":)" + Quote(name) +
         R"(,"namespace":"default","labels":)" + LabelsJson(labels) +
         R"(},"spec":{"schedulerName":"kai-scheduler","nodeName":)" + Quote(node) +
         R"(,"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]},)" +
         R"("status":{"phase":)" + Quote(phase) + "}}";
}

std::string NodeJson(const std::string& name, const KV& labels = {}) {
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":)" + Quote(name) + R"(,"labels":)" +
         LabelsJson(labels) +
         R"(},"status":{"allocatable":{"cpu":"8","memory":"32Gi","pods":"110"}}})";
}

std::string QueueJson(const std::string& name, const std::string& parent = "") {
  std::string spec = parent.empty() ? "{}" : R"({"parentQueue":)" + Quote(parent) + "}";
  return R"({"apiVersion":"scheduling.run.ai/v2","kind":"Queue","metadata":{"name":)" +
         Quote(name) + R"(},"spec":)" + spec + "}";
}

std::string PodGroupJson(const std::string& name, const std::string& queue) {
  return R"({"apiVersion":"scheduling.run.ai/v2alpha2","kind":"PodGroup","metadata":{"name":)" +
         Quote(name) + R"(,"namespace":"default"},"spec":{"minMember":1,"queue":)" + Quote(queue) +
         "}}";
}

std::string BindRequestJson(const std::string& pod, const std::string& node) {
  return R"({"apiVersion":"scheduling.run.ai/v1alpha2","kind":"BindRequest","metadata":{"name":)" +
         Quote(pod) + R"(,"namespace":"default","labels":{"selected-node":)" + Quote(node) +
         R"(}},"spec":{"podName":)" + Quote(pod) + R"(,"selectedNode":)" + Quote(node) +
         R"(,"receivedResourceType":"Regular"}})";
}

std::string NodeTopologyJson(const std::string& node, const std::string& zone_cpus) {
  return R"({"apiVersion":"topology.node.k8s.io/v1alpha2","kind":"NodeResourceTopology",)"
         R"("metadata":{"name":)" +
         Quote(node) +
         R"(},"attributes":[{"name":"topologyManagerPolicy","value":"single-numa-node"}],)"
         R"("zones":[{"name":"zone-0","type":"Node","resources":[{"name":"cpu","capacity":)" +
         Quote(zone_cpus) + R"(,"allocatable":)" + Quote(zone_cpus) + "}]}]}";
}

std::string SliceJson(const std::string& name, const std::string& node) {
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":)" +
         Quote(name) + R"(},"spec":{"driver":"gpu.nvidia.com","pool":{"name":)" + Quote(node) +
         R"(},"nodeName":)" + Quote(node) + R"(,"devices":[{"name":"gpu-0"}]}})";
}

std::string DeviceClassJson(const std::string& name) {
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":)" +
         Quote(name) + R"(},"spec":{}})";
}

std::string Op(const std::string& op, const std::string& object) {
  return R"({"op":)" + Quote(op) + R"(,"object":)" + object + "}";
}

std::string ToJson(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

// ---- fingerprints: what "the cache equals the server's truth" compares ----

std::string LabelsPrint(const Labels& labels) {
  std::string out = "{";
  for (const auto& [k, v] : labels) out += std::string(k.view()) + "=" + v + ",";
  return out + "}";
}

std::string LabelsPrint(const rapidjson::Value& obj) {
  std::map<std::string, std::string> sorted;
  if (obj.HasMember("metadata") && obj["metadata"].HasMember("labels")) {
    for (const auto& m : obj["metadata"]["labels"].GetObject()) {
      sorted[m.name.GetString()] = m.value.GetString();
    }
  }
  std::string out = "{";
  for (const auto& [k, v] : sorted) out += k + "=" + v + ",";
  return out + "}";
}

std::string KeyPrint(std::string_view ns, std::string_view name) {
  return ns.empty() ? std::string(name) : std::string(ns) + "/" + std::string(name);
}

// "key field=value ... labels={...}" of one server object, by kind.
std::string TruthPrint(std::string_view kind, const rapidjson::Value& o) {
  std::string p = KeyPrint(StrAt(o, {"metadata", "namespace"}), StrAt(o, {"metadata", "name"}));
  if (kind == "Pod") {
    p += " phase=" + StrAt(o, {"status", "phase"}) + " node=" + StrAt(o, {"spec", "nodeName"});
  } else if (kind == "Queue") {
    p += " parent=" + StrAt(o, {"spec", "parentQueue"});
  } else if (kind == "PodGroup") {
    p += " queue=" + StrAt(o, {"spec", "queue"});
  } else if (kind == "BindRequest") {
    p += " pod=" + StrAt(o, {"spec", "podName"}) + " node=" + StrAt(o, {"spec", "selectedNode"});
  } else if (kind == "ResourceSlice") {
    p += " node=" + StrAt(o, {"spec", "nodeName"});
  } else if (kind == "NodeResourceTopology") {
    const auto& zones = o["zones"];
    p += " cpu=" + StrAt(zones[0]["resources"][0], {"allocatable"});
  }
  return p + " labels=" + LabelsPrint(o);
}

template <class T, class F>
void AddPrints(const std::vector<T>& objects, F extra, std::vector<std::string>& out) {
  for (const T& o : objects) {
    out.push_back(KeyPrint(o.meta.ns.view(), o.meta.name) + extra(o) +
                  " labels=" + LabelsPrint(o.meta.labels));
  }
}

std::vector<std::string> CachePrints(std::string_view kind, const ClusterState& w) {
  std::vector<std::string> out;
  auto none = [](const auto&) { return std::string(); };
  if (kind == "Pod") {
    AddPrints(
        w.pods,
        [](const PodObject& p) {
          return " phase=" + std::string(p.phase.view()) +
                 " node=" + std::string(p.node_name.view());
        },
        out);
  } else if (kind == "Node") {
    AddPrints(w.nodes, none, out);
  } else if (kind == "Queue") {
    AddPrints(
        w.queues, [](const QueueObject& q) { return " parent=" + q.parent; }, out);
  } else if (kind == "PodGroup") {
    AddPrints(
        w.pod_groups,
        [](const PodGroupObject& g) { return " queue=" + std::string(g.queue.view()); }, out);
  } else if (kind == "BindRequest") {
    AddPrints(
        w.bind_requests,
        [](const BindRequestObject& b) {
          return " pod=" + b.pod_name + " node=" + b.selected_node;
        },
        out);
  } else if (kind == "ResourceSlice") {
    AddPrints(
        w.dra.slices, [](const ResourceSliceObject& sl) { return " node=" + sl.node_name; }, out);
  } else if (kind == "DeviceClass") {
    AddPrints(w.dra.classes, none, out);
  } else if (kind == "NodeResourceTopology") {
    AddPrints(
        w.node_topologies,
        [](const NodeTopologyObject& t) {
          return " cpu=" + std::to_string(t.zones.at(0).allocatable.milli_cpu / 1000);
        },
        out);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += "\n    " + s;
  return out;
}

std::optional<std::string> QueryParam(const std::string& query, const std::string& name) {
  const std::string key = name + "=";
  for (size_t start = 0; start <= query.size();) {
    size_t end = query.find('&', start);
    if (end == std::string::npos) end = query.size();
    if (query.compare(start, key.size(), key) == 0) {
      return query.substr(start + key.size(), end - start - key.size());
    }
    start = end + 1;
  }
  return std::nullopt;
}

// ---- the fixture: a fresh fake server per test, a fast client, an informer on demand ----

const std::vector<k8s::ResourceType> kAllKinds = {res::kNode, res::kPod, res::kQueue,
                                                  res::kPodGroup, res::kBindRequest};

class FakeApi : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    switch (server_.Start(why, {"--bookmark-interval", "0.1"})) {
      case FakeApiServer::StartResult::kNoPython:
        GTEST_SKIP() << why;
      case FakeApiServer::StartResult::kFailed:
        FAIL() << why;
      case FakeApiServer::StartResult::kStarted:
        break;
    }
    client_ = MakeClient(FastPolicy());
  }

  void TearDown() override {
    informer_.reset();  // joins the reflectors before their server goes
    others_.clear();
    hub_.reset();
    server_.Stop();
  }

  std::unique_ptr<k8s::ApiClient> MakeClient(k8s::RetryPolicy policy) {
    k8s::ClusterConfig cfg;
    cfg.server = server_.url();
    return std::make_unique<k8s::ApiClient>(cfg, policy, RecordingClock(sleeps_, jitter_));
  }

  informer::InformerOptions FastOptions() {
    informer::InformerOptions o;
    o.page_size = 2;
    o.watch_timeout_seconds = 30;
    o.backoff_initial = 10ms;
    o.backoff_max = 50ms;
    o.recheck_absent = 50ms;
    o.log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(log_mu_);
      informer_log_.push_back(line);
    };
    o.hub = hub_.get();
    return o;
  }

  // A shared watch hub (kai run's) with the informers' settings; informers started after it
  // subscribe to it.
  void StartHub() { hub_ = std::make_unique<informer::WatchHub>(*client_, FastOptions()); }

  // Another informer on the hub (or on its own), for one kind and query.
  informer::Informer& StartOther(k8s::ResourceType kind, std::string query) {
    others_.push_back(std::make_unique<informer::Informer>(
        *client_, std::vector<informer::WatchSpec>{{kind, std::move(query)}}, FastOptions()));
    others_.back()->Start();
    return *others_.back();
  }

  // `optional`: kinds watched as optional (reflector.h), after `kinds`.
  void StartInformer(std::vector<k8s::ResourceType> kinds,
                     const std::vector<k8s::ResourceType>& optional = {}) {
    kinds_ = std::move(kinds);
    std::vector<informer::WatchSpec> specs;
    for (const auto& k : kinds_) specs.push_back({k, ""});
    for (const auto& k : optional) {
      specs.push_back({k, "", true});
      kinds_.push_back(k);
    }
    informer::InformerOptions o = FastOptions();
    informer_ = std::make_unique<informer::Informer>(*client_, std::move(specs), o);
    informer_->Start();
  }

  // Two nodes, three queues, two PodGroups, five pods (one running), one BindRequest.
  void Seed() {
    server_.Ops(
        {Op("create", NodeJson("n1", {{"zone", "a"}})),
         Op("create", NodeJson("n2", {{"zone", "b"}})), Op("create", QueueJson("root")),
         Op("create", QueueJson("team-a", "root")), Op("create", QueueJson("team-b", "root")),
         Op("create", PodGroupJson("pg1", "team-a")), Op("create", PodGroupJson("pg2", "team-b")),
         Op("create", PodJson("p1", "Running", "n1", {{"app", "x"}})), Op("create", PodJson("p2")),
         Op("create", PodJson("p3")), Op("create", PodJson("p4", "Pending", "", {{"app", "y"}})),
         Op("create", PodJson("p5")), Op("create", BindRequestJson("p1", "n1"))});
  }

  // "" when the cache equals the server's truth for every watched kind, else the difference.
  std::string Difference() {
    std::string diff;
    for (const auto& k : kinds_) {
      const rapidjson::Document truth = server_.Objects(k);
      std::vector<std::string> want;
      if (truth.IsObject() && truth.HasMember("items")) {
        for (const auto& o : truth["items"].GetArray()) want.push_back(TruthPrint(k.kind, o));
      }
      std::sort(want.begin(), want.end());
      const std::vector<std::string> got = CachePrints(k.kind, world_);
      if (want != got) {
        diff += std::string(k.kind) + ":\n  server:" + Join(want) + "\n  cache:" + Join(got) + "\n";
      }
    }
    return diff;
  }

  // Applies the informer's deltas until the cache equals the truth, or `timeout` passes.
  ::testing::AssertionResult Converged(milliseconds timeout = 5000ms) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string diff;
    while (true) {
      ClusterChanges changes;
      informer_->Apply(world_, changes);
      diff = informer_->Synced() ? Difference() : "the informer has not synced";
      if (diff.empty()) return ::testing::AssertionSuccess();
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(10ms);
    }
    std::lock_guard<std::mutex> lock(log_mu_);
    return ::testing::AssertionFailure()
           << "the cache did not converge within " << timeout.count() << " ms:\n"
           << diff << "informer log:" << Join(informer_log_);
  }

  // Waits until every reflector's watch is registered on the server, so that a fault added next
  // cannot miss a watch request already on its way.
  ::testing::AssertionResult WatchesOpen() {
    const int want = static_cast<int>(kinds_.size());
    if (WaitFor([&] { return server_.OpenWatches() == want; })) {
      return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << server_.OpenWatches() << " watches open, not " << want;
  }

  static bool WaitFor(const std::function<bool()>& done, milliseconds timeout = 5000ms) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(10ms);
    }
    return true;
  }

  // The logged requests of `method` on exactly `path` (list or watch as `watch` says).
  std::vector<LogEntry> Requests(const std::string& method, const std::string& path,
                                 std::optional<bool> watch = std::nullopt) {
    std::vector<LogEntry> out;
    for (auto& e : server_.Log()) {
      if (e.method == method && e.path == path && (!watch || e.watch == *watch)) out.push_back(e);
    }
    return out;
  }

  informer::InformerStats Stats() const { return informer_->stats(); }

  FakeApiServer server_;
  std::shared_ptr<SleepLog> sleeps_ = std::make_shared<SleepLog>();
  std::shared_ptr<double> jitter_ = std::make_shared<double>(0.5);
  std::unique_ptr<k8s::ApiClient> client_;
  std::vector<k8s::ResourceType> kinds_;
  std::unique_ptr<informer::WatchHub> hub_;
  std::unique_ptr<informer::Informer> informer_;
  std::vector<std::unique_ptr<informer::Informer>> others_;
  ClusterState world_;
  std::mutex log_mu_;
  std::vector<std::string> informer_log_;
};

const std::string kPods = "/api/v1/pods";
const std::string kNodes = "/api/v1/nodes";
const std::string kBindRequests =
    "/apis/scheduling.run.ai/v1alpha2/namespaces/default/bindrequests";

std::string WatchRule(const std::string& path, const std::string& action, int times = 1) {
  return R"({"method":"GET","path":)" + Quote(path + "$") + R"(,"watch":true,"times":)" +
         std::to_string(times) + R"(,"action":)" + action + "}";
}

std::string ListRule(const std::string& path, const std::string& action, int times = 1,
                     const std::string& query = "") {
  std::string rule = R"({"method":"GET","path":)" + Quote(path + "$") + R"(,"watch":false,)";
  if (!query.empty()) rule += R"("query":)" + Quote(query) + ",";
  return rule + R"("times":)" + std::to_string(times) + R"(,"action":)" + action + "}";
}

std::string MethodRule(const std::string& method, const std::string& path,
                       const std::string& action, int times) {
  return R"({"method":)" + Quote(method) + R"(,"path":)" + Quote(path + "$") + R"(,"times":)" +
         std::to_string(times) + R"(,"action":)" + action + "}";
}

std::string PostRule(const std::string& path, const std::string& action, int times) {
  return MethodRule("POST", path, action, times);
}

// ---- the informer, fault by fault ----

using FakeApiInformer = FakeApi;

TEST_F(FakeApiInformer, ListsEveryKindInPagesAndMatchesTheServer) {
  Seed();
  StartInformer(kAllKinds);
  ASSERT_TRUE(Converged());
  const auto lists = Requests("GET", kPods, false);
  ASSERT_EQ(lists.size(), 3u) << "five pods in pages of two";
  EXPECT_FALSE(QueryParam(lists[0].query, "continue"));
  EXPECT_TRUE(QueryParam(lists[1].query, "continue"));
  EXPECT_TRUE(QueryParam(lists[2].query, "continue"));
  for (const auto& l : lists) EXPECT_EQ(QueryParam(l.query, "limit"), "2");
  const auto s = Stats();
  EXPECT_EQ(s.lists, 5);
  EXPECT_EQ(s.list_errors, 0);
  EXPECT_EQ(s.decode_errors, 0);
}

TEST_F(FakeApiInformer, FollowsCreatesUpdatesAndDeletesOfEveryKind) {
  Seed();
  StartInformer(kAllKinds);
  ASSERT_TRUE(Converged());
  server_.Ops(
      {Op("create", PodJson("p6")), Op("update", PodJson("p2", "Running", "n2", {{"app", "z"}})),
       Op("delete", PodJson("p3")), Op("create", NodeJson("n3")),
       Op("update", NodeJson("n1", {{"zone", "c"}})), Op("update", QueueJson("team-b", "team-a")),
       Op("delete", PodGroupJson("pg2", "")), Op("create", BindRequestJson("p2", "n2"))});
  ASSERT_TRUE(Converged());
  const auto s = Stats();
  EXPECT_GE(s.events, 8);
  EXPECT_EQ(s.lists, 5);
  EXPECT_EQ(s.watch_errors, 0);
  EXPECT_EQ(s.relists_gone, 0);
}

TEST_F(FakeApiInformer, ResumesADroppedWatchFromItsLastEventWithoutRelisting) {
  // The first watch drops right after its headers, the second after one event.
  server_.AddFault(WatchRule(kPods, R"({"drop_after_events":0})"));
  server_.AddFault(WatchRule(kPods, R"({"drop_after_events":1})"));
  server_.Ops(
      {Op("create", PodJson("p1")), Op("create", PodJson("p2")), Op("create", PodJson("p3"))});
  StartInformer({res::kPod});
  ASSERT_TRUE(Converged());
  ASSERT_TRUE(WaitFor([&] {
    return Requests("GET", kPods, true).size() >= 2 && server_.OpenWatches() == 1;
  })) << "the informer did not watch again after the first drop";
  const rapidjson::Document batch = server_.Ops(
      {Op("create", PodJson("p4")), Op("update", PodJson("p1", "Running", "n1")),
       Op("delete", PodJson("p2")), Op("create", PodJson("p5", "Pending", "", {{"a", "b"}}))});
  const std::string first_rv = StrAt(batch["objects"][0], {"metadata", "resourceVersion"});
  ASSERT_TRUE(Converged());
  const auto watches = Requests("GET", kPods, true);
  ASSERT_GE(watches.size(), 3u);
  EXPECT_EQ(watches[1].fault, "drop_after_events");
  EXPECT_EQ(QueryParam(watches[2].query, "resourceVersion"), first_rv)
      << "the third watch resumes after the one event the second delivered";
  const auto s = Stats();
  EXPECT_GE(s.watch_errors, 2);
  EXPECT_EQ(s.lists, 1);
  EXPECT_EQ(s.relists_gone, 0);
  EXPECT_EQ(Requests("GET", kPods, false).size(), 2u) << "no list after the first";
}

TEST_F(FakeApiInformer, RelistsAfterCompactionAndForgetsObjectsDeletedWhileDisconnected) {
  Seed();
  StartInformer(kAllKinds);
  ASSERT_TRUE(Converged());
  ASSERT_TRUE(WatchesOpen());
  // Disconnect every watch and keep them out (503) while the server moves on, then compact.
  server_.AddFault(R"({"method":"GET","watch":true,"times":-1,"action":{"status":503}})");
  server_.CloseWatches();
  ASSERT_TRUE(WaitFor([&] { return server_.OpenWatches() == 0; }));
  server_.Ops({Op("delete", PodJson("p1")), Op("delete", NodeJson("n2")),
               Op("delete", PodGroupJson("pg2", "")), Op("delete", BindRequestJson("p1", "n1")),
               Op("create", PodJson("p6")), Op("create", NodeJson("n3")),
               Op("update", PodJson("p2", "Running", "n1")), Op("create", QueueJson("team-c")),
               Op("create", PodGroupJson("pg3", "team-c"))});
  server_.Compact();
  server_.ClearFaults();
  ASSERT_TRUE(Converged());
  ASSERT_TRUE(WaitFor([&] { return Stats().relists_gone == 5; }))
      << "every kind's watch resumed from a compacted version: relists " << Stats().relists_gone;
  EXPECT_EQ(Stats().lists, 10);
  EXPECT_GE(Stats().watch_errors, 1);
  // Removals shifted the cache's vectors; later events must still land on the right objects.
  server_.Ops({Op("update", PodJson("p6", "Running", "n3")), Op("delete", PodJson("p3")),
               Op("update", NodeJson("n3", {{"zone", "d"}})), Op("delete", NodeJson("n1"))});
  ASSERT_TRUE(Converged());
}

TEST_F(FakeApiInformer, RelistsWhenAWatchIsAnsweredWithPlainHttp410) {
  server_.AddFault(WatchRule(kNodes, R"({"status":410})"));
  server_.Ops({Op("create", NodeJson("n1")), Op("create", NodeJson("n2"))});
  StartInformer({res::kNode});
  ASSERT_TRUE(Converged());
  ASSERT_TRUE(WaitFor([&] { return Stats().relists_gone == 1 && Stats().lists == 2; }));
  server_.Ops({Op("create", NodeJson("n3")), Op("delete", NodeJson("n1"))});
  ASSERT_TRUE(Converged());
  EXPECT_EQ(Stats().relists_gone, 1);
}

TEST_F(FakeApiInformer, RestartsAPagedListWhoseContinueTokenExpired) {
  server_.Ops({Op("create", PodJson("p1")), Op("create", PodJson("p2")),
               Op("create", PodJson("p3")), Op("create", PodJson("p4")),
               Op("create", PodJson("p5"))});
  // The second page is held back; the server compacts meanwhile, so its token expires (410).
  server_.AddFault(ListRule(kPods, R"({"delay_ms":1500})", 1, "continue="));
  StartInformer({res::kPod});
  ASSERT_TRUE(WaitFor([&] {
    auto l = Requests("GET", kPods, false);
    return l.size() >= 2 && QueryParam(l[1].query, "continue");
  }));
  server_.Ops({Op("delete", PodJson("p1")), Op("create", PodJson("p6")),
               Op("update", PodJson("p3", "Pending", "", {{"moved", "yes"}}))});
  server_.Compact();
  ASSERT_TRUE(Converged()) << "p1, listed on the first page, must be forgotten";
  const auto lists = Requests("GET", kPods, false);
  ASSERT_GE(lists.size(), 3u);
  EXPECT_EQ(lists[1].fault, "delay_ms");
  EXPECT_EQ(lists[1].status, 410);
  EXPECT_FALSE(QueryParam(lists[2].query, "continue")) << "the list starts over";
  EXPECT_EQ(lists[2].status, 200);
  const auto s = Stats();
  EXPECT_EQ(s.lists, 1);
  EXPECT_EQ(s.list_errors, 0);
  EXPECT_EQ(s.relists_gone, 0);
}

TEST_F(FakeApiInformer, HonoursRetryAfterOfA429ThroughTheInjectedClock) {
  server_.AddFault(ListRule(kNodes, R"({"status":429,"retry_after":3})"));
  server_.Ops({Op("create", NodeJson("n1")), Op("create", NodeJson("n2"))});
  StartInformer({res::kNode});
  ASSERT_TRUE(Converged());
  EXPECT_EQ(sleeps_->Get(), std::vector<milliseconds>{3000ms});
  const auto lists = Requests("GET", kNodes, false);
  ASSERT_EQ(lists.size(), 2u);
  EXPECT_EQ(lists[0].status, 429);
  EXPECT_EQ(lists[1].status, 200);
  EXPECT_EQ(Stats().list_errors, 0);
}

TEST_F(FakeApiInformer, RetriesServerErrorsOnAListWithExponentialBackoff) {
  server_.AddFault(ListRule(kNodes, R"({"status":500})", 2));
  server_.AddFault(ListRule(kNodes, R"({"status":503})", 1));
  server_.Ops({Op("create", NodeJson("n1"))});
  StartInformer({res::kNode});
  ASSERT_TRUE(Converged());
  EXPECT_EQ(sleeps_->Get(), (std::vector<milliseconds>{75ms, 150ms, 300ms}));
  const auto lists = Requests("GET", kNodes, false);
  ASSERT_EQ(lists.size(), 4u);
  EXPECT_EQ(lists[3].status, 200);
  EXPECT_EQ(Stats().list_errors, 0);
  EXPECT_EQ(Stats().lists, 1);
}

TEST_F(FakeApiInformer, AListFailingEveryAttemptIsRetriedByTheReflector) {
  server_.AddFault(ListRule(kNodes, R"({"status":500})", 5));  // 4 attempts, then 1 more
  server_.Ops(
      {Op("create", NodeJson("n1")), Op("create", NodeJson("n2")), Op("create", NodeJson("n3"))});
  StartInformer({res::kNode});
  ASSERT_TRUE(Converged());
  EXPECT_EQ(sleeps_->Get(), (std::vector<milliseconds>{75ms, 150ms, 300ms, 75ms}));
  EXPECT_EQ(Stats().list_errors, 1);
  EXPECT_EQ(Stats().lists, 2);
}

TEST_F(FakeApiInformer, RetriesATruncatedListPageWithTheSameContinueToken) {
  server_.Ops(
      {Op("create", PodJson("p1")), Op("create", PodJson("p2")), Op("create", PodJson("p3"))});
  server_.AddFault(ListRule(kPods, R"({"truncate_after_bytes":64})", 1, "continue="));
  StartInformer({res::kPod});
  ASSERT_TRUE(Converged());
  const auto lists = Requests("GET", kPods, false);
  ASSERT_EQ(lists.size(), 3u);
  EXPECT_EQ(lists[1].fault, "truncate_after_bytes");
  EXPECT_EQ(lists[2].query, lists[1].query);
  EXPECT_EQ(sleeps_->Get().size(), 1u);
  EXPECT_EQ(Stats().list_errors, 0);
}

TEST_F(FakeApiInformer, WaitsOutSlowListsAndWatchesWithoutRetrying) {
  server_.AddFault(ListRule(kNodes, R"({"delay_ms":300})"));
  server_.AddFault(WatchRule(kNodes, R"({"delay_ms":300})"));
  server_.Ops({Op("create", NodeJson("n1"))});
  StartInformer({res::kNode});
  ASSERT_TRUE(Converged());
  server_.Ops({Op("create", NodeJson("n2"))});
  ASSERT_TRUE(Converged());
  EXPECT_TRUE(sleeps_->Get().empty());
  EXPECT_EQ(Requests("GET", kNodes, false).size(), 1u);
  EXPECT_EQ(Stats().watch_errors, 0);
}

TEST_F(FakeApiInformer, RecoversFromAHungWatch) {
  server_.Ops({Op("create", NodeJson("n1")), Op("create", NodeJson("n2"))});
  StartInformer({res::kNode});
  ASSERT_TRUE(Converged());
  ASSERT_TRUE(WatchesOpen());
  server_.AddFault(WatchRule(kNodes, R"({"hang":true,"hang_seconds":1})"));
  server_.CloseWatches();
  ASSERT_TRUE(WaitFor([&] {
    for (const auto& w : Requests("GET", kNodes, true)) {
      if (w.fault == "hang") return true;
    }
    return false;
  }));
  server_.Ops({Op("create", NodeJson("n3")), Op("delete", NodeJson("n1"))});
  ASSERT_TRUE(Converged(10000ms));
  const auto watches = Requests("GET", kNodes, true);
  ASSERT_GE(watches.size(), 3u);
  EXPECT_EQ(watches[1].fault, "hang");
  EXPECT_FALSE(watches[1].status) << "a hung request is never answered";
  EXPECT_EQ(Stats().watch_errors, 1);
  EXPECT_EQ(Stats().lists, 1);
  EXPECT_EQ(Stats().relists_gone, 0);
}

// An assumed write (the scheduler's own) older than what the watch already delivered for the
// same key, here the object's deletion, must not bring it back.
TEST_F(FakeApiInformer, AnAssumedWriteOlderThanAWatchedDeleteDoesNotResurrectTheObject) {
  StartInformer({res::kBindRequest});
  ASSERT_TRUE(Converged());
  const rapidjson::Document created = server_.Ops({Op("create", BindRequestJson("p1", "n1"))});
  const std::string response = ToJson(created["objects"][0]);
  server_.Ops({Op("delete", BindRequestJson("p1", "n1"))});
  ASSERT_TRUE(WaitFor([&] { return Stats().events >= 2; }));
  ASSERT_TRUE(Converged());
  auto parsed = doc::ParseJson(response);
  ASSERT_TRUE(parsed.ok());
  informer_->Assume(res::kBindRequest, parsed->Roots()[0]);
  ClusterChanges changes;
  informer_->Apply(world_, changes);
  EXPECT_EQ(Difference(), "");
}

// An assumed create is in the cache before the watch delivers it; the echo does not double it.
TEST_F(FakeApiInformer, AnAssumedCreateShowsAtOnceAndItsEchoIsANoOp) {
  StartInformer({res::kBindRequest});
  ASSERT_TRUE(Converged());
  ASSERT_TRUE(WatchesOpen());
  server_.AddFault(R"({"method":"GET","watch":true,"times":-1,"action":{"status":503}})");
  server_.CloseWatches();
  ASSERT_TRUE(WaitFor([&] { return server_.OpenWatches() == 0; }));
  const rapidjson::Document created = server_.Ops({Op("create", BindRequestJson("p1", "n1"))});
  auto parsed = doc::ParseJson(ToJson(created["objects"][0]));
  ASSERT_TRUE(parsed.ok());
  informer_->Assume(res::kBindRequest, parsed->Roots()[0]);
  ClusterChanges changes;
  informer_->Apply(world_, changes);
  EXPECT_EQ(Difference(), "");
  EXPECT_TRUE(changes.bind_requests);
  const int64_t events = Stats().events;
  server_.ClearFaults();
  ASSERT_TRUE(WaitFor([&] { return Stats().events > events; })) << "the watch echoes the create";
  ASSERT_TRUE(Converged());
  server_.Ops({Op("update", BindRequestJson("p1", "n2"))});
  ASSERT_TRUE(Converged());
}

// ---- optional kinds: APIs a cluster may not serve (DRA before 1.34, a CRD not installed) ----

const std::string kSlices = "/apis/resource.k8s.io/v1/resourceslices";
const std::string kClasses = "/apis/resource.k8s.io/v1/deviceclasses";
const std::string kNodeTopologies = "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies";

// A group the server does not serve: every request on `path` answers `status` until cleared.
std::string NotServedRule(const std::string& path, int status = 404) {
  return R"({"method":"GET","path":)" + Quote(path + "$") + R"(,"times":-1,"action":{"status":)" +
         std::to_string(status) + "}}";
}

size_t LogCount(std::mutex& mu, const std::vector<std::string>& log, const std::string& what) {
  std::lock_guard<std::mutex> lock(mu);
  return static_cast<size_t>(std::count_if(log.begin(), log.end(), [&](const std::string& l) {
    return l.find(what) != std::string::npos;
  }));
}

std::vector<std::string_view> KindNames(const std::vector<k8s::ResourceType>& types) {
  std::vector<std::string_view> out;
  for (const auto& t : types) out.push_back(t.kind);
  return out;
}

using FakeApiOptionalKinds = FakeApi;

TEST_F(FakeApiOptionalKinds, NotServedCountsAsListedEmptyIsLoggedOnceAndIsWatchedOnceServed) {
  server_.Ops({Op("create", NodeJson("n1")), Op("create", SliceJson("n1-gpus", "n1")),
               Op("create", NodeTopologyJson("n1", "4"))});
  server_.AddFault(NotServedRule(kSlices));
  server_.AddFault(NotServedRule(kNodeTopologies));
  StartInformer({res::kNode}, {res::kResourceSlice, res::kNodeResourceTopology});
  ASSERT_TRUE(informer_->WaitForFirstLists(5000ms)) << "a kind not served must not block";
  ClusterChanges changes;
  informer_->Apply(world_, changes);
  EXPECT_TRUE(informer_->Synced());
  EXPECT_EQ(world_.nodes.size(), 1u);
  EXPECT_TRUE(world_.dra.slices.empty());
  EXPECT_TRUE(world_.node_topologies.empty());
  EXPECT_EQ(KindNames(informer_->AbsentKinds()),
            (std::vector<std::string_view>{"ResourceSlice", "NodeResourceTopology"}));
  // Re-checked every recheck_absent (50 ms here), said once.
  ASSERT_TRUE(WaitFor([&] { return Stats().lists_absent >= 6; }));
  EXPECT_EQ(Stats().kinds_absent, 2);
  EXPECT_EQ(Stats().list_errors, 0);
  EXPECT_EQ(LogCount(log_mu_, informer_log_,
                     "resource.k8s.io/v1 resourceslices not served; counted as empty, "
                     "re-checking every 50ms"),
            1u);
  EXPECT_EQ(LogCount(log_mu_, informer_log_, "noderesourcetopologies not served"), 1u);
  EXPECT_TRUE(Requests("GET", kSlices, true).empty()) << "no watch of a kind not served";
  // The API is installed: the next re-check lists it, and its watch follows.
  server_.ClearFaults();
  ASSERT_TRUE(Converged());
  EXPECT_EQ(world_.dra.slices.size(), 1u);
  EXPECT_EQ(world_.node_topologies.size(), 1u);
  EXPECT_TRUE(informer_->AbsentKinds().empty());
  EXPECT_EQ(Stats().kinds_absent, 0);
  EXPECT_EQ(LogCount(log_mu_, informer_log_, "resourceslices is served now"), 1u);
  ASSERT_TRUE(WaitFor([&] { return server_.OpenWatches() == 3; }));
  // Deltas of the optional kinds reach the world, and rebuild the snapshot.
  server_.Ops({Op("create", SliceJson("n2-gpus", "n2")), Op("update", NodeTopologyJson("n1", "8")),
               Op("create", NodeTopologyJson("n2", "2"))});
  ASSERT_TRUE(Converged());
  server_.Ops({Op("delete", SliceJson("n1-gpus", "n1"))});
  ASSERT_TRUE(Converged());
  ASSERT_EQ(world_.dra.slices.size(), 1u);
  EXPECT_EQ(world_.dra.slices[0].meta.name, "n2-gpus");
}

TEST_F(FakeApiOptionalKinds, ADeltaOfAnOptionalKindRebuildsTheSnapshot) {
  StartInformer({}, {res::kNodeResourceTopology, res::kDeviceClass});
  ASSERT_TRUE(Converged());
  ASSERT_TRUE(WaitFor([&] { return server_.OpenWatches() == 2; }));
  for (const std::string& op :
       {Op("create", NodeTopologyJson("n1", "4")), Op("update", NodeTopologyJson("n1", "6")),
        Op("delete", NodeTopologyJson("n1", "6")),
        Op("create", DeviceClassJson("gpu.nvidia.com"))}) {
    const int64_t events = Stats().events;
    server_.Ops({op});
    ASSERT_TRUE(WaitFor([&] { return Stats().events > events; })) << op;
    ClusterChanges changes;
    EXPECT_EQ(informer_->Apply(world_, changes), 1u) << op;
    EXPECT_TRUE(changes.rebuild) << op;
  }
  EXPECT_EQ(Difference(), "");
  ASSERT_EQ(world_.dra.classes.size(), 1u);
}

TEST_F(FakeApiOptionalKinds, ForbiddenIsLoggedOnceNamingTheMissingRight) {
  server_.Ops({Op("create", NodeTopologyJson("n1", "4"))});
  server_.AddFault(NotServedRule(kNodeTopologies, 403));
  StartInformer({}, {res::kNodeResourceTopology});
  ASSERT_TRUE(informer_->WaitForFirstLists(5000ms));
  ASSERT_TRUE(WaitFor([&] { return Stats().lists_absent >= 3; }));
  EXPECT_EQ(LogCount(log_mu_, informer_log_,
                     "topology.node.k8s.io/v1alpha2 noderesourcetopologies forbidden (403): the "
                     "account lacks list and watch on "
                     "noderesourcetopologies.topology.node.k8s.io"),
            1u);
  EXPECT_EQ(Stats().kinds_absent, 1);
  EXPECT_EQ(Stats().list_errors, 0);
  server_.ClearFaults();  // the right granted
  ASSERT_TRUE(Converged());
  EXPECT_EQ(world_.node_topologies.size(), 1u);
}

TEST_F(FakeApiOptionalKinds, AnApiThatGoesAwayEmptiesTheKind) {
  server_.Ops(
      {Op("create", NodeTopologyJson("n1", "4")), Op("create", NodeTopologyJson("n2", "4"))});
  StartInformer({}, {res::kNodeResourceTopology});
  ASSERT_TRUE(Converged());
  ASSERT_TRUE(WaitFor([&] { return server_.OpenWatches() == 1; }));
  // The CRD is deleted: its watch ends, and every request on its path answers 404.
  server_.AddFault(NotServedRule(kNodeTopologies));
  server_.CloseWatches();
  ASSERT_TRUE(WaitFor([&] {
    ClusterChanges changes;
    informer_->Apply(world_, changes);
    return world_.node_topologies.empty() && Stats().kinds_absent == 1;
  })) << "still "
      << world_.node_topologies.size() << " NodeResourceTopologies";
  EXPECT_TRUE(informer_->Synced());
  EXPECT_GE(LogCount(log_mu_, informer_log_,
                     "watch: topology.node.k8s.io/v1alpha2 noderesourcetopologies not found"),
            1u);
  EXPECT_EQ(LogCount(log_mu_, informer_log_, "noderesourcetopologies not served"), 1u);
  server_.ClearFaults();
  ASSERT_TRUE(Converged());
  EXPECT_EQ(world_.node_topologies.size(), 2u);
}

TEST_F(FakeApiOptionalKinds, ARequiredKindAnswered404IsAListErrorAndBlocksTheSync) {
  server_.AddFault(NotServedRule(kNodes));
  StartInformer({res::kNode});
  EXPECT_FALSE(informer_->WaitForFirstLists(300ms));
  EXPECT_GE(Stats().list_errors, 1);
  EXPECT_EQ(Stats().lists_absent, 0);
  server_.ClearFaults();
  ASSERT_TRUE(Converged());
}

// ---- the client on its own ----

using FakeApiClient = FakeApi;

TEST_F(FakeApiClient, ARequestTimeOutEndsAHungRequestWhichIsThenRetried) {
  server_.AddFault(ListRule(kNodes, R"({"hang":true,"hang_seconds":30})"));
  k8s::HttpRequest req;
  req.path = kNodes;
  req.timeout = 300ms;
  const auto start = std::chrono::steady_clock::now();
  const k8s::HttpResponse r = client_->Call(req);
  EXPECT_TRUE(r.ok()) << r.status << " " << r.transport_error;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s) << "the 30 s hang was waited out";
  EXPECT_EQ(sleeps_->Get(), std::vector<milliseconds>{75ms});
  const auto gets = Requests("GET", kNodes);
  ASSERT_EQ(gets.size(), 2u);
  EXPECT_EQ(gets[0].fault, "hang");
  EXPECT_EQ(gets[1].status, 200);
}

TEST_F(FakeApiClient, ATruncatedBodyIsATransportErrorAndIsRetried) {
  server_.Ops({Op("create", NodeJson("n1")), Op("create", NodeJson("n2"))});
  server_.AddFault(ListRule(kNodes, R"({"truncate_after_bytes":40})"));
  k8s::HttpRequest req;
  req.path = kNodes;
  const k8s::HttpResponse cut = client_->http().Do(req);
  EXPECT_FALSE(cut.ok());
  EXPECT_FALSE(cut.transport_error.empty());
  EXPECT_LE(cut.body.size(), 40u);
  server_.AddFault(ListRule(kNodes, R"({"truncate_after_bytes":40})"));
  const k8s::HttpResponse r = client_->Get(kNodes);
  EXPECT_TRUE(r.ok());
  EXPECT_NE(r.body.find("\"n2\""), std::string::npos);
}

TEST_F(FakeApiClient, ClientErrorsAreReturnedWithoutRetry) {
  EXPECT_EQ(client_->Get(kNodes + "/missing").status, 404);
  server_.Ops({Op("create", NodeJson("n1"))});
  server_.AddFault(R"({"method":"PUT","times":1,"action":{"status":409}})");
  EXPECT_EQ(client_->Update(kNodes + "/n1", NodeJson("n1")).status, 409);
  EXPECT_TRUE(sleeps_->Get().empty());
  EXPECT_EQ(server_.Log().size(), 2u);
}

// ---- no bind lost or doubled ----

class FakeApiCommit : public FakeApi {
 protected:
  void SetUp() override {
    FakeApi::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    std::vector<std::string> ops = {Op("create", NodeJson("n1")), Op("create", NodeJson("n2"))};
    for (int i = 1; i <= 12; ++i) ops.push_back(Op("create", PodJson("p" + std::to_string(i))));
    server_.Ops(ops);
  }

  static scheduler::Decisions Binds(int pods, const std::string& node = "n1") {
    scheduler::Decisions d;
    for (int i = 1; i <= pods; ++i) {
      const std::string name = "p" + std::to_string(i);
      d.binds.push_back({{"default", name, "uid-" + name}, node, {}, "Regular", 0, "0.00"});
    }
    return d;
  }

  scheduler::CommitResult Commit(const scheduler::Decisions& d, int max_in_flight = 1,
                                 const k8s::ApiClient* client = nullptr) {
    scheduler::CommitOptions o;
    o.max_in_flight = max_in_flight;
    scheduler::Committer c(client ? *client : *client_, informer_.get(), o);
    const scheduler::CommitResult r = c.Commit(d, 1735732800);
    // Events go out in the background and a destroyed Committer drops what is queued.
    EXPECT_TRUE(c.FlushBackground(std::chrono::seconds(10)));
    return r;
  }

  // The server's BindRequests, "name pod=... node=..." each.
  std::vector<std::string> ServerBindRequests() {
    std::vector<std::string> out;
    const rapidjson::Document truth = server_.Objects(res::kBindRequest);
    for (const auto& o : truth["items"].GetArray()) {
      out.push_back(StrAt(o, {"metadata", "name"}) + " pod=" + StrAt(o, {"spec", "podName"}) +
                    " node=" + StrAt(o, {"spec", "selectedNode"}));
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  static std::vector<std::string> Expected(int pods, const std::string& node = "n1") {
    std::vector<std::string> out;
    for (int i = 1; i <= pods; ++i) {
      const std::string name = "p" + std::to_string(i);
      out.push_back(name + " pod=" + name + " node=" + node);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  size_t Count(const std::vector<LogEntry>& log, std::optional<long> status) {
    return static_cast<size_t>(std::count_if(
        log.begin(), log.end(), [&](const LogEntry& e) { return e.status == status; }));
  }
};

TEST_F(FakeApiCommit, ABindRequestCarriesTheClaimsAllocations) {
  scheduler::Decisions d = Binds(1);
  d.binds[0].claims.push_back({"gpu", {{"gpus", "gpu.nvidia.com", "n1", "gpu-3"}}, "n1"});
  const auto r = Commit(d);
  ASSERT_EQ(r.binds, 1) << (r.errors.empty() ? "" : r.errors[0]);
  const rapidjson::Document truth = server_.Objects(res::kBindRequest);
  ASSERT_EQ(truth["items"].GetArray().Size(), 1u);
  const auto& spec = truth["items"][0]["spec"];
  const auto& claim = spec["resourceClaimAllocations"][0];
  EXPECT_STREQ(claim["name"].GetString(), "gpu");
  const auto& result = claim["allocation"]["devices"]["results"][0];
  EXPECT_STREQ(result["request"].GetString(), "gpus");
  EXPECT_STREQ(result["driver"].GetString(), "gpu.nvidia.com");
  EXPECT_STREQ(result["pool"].GetString(), "n1");
  EXPECT_STREQ(result["device"].GetString(), "gpu-3");
  const auto& field = claim["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0];
  EXPECT_STREQ(field["key"].GetString(), "metadata.name");
  EXPECT_STREQ(field["values"][0].GetString(), "n1");
}

TEST_F(FakeApiCommit, ABindRequestCarriesTheExtendedResourceClaim) {
  scheduler::Decisions d = Binds(1);
  ExtendedClaimAllocation e;
  e.requests = {{"container-0-request-1",
                 "nic.example.com",
                 DeviceAllocationMode::kExactCount,
                 2,
                 {},
                 false}};
  e.mappings = {{"main", "example.com/nic", "container-0-request-1"}};
  e.devices = {{"container-0-request-1", "nic.example.com", "n1", "nic-0"},
               {"container-0-request-1", "nic.example.com", "n1", "nic-1"}};
  e.node = "n1";
  d.binds[0].extended = e;
  const auto r = Commit(d);
  ASSERT_EQ(r.binds, 1) << (r.errors.empty() ? "" : r.errors[0]);
  const rapidjson::Document truth = server_.Objects(res::kBindRequest);
  ASSERT_EQ(truth["items"].GetArray().Size(), 1u);
  const auto& ext = truth["items"][0]["spec"]["extendedResourceClaimAllocation"];
  EXPECT_EQ(ext["allocation"]["devices"]["results"].Size(), 2u);
  EXPECT_STREQ(ext["allocation"]["devices"]["results"][1]["device"].GetString(), "nic-1");
  EXPECT_STREQ(ext["deviceRequests"][0]["exactly"]["deviceClassName"].GetString(),
               "nic.example.com");
  EXPECT_EQ(ext["deviceRequests"][0]["exactly"]["count"].GetInt(), 2);
  EXPECT_STREQ(ext["containerMappings"][0]["resourceName"].GetString(), "example.com/nic");
  // The binder reads it back as written.
  ClusterState back;
  rapidjson::StringBuffer text;
  rapidjson::Writer<rapidjson::StringBuffer> writer(text);
  truth["items"][0].Accept(writer);
  const Status decoded = DecodeJsonText(text.GetString(), "bindrequest", back);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  ASSERT_TRUE(back.bind_requests.at(0).extended_allocation);
  EXPECT_EQ(*back.bind_requests[0].extended_allocation, e);
}

TEST_F(FakeApiCommit, ACreateRefusedWith500IsRetriedAndCreatedOnce) {
  server_.AddFault(PostRule(kBindRequests, R"({"status":500})", 2));
  const auto r = Commit(Binds(4));
  EXPECT_EQ(r.binds, 4);
  EXPECT_EQ(r.failed, 0) << (r.errors.empty() ? "" : r.errors[0]);
  EXPECT_EQ(ServerBindRequests(), Expected(4));
  const auto posts = Requests("POST", kBindRequests);
  EXPECT_EQ(posts.size(), 6u);
  EXPECT_EQ(Count(posts, 500), 2u);
  EXPECT_EQ(Count(posts, 201), 4u);
}

TEST_F(FakeApiCommit, ACreateAppliedButAnswered500IsAcceptedOnceOnItsRetrys409) {
  StartInformer({res::kBindRequest});
  ASSERT_TRUE(Converged());
  server_.AddFault(PostRule(kBindRequests, R"({"apply_then_status":500})", -1));
  const auto r = Commit(Binds(4));
  EXPECT_EQ(r.binds, 4);
  EXPECT_EQ(r.failed, 0) << (r.errors.empty() ? "" : r.errors[0]);
  EXPECT_EQ(ServerBindRequests(), Expected(4));
  const auto posts = Requests("POST", kBindRequests);
  EXPECT_EQ(posts.size(), 8u) << "each pod: applied and answered 500, retried and answered 409";
  EXPECT_EQ(Count(posts, 500), 4u);
  EXPECT_EQ(Count(posts, 409), 4u);
  for (int i = 1; i <= 4; ++i) {
    EXPECT_EQ(Requests("GET", kBindRequests + "/p" + std::to_string(i)).size(), 1u);
  }
  ASSERT_TRUE(Converged()) << "the cache holds each BindRequest once";
  EXPECT_EQ(world_.bind_requests.size(), 4u);
}

TEST_F(FakeApiCommit, AThrottledCreateWaitsOutRetryAfterAndCreatesOnce) {
  server_.AddFault(PostRule(kBindRequests, R"({"status":429,"retry_after":2})", 1));
  const auto r = Commit(Binds(3));
  EXPECT_EQ(r.binds, 3);
  EXPECT_EQ(r.failed, 0) << (r.errors.empty() ? "" : r.errors[0]);
  EXPECT_EQ(ServerBindRequests(), Expected(3));
  EXPECT_EQ(sleeps_->Get(), std::vector<milliseconds>{2000ms});
  const auto posts = Requests("POST", kBindRequests);
  ASSERT_EQ(posts.size(), 4u);
  EXPECT_EQ(posts[0].status, 429);
  EXPECT_EQ(Count(posts, 201), 3u);
}

TEST_F(FakeApiCommit, AnExistingBindRequestForAnotherNodeFailsTheBindAndIsKept) {
  const rapidjson::Document seeded = server_.Ops({Op("create", BindRequestJson("p1", "n2"))});
  const std::string rv = StrAt(seeded["objects"][0], {"metadata", "resourceVersion"});
  const auto r = Commit(Binds(2));
  EXPECT_EQ(r.binds, 1);
  EXPECT_EQ(r.failed, 1);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("default/p1"), std::string::npos) << r.errors[0];
  EXPECT_EQ(ServerBindRequests(),
            (std::vector<std::string>{"p1 pod=p1 node=n2", "p2 pod=p2 node=n1"}));
  const rapidjson::Document truth = server_.Objects(res::kBindRequest);
  EXPECT_EQ(StrAt(truth["items"][0], {"metadata", "resourceVersion"}), rv) << "left untouched";
  EXPECT_EQ(Requests("POST", kBindRequests).size(), 2u);
  EXPECT_EQ(Requests("GET", kBindRequests + "/p1").size(), 1u);
  for (const char* m : {"PUT", "PATCH", "DELETE"}) {
    EXPECT_TRUE(Requests(m, kBindRequests + "/p1").empty()) << m;
  }
}

TEST_F(FakeApiCommit, ACreateWhoseAnswerWasTruncatedIsAcceptedOnce) {
  server_.AddFault(PostRule(kBindRequests, R"({"truncate_after_bytes":20})", 1));
  const auto r = Commit(Binds(1));
  EXPECT_EQ(r.binds, 1);
  EXPECT_EQ(r.failed, 0) << (r.errors.empty() ? "" : r.errors[0]);
  EXPECT_EQ(ServerBindRequests(), Expected(1));
  const auto posts = Requests("POST", kBindRequests);
  ASSERT_EQ(posts.size(), 2u);
  EXPECT_EQ(posts[0].fault, "truncate_after_bytes");
  EXPECT_EQ(posts[1].status, 409);
}

TEST_F(FakeApiCommit, AnInjected409WithoutARequestFailsThisCycleAndTheNextBinds) {
  server_.AddFault(PostRule(kBindRequests, R"({"status":409})", 1));
  const auto first = Commit(Binds(1));
  EXPECT_EQ(first.binds, 0);
  EXPECT_EQ(first.failed, 1);
  EXPECT_TRUE(ServerBindRequests().empty());
  const auto second = Commit(Binds(1));
  EXPECT_EQ(second.binds, 1);
  EXPECT_EQ(second.failed, 0);
  EXPECT_EQ(ServerBindRequests(), Expected(1));
}

TEST_F(FakeApiCommit, ACreateRefusedOnEveryAttemptIsCountedFailedAndReported) {
  server_.AddFault(PostRule(kBindRequests, R"({"status":503})", -1));
  const auto r = Commit(Binds(1));
  EXPECT_EQ(r.binds, 0);
  EXPECT_EQ(r.failed, 1);
  EXPECT_TRUE(ServerBindRequests().empty());
  EXPECT_EQ(Requests("POST", kBindRequests).size(), 4u) << "max_attempts";
  const rapidjson::Document events = server_.Objects(res::kEvent);
  bool failed_binding = false;
  for (const auto& e : events["items"].GetArray()) {
    failed_binding |=
        StrAt(e, {"reason"}) == "FailedBinding" && StrAt(e, {"involvedObject", "name"}) == "p1";
  }
  EXPECT_TRUE(failed_binding);
  const rapidjson::Document pods = server_.Objects(res::kPod);
  std::string reason;
  for (const auto& p : pods["items"].GetArray()) {
    if (StrAt(p, {"metadata", "name"}) != "p1") continue;
    for (const auto& c : p["status"]["conditions"].GetArray()) {
      if (StrAt(c, {"type"}) == "PodScheduled") reason = StrAt(c, {"reason"});
    }
  }
  EXPECT_EQ(reason, "BindingError");
}

TEST_F(FakeApiCommit, ConcurrentBindsOnAFlakyServerCreateEachRequestExactlyOnce) {
  server_.AddFault(PostRule(kBindRequests, R"({"apply_then_status":500})", 6));
  server_.AddFault(PostRule(kBindRequests, R"({"status":500})", 6));
  server_.AddFault(PostRule(kBindRequests, R"({"truncate_after_bytes":10})", 3));
  // More attempts than there are faults: whatever the interleaving, every bind gets through.
  const auto patient = MakeClient(FastPolicy(20));
  const auto r = Commit(Binds(12, "n2"), 8, patient.get());
  EXPECT_EQ(r.binds, 12);
  EXPECT_EQ(r.failed, 0) << (r.errors.empty() ? "" : r.errors[0]);
  EXPECT_EQ(ServerBindRequests(), Expected(12, "n2"));
  EXPECT_GE(Requests("POST", kBindRequests).size(), 12u + 6u) << "every fault answered, retried";
}

// ---- status writes: off the cycle's path, retried on the next cycle, never repeated ----

class FakeApiStatus : public FakeApiCommit {
 protected:
  void SetUp() override {
    FakeApiCommit::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    server_.Ops({Op("create", PodGroupJson("pg1", "team-a"))});
    committer_ =
        std::make_unique<scheduler::Committer>(*client_, nullptr, scheduler::CommitOptions{});
  }
  void TearDown() override {
    committer_.reset();
    FakeApiCommit::TearDown();
  }

  // One cycle's commit, waiting for its background writes.
  scheduler::CommitResult Cycle(const scheduler::Decisions& d) {
    const scheduler::CommitResult r = committer_->Commit(d, 1735732800);
    EXPECT_TRUE(committer_->FlushBackground(std::chrono::seconds(10)));
    return r;
  }

  static scheduler::Decisions Pending(const std::string& message) {
    scheduler::Decisions d;
    d.pending.push_back(
        {{"default", "p1", "uid-p1"}, {"default", "pg1", "uid-pg1"}, message, true});
    return d;
  }

  std::string PodScheduledMessage(const std::string& pod) {
    const rapidjson::Document pods = server_.Objects(res::kPod);
    for (const auto& p : pods["items"].GetArray()) {
      if (StrAt(p, {"metadata", "name"}) != pod || !p["status"].HasMember("conditions")) continue;
      for (const auto& c : p["status"]["conditions"].GetArray()) {
        if (StrAt(c, {"type"}) == "PodScheduled") return StrAt(c, {"message"});
      }
    }
    return "";
  }

  std::string PodGroupAnnotation(const std::string& key) {
    const rapidjson::Document pgs = server_.Objects(res::kPodGroup);
    for (const auto& g : pgs["items"].GetArray()) {
      const auto& meta = g["metadata"];
      if (StrAt(g, {"metadata", "name"}) != "pg1" || !meta.HasMember("annotations")) continue;
      if (meta["annotations"].HasMember(key.c_str())) {
        return meta["annotations"][key.c_str()].GetString();
      }
    }
    return "";
  }

  std::unique_ptr<scheduler::Committer> committer_;
};

const std::string kP1Status = "/api/v1/namespaces/default/pods/p1/status";

TEST_F(FakeApiStatus, AnUnchangedPendingMessageIsWrittenOnce) {
  Cycle(Pending("0/2 nodes are available"));
  Cycle(Pending("0/2 nodes are available"));
  EXPECT_EQ(Requests("PATCH", kP1Status).size(), 1u);
  EXPECT_EQ(PodScheduledMessage("p1"), "0/2 nodes are available");
  Cycle(Pending("0/3 nodes are available"));
  EXPECT_EQ(Requests("PATCH", kP1Status).size(), 2u) << "a new message is written";
  EXPECT_EQ(PodScheduledMessage("p1"), "0/3 nodes are available");
}

TEST_F(FakeApiStatus, AConditionRefusedOnEveryAttemptIsWrittenAgainNextCycle) {
  server_.AddFault(MethodRule("PATCH", kP1Status, R"({"status":503})", 4));  // max_attempts
  const auto first = Cycle(Pending("0/2 nodes are available"));
  EXPECT_EQ(first.failed, 0) << "a status write does not fail the cycle's binds";
  EXPECT_EQ(committer_->background_stats().failed, 1);
  EXPECT_EQ(PodScheduledMessage("p1"), "");
  Cycle(Pending("0/2 nodes are available"));
  EXPECT_EQ(PodScheduledMessage("p1"), "0/2 nodes are available");
  EXPECT_EQ(Requests("PATCH", kP1Status).size(), 5u);
}

TEST_F(FakeApiStatus, StatusWritesWaitForTheCyclesBinds) {
  // The bind's create is slow; the pending pod's condition goes out only after it answered.
  server_.AddFault(PostRule(kBindRequests, R"({"delay_ms":400})", 1));
  scheduler::Decisions d = Pending("0/2 nodes are available");
  d.binds.push_back({{"default", "p2", "uid-p2"}, "n1", {}, "Regular", 0, "0.00"});
  const auto r = Cycle(d);
  EXPECT_EQ(r.binds, 1);
  const auto log = server_.Log();
  size_t bind_at = log.size(), patch_at = log.size();
  for (size_t i = 0; i < log.size(); ++i) {
    if (log[i].method == "POST" && log[i].path == kBindRequests) bind_at = std::min(bind_at, i);
    if (log[i].method == "PATCH" && log[i].path == kP1Status) patch_at = std::min(patch_at, i);
  }
  ASSERT_LT(patch_at, log.size());
  EXPECT_LT(bind_at, patch_at);
}

TEST_F(FakeApiStatus, ATimerIsPatchedInTheBackgroundAndAThrottledPatchRetried) {
  server_.AddFault(MethodRule("PATCH",
                              "/apis/scheduling.run.ai/v2alpha2/namespaces/default/podgroups/pg1",
                              R"({"status":429,"retry_after":1})", 1));
  scheduler::Decisions d;
  scheduler::PodGroupDecision g;
  g.pod_group = {"default", "pg1", "uid-pg1"};
  g.annotations = {{"kai.scheduler/last-start-timestamp", "2025-01-01T12:00:00Z"}};
  d.pod_groups.push_back(g);
  const auto r = Cycle(d);
  EXPECT_EQ(r.background, 1);
  EXPECT_EQ(PodGroupAnnotation("kai.scheduler/last-start-timestamp"), "2025-01-01T12:00:00Z");
  EXPECT_EQ(committer_->background_stats().sent, 1);
}

TEST_F(FakeApiStatus, AnEvictionDeletesOnlyThePodItWasDecidedFor) {
  const rapidjson::Document pods = server_.Objects(res::kPod);
  std::string uid;
  for (const auto& p : pods["items"].GetArray()) {
    if (StrAt(p, {"metadata", "name"}) == "p3") uid = StrAt(p, {"metadata", "uid"});
  }
  ASSERT_FALSE(uid.empty());
  scheduler::Decisions d;
  scheduler::EvictDecision stale;  // decided for an earlier pod of the same name
  stale.pod = {"default", "p2", "uid-of-a-pod-long-gone"};
  stale.pod_group = {"default", "pg1", "uid-pg1"};
  stale.action = "reclaim";
  stale.message = "reclaim for default/pg9: over quota";
  stale.gang_size = 1;
  scheduler::EvictDecision live = stale;
  live.pod = {"default", "p3", uid};
  scheduler::EvictDecision gone = stale;
  gone.pod = {"default", "no-such-pod", "uid-x"};
  d.evictions = {stale, live, gone};
  const auto r = Cycle(d);
  EXPECT_EQ(r.evictions, 1);
  EXPECT_EQ(r.failed, 1) << "the uid precondition refused the stale one";
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("p2"), std::string::npos) << r.errors[0];
  std::set<std::string> left;
  const rapidjson::Document after = server_.Objects(res::kPod);
  for (const auto& p : after["items"].GetArray()) {
    left.insert(StrAt(p, {"metadata", "name"}));
  }
  EXPECT_TRUE(left.count("p2")) << "a pod of the same name is never deleted";
  EXPECT_FALSE(left.count("p3"));
  // Each eviction's PodGroup event went out (in the background), with KAI's annotations.
  int evict_events = 0;
  const rapidjson::Document events = server_.Objects(res::kEvent);
  for (const auto& e : events["items"].GetArray()) {
    if (StrAt(e, {"reason"}) != "Evict") continue;
    ++evict_events;
    EXPECT_EQ(StrAt(e, {"metadata", "annotations", "kai.scheduler/evictor-action-type"}),
              "reclaim");
  }
  EXPECT_EQ(evict_events, 3);
}

TEST_F(FakeApiStatus, EventsThatFailAreCountedAndDoNotFailTheCycle) {
  server_.AddFault(PostRule("/api/v1/namespaces/default/events", R"({"status":500})", -1));
  const auto r = Cycle(Pending("0/2 nodes are available"));
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(committer_->background_stats().failed, 1) << "the event";
  EXPECT_EQ(committer_->background_stats().sent, 1) << "the condition";
  EXPECT_EQ(PodScheduledMessage("p1"), "0/2 nodes are available");
}

// ---- kai run's shared watch hub: one list and one watch per kind for every informer ----

using FakeApiWatchHub = FakeApi;

// The names of the pods `inf` holds after applying its deltas.
std::vector<std::string> PodNames(informer::Informer& inf, ClusterState& world) {
  ClusterChanges changes;
  inf.Apply(world, changes);
  std::vector<std::string> names;
  for (const auto& p : world.pods) names.push_back(p.meta.name);
  std::sort(names.begin(), names.end());
  return names;
}

::testing::AssertionResult HoldsPods(informer::Informer& inf, ClusterState& world,
                                     const std::vector<std::string>& want) {
  std::vector<std::string> got;
  const auto deadline = std::chrono::steady_clock::now() + 5000ms;
  while (std::chrono::steady_clock::now() < deadline) {
    got = PodNames(inf, world);
    if (got == want && inf.Synced()) return ::testing::AssertionSuccess();
    std::this_thread::sleep_for(10ms);
  }
  return ::testing::AssertionFailure() << "holds" << Join(got) << "\nwant" << Join(want);
}

const std::string kSelectAppX = "labelSelector=" + k8s::UrlEscape("app=x");

TEST_F(FakeApiWatchHub, InformersShareOneListAndOneWatchPerKindAndSeeOnlyTheirSelection) {
  Seed();
  StartHub();
  StartInformer(kAllKinds);
  ClusterState selected_world, running_world;
  informer::Informer& selected = StartOther(res::kPod, kSelectAppX);
  informer::Informer& running = StartOther(
      res::kPod, "fieldSelector=" + k8s::UrlEscape("status.phase!=Pending,spec.nodeName=n1"));
  ASSERT_TRUE(Converged());
  EXPECT_TRUE(HoldsPods(selected, selected_world, {"p1"}));
  EXPECT_TRUE(HoldsPods(running, running_world, {"p1"}));
  // p4 enters app=x, p1 leaves it (the server would tell a filtered watch of a deletion).
  server_.Ops({Op("update", PodJson("p4", "Pending", "", {{"app", "x"}})),
               Op("update", PodJson("p1", "Running", "n1", {{"app", "y"}})),
               Op("update", PodJson("p2", "Running", "n1"))});
  ASSERT_TRUE(Converged());
  EXPECT_TRUE(HoldsPods(selected, selected_world, {"p4"}));
  EXPECT_TRUE(HoldsPods(running, running_world, {"p1", "p2"}));
  EXPECT_EQ(Requests("GET", kPods, false).size(), 3u) << "one list of five pods, pages of two";
  EXPECT_EQ(Requests("GET", kPods, true).size(), 1u) << "one watch of pods for three informers";
  for (const auto& l : Requests("GET", kPods)) {
    EXPECT_FALSE(QueryParam(l.query, "labelSelector")) << "the hub lists everything: " << l.query;
  }
  const auto stats = hub_->stats();
  const auto pods =
      std::find_if(stats.begin(), stats.end(), [](const auto& k) { return k.kind == "Pod"; });
  ASSERT_NE(pods, stats.end());
  EXPECT_EQ(pods->subscribers, 3u);
  EXPECT_EQ(pods->objects, 5u);
  EXPECT_EQ(Stats().lists, 5) << "the informer reports the hub's lists of its kinds";
}

TEST_F(FakeApiWatchHub, ALateSubscriberIsGivenWhatTheHubHoldsWithoutAList) {
  Seed();
  StartHub();
  StartInformer(kAllKinds);
  ASSERT_TRUE(Converged());
  ASSERT_TRUE(WatchesOpen());
  const size_t lists = Requests("GET", kPods, false).size();
  ClusterState late_world;
  informer::Informer& late = StartOther(res::kPod, "");
  EXPECT_TRUE(HoldsPods(late, late_world, {"p1", "p2", "p3", "p4", "p5"}));
  server_.Ops({Op("delete", PodJson("p5")), Op("create", PodJson("p6"))});
  EXPECT_TRUE(HoldsPods(late, late_world, {"p1", "p2", "p3", "p4", "p6"}));
  EXPECT_EQ(Requests("GET", kPods, false).size(), lists) << "no list for the late subscriber";
  EXPECT_EQ(server_.OpenWatches(), static_cast<int>(kAllKinds.size()));
}

TEST_F(FakeApiWatchHub, ARelistAfterCompactionRemovesWhatWasDeletedWhileDisconnected) {
  Seed();
  StartHub();
  StartInformer(kAllKinds);
  ClusterState selected_world;
  informer::Informer& selected = StartOther(res::kPod, kSelectAppX);
  ASSERT_TRUE(Converged());
  ASSERT_TRUE(HoldsPods(selected, selected_world, {"p1"}));
  ASSERT_TRUE(WatchesOpen());
  server_.AddFault(R"({"method":"GET","watch":true,"times":-1,"action":{"status":503}})");
  server_.CloseWatches();
  ASSERT_TRUE(WaitFor([&] { return server_.OpenWatches() == 0; }));
  server_.Ops({Op("delete", PodJson("p1")),
               Op("create", PodJson("p7", "Pending", "", {{"app", "x"}})),
               Op("delete", NodeJson("n2"))});
  server_.Compact();
  server_.ClearFaults();
  ASSERT_TRUE(Converged());
  EXPECT_TRUE(HoldsPods(selected, selected_world, {"p7"}));
  EXPECT_TRUE(WaitFor([&] { return hub_->StatsOf(res::kPod).relists_gone == 1; }));
}

TEST_F(FakeApiWatchHub, AnOptionalKindNotServedSyncsEverySubscriberAndIsWatchedOnceServed) {
  server_.Ops({Op("create", NodeTopologyJson("n1", "4"))});
  server_.AddFault(NotServedRule(kNodeTopologies));
  StartHub();
  StartInformer({}, {res::kNodeResourceTopology});
  ASSERT_TRUE(informer_->WaitForFirstLists(5000ms));
  ASSERT_TRUE(WaitFor([&] { return Stats().kinds_absent == 1; }));
  EXPECT_EQ(KindNames(informer_->AbsentKinds()),
            std::vector<std::string_view>{"NodeResourceTopology"});
  // A late subscriber of the same kind is replayed the (empty) sync without a list of its own.
  others_.push_back(std::make_unique<informer::Informer>(
      *client_, std::vector<informer::WatchSpec>{{res::kNodeResourceTopology, "", true}},
      FastOptions()));
  others_.back()->Start();
  EXPECT_TRUE(others_.back()->WaitForFirstLists(5000ms));
  // One that wants the kind required is not served by the hub's optional reflector.
  StartOther(res::kNodeResourceTopology, "");
  server_.ClearFaults();
  ASSERT_TRUE(Converged());
  EXPECT_EQ(world_.node_topologies.size(), 1u);
  EXPECT_TRUE(informer_->AbsentKinds().empty());
  std::lock_guard<std::mutex> lock(log_mu_);
  EXPECT_NE(Join(informer_log_)
                .find("NodeResourceTopology is watched as an optional kind by "
                      "another component"),
            std::string::npos)
      << Join(informer_log_);
}

TEST_F(FakeApiWatchHub, AQueryTheHubCannotEvaluateIsWatchedOnItsOwn) {
  Seed();
  StartHub();
  ClusterState world;
  informer::Informer& own =
      StartOther(res::kPod, "fieldSelector=" + k8s::UrlEscape("spec.priority=1"));
  (void)own;
  ASSERT_TRUE(WaitFor([&] {
    for (const auto& l : Requests("GET", kPods, false)) {
      if (QueryParam(l.query, "fieldSelector")) return true;
    }
    return false;
  })) << "the informer sends its own query";
  std::lock_guard<std::mutex> lock(log_mu_);
  EXPECT_NE(Join(informer_log_).find("watching on its own"), std::string::npos)
      << Join(informer_log_);
}

}  // namespace
}  // namespace kai
