// DRA-backed extended resources (KEP-5004) through a session: the requests and mappings a pod's
// containers give, the devices a placement takes and frees, and the BindRequest's
// extendedResourceClaimAllocation (snapshot/dra.h, plugins/dynamicresources).
#include <gtest/gtest.h>

#include <string>

#include "kai/core/framework/session.h"
#include "kai/core/framework/statement.h"
#include "kai/core/k8s/decode.h"
#include "kai/daemons/scheduler/decisions.h"
#include "kai/testing/manifest.h"

namespace kai {
namespace {

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z

// node0 lists no example.com/nic; its slice has three NICs of the class that maps it. p asks
// example.com/nic in an init container (1), a sidecar (1) and its main container (2).
constexpr const char* kCluster = R"(
apiVersion: v1
kind: Node
metadata: {name: node0}
status: {allocatable: {cpu: '8', memory: 8G, pods: '110'}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: nic.example.com}
spec: {extendedResourceName: example.com/nic}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node0-nics}
spec:
  driver: nic.example.com
  pool: {name: node0}
  nodeName: node0
  devices: [{name: nic-0}, {name: nic-1}, {name: nic-2}, {name: nic-3}]
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: g, namespace: default}
spec: {queue: q, minMember: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default, annotations: {pod-group-name: g}}
spec:
  schedulerName: kai-scheduler
  initContainers:
  - name: setup
    resources: {limits: {example.com/nic: '3'}}
  - name: proxy
    restartPolicy: Always
    resources: {requests: {cpu: '1'}, limits: {example.com/nic: '1'}}
  containers:
  - name: main
    resources: {requests: {cpu: '1', memory: 1G, example.com/nic: '1'}}
---
apiVersion: v1
kind: Pod
metadata: {name: q, namespace: default, annotations: {pod-group-name: g}}
spec:
  schedulerName: kai-scheduler
  containers:
  - name: main
    resources: {limits: {example.com/nic: '2'}}
)";

ClusterState Load() { return testutil::LoadManifest(kCluster); }

class DraExtendedTest : public ::testing::Test {
 protected:
  DraExtendedTest() : state_(Load()), session_(BuildSnapshot(state_, kNow), Config()) {
    const Result<bool> opened = session_.OpenPlugins();
    EXPECT_TRUE(opened.ok()) << (opened.ok() ? "" : opened.error().message);
  }
  static SchedulerConfig Config() {
    SchedulerConfig c;
    c.plugins = {{"dynamicresources", 0, {}}};
    return c;
  }
  const DraPod& Pod() const { return *session_.snap().dra->PodOf(state_.pods[0]); }

  ClusterState state_;
  Session session_;
};

TEST_F(DraExtendedTest, ContainersGiveKubernetesRequestsAndMappings) {
  const DraPod& p = Pod();
  // Long-lived containers (the sidecar, index 1; main, index 2) each get a request; the init
  // container reuses theirs (1 + 1) and asks the third NIC itself.
  ASSERT_EQ(p.extended.size(), 3u);
  EXPECT_EQ(p.extended[0].spec.name, "container-0-request-0");
  EXPECT_EQ(p.extended[0].spec.count, 1);
  EXPECT_EQ(p.extended[1].spec.name, "container-1-request-1");  // cpu, example.com/nic
  EXPECT_EQ(p.extended[2].spec.name, "container-2-request-1");  // cpu, example.com/nic, memory
  EXPECT_EQ(p.extended[2].spec.device_class, "nic.example.com");
  std::vector<std::string> mappings;
  for (const DraContainerMapping& m : p.mappings) {
    mappings.push_back(std::string(m.container) + ">" + m.request);
  }
  EXPECT_EQ(mappings,
            (std::vector<std::string>{"proxy>container-1-request-1", "main>container-2-request-1",
                                      "setup>container-1-request-1", "setup>container-2-request-1",
                                      "setup>container-0-request-0"}));
  // The resource is unbounded on the node: the DRA predicate decides it.
  const ResourceId nic = InternResource("example.com/nic");
  EXPECT_EQ(session_.snap().nodes[0].allocatable.Scalar(nic), kDraDecides);
}

TEST_F(DraExtendedTest, PlacementTakesDevicesAndTheBindRequestCarriesThem) {
  const std::vector<PodStatus> initial = scheduler::InitialStatuses(session_.snap());
  Statement st(session_);
  st.Allocate(0, 0);
  st.Commit();
  const scheduler::Decisions d = scheduler::ExtractDecisions(session_, initial, state_);
  ASSERT_EQ(d.binds.size(), 1u);
  ASSERT_TRUE(d.binds[0].extended);
  const DraExtendedResult& e = *d.binds[0].extended;
  EXPECT_EQ(e.node, "node0");
  ASSERT_EQ(e.requests.size(), 3u);
  ASSERT_EQ(e.devices.size(), 3u);
  EXPECT_EQ(e.devices[0].request, "container-0-request-0");
  EXPECT_EQ(e.devices[0].device, "nic-0");
  EXPECT_EQ(e.devices[2].device, "nic-2");
  EXPECT_EQ(e.devices[2].pool, "node0");
  EXPECT_EQ(e.mappings.size(), 5u);
}

TEST_F(DraExtendedTest, TooFewFreeDevicesRefuseTheNodeAndEvictionFreesThem) {
  EXPECT_TRUE(session_.CheckPredicates(1, 0).Fits());
  Statement st(session_);
  st.Allocate(0, 0);  // three of the four NICs
  const NodeVerdict refused = session_.CheckPredicates(1, 0);
  EXPECT_FALSE(refused.Fits());
  EXPECT_EQ(refused.detail,
            "extended resource example.com/nic: device class nic.example.com matches no free "
            "device");
  st.Rollback(0);
  EXPECT_TRUE(session_.snap().dra->extended_session.empty());
  EXPECT_TRUE(session_.CheckPredicates(1, 0).Fits());
  st.Allocate(1, 0);
  EXPECT_EQ(session_.snap().dra->extended_session.at(1).slots.size(), 2u);
  st.Discard();
}

// r runs on node0 holding node0's one NIC through the claim the binder made; node1 has a NIC too.
constexpr const char* kHeld = R"(
apiVersion: v1
kind: Node
metadata: {name: node0}
status: {allocatable: {cpu: '8', memory: 8G, pods: '110'}}
---
apiVersion: v1
kind: Node
metadata: {name: node1}
status: {allocatable: {cpu: '8', memory: 8G, pods: '110'}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: nic.example.com}
spec: {extendedResourceName: example.com/nic}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node0-nics}
spec: {driver: nic.example.com, pool: {name: node0}, nodeName: node0, devices: [{name: nic-0}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node1-nics}
spec: {driver: nic.example.com, pool: {name: node1}, nodeName: node1, devices: [{name: nic-0}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: r-extended-resources-abcde
  namespace: default
  annotations: {resource.kubernetes.io/extended-resource-claim: 'true'}
spec:
  devices:
    requests:
    - {name: container-0-request-0, exactly: {deviceClassName: nic.example.com, count: 1}}
status:
  allocation:
    devices:
      results:
      - {request: container-0-request-0, driver: nic.example.com, pool: node0, device: nic-0}
  reservedFor: [{resource: pods, name: r, uid: r}]
---
apiVersion: v1
kind: Pod
metadata: {name: r, namespace: default}
spec:
  schedulerName: kai-scheduler
  nodeName: node0
  containers: [{name: main, resources: {limits: {example.com/nic: '1'}}}]
status: {phase: Running}
)";

TEST(DraExtendedHeld, TheBindersClaimHoldsOnItsNodeOnly) {
  ClusterState state;
  const Status decoded = DecodeManifestText(kHeld, "t.yaml", state);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  SchedulerConfig config;
  config.plugins = {{"dynamicresources", 0, {}}};
  Session session(BuildSnapshot(state, kNow), config);
  ASSERT_TRUE(session.OpenPlugins().ok());
  const DraPod& r = *session.snap().dra->PodOf(state.pods[0]);
  ASSERT_EQ(r.extended_claim, 0);
  EXPECT_TRUE(session.snap().dra->extended_session.empty());  // nothing more taken for it
  EXPECT_TRUE(session.CheckPredicates(0, 0).Fits());          // its own claim's device
  EXPECT_TRUE(session.CheckPredicates(0, 1).Fits());          // node1's free NIC, were it moved
  Statement st(session);
  st.Evict(0);
  st.Allocate(0, 1);  // moved: it takes node1's NIC for itself
  EXPECT_EQ(session.snap().dra->extended_session.at(0).node, 1);
  st.Discard();
}

TEST(DraExtendedDecode, AnExtendedResourceNameMustHaveADomain) {
  ClusterState state;
  const Status s = DecodeManifestText(
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\n"
      "spec: {extendedResourceName: nic}\n",
      "t.yaml", state);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("DeviceClass c: spec.extendedResourceName"), std::string::npos)
      << s.error().message;
}

}  // namespace
}  // namespace kai
