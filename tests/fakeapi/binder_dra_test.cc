// The binder's dynamicresources plugin (binder/dra.cc) against the fake API server
// (fake_apiserver.py): a claim gets the BindRequest's allocation and the pod in reservedFor once,
// a claim allocated already keeps its allocation, a conflicting update is read again, and
// DRA-backed extended resources get a claim of their own (made once, found again on a retried
// bind, deleted by Rollback) named in the pod's status; a claim's driver configuration (an IMEX
// channel's ComputeDomain) goes into the allocation the binder writes.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "fake_server.h"
#include "kai/daemons/binder/plugins.h"
#include "kai/kube/client/api_client.h"

namespace kai::binder {
namespace {

using fakeapi::FakeApiServer;

constexpr k8s::ResourceType kClaims{"resource.k8s.io/v1", "ResourceClaim", "resourceclaims", true};

std::string CreateOp(const std::string& object) {
  return R"({"op":"create","object":)" + object + "}";
}

std::string ClaimJson(const std::string& name, bool allocated) {
  const std::string status =
      allocated ? R"(,"status":{"allocation":{"devices":{"results":[{"request":"r",)"
                  R"("driver":"gpu.nvidia.com","pool":"n1","device":"gpu-7"}]}},)"
                  R"("reservedFor":[{"resource":"pods","name":"other","uid":"uid-other"}]})"
                : "";
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":")" +
         name +
         R"(","namespace":"default"},"spec":{"devices":{"requests":[{"name":"r","exactly":)"
         R"({"deviceClassName":"gpu.nvidia.com"}}]}})" +
         status + "}";
}

constexpr const char* kPod =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default",)"
    R"("labels":{}},"spec":{"containers":[{"name":"main"}],"resourceClaims":[)"
    R"({"name":"gpu","resourceClaimName":"c1"},{"name":"shared","resourceClaimName":"c2"}]},)"
    R"("status":{"phase":"Pending"}})";

class BinderDraFakeApi : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    const FakeApiServer::StartResult started = server_.Start(why);
    if (started == FakeApiServer::StartResult::kNoPython) GTEST_SKIP() << why;
    ASSERT_EQ(started, FakeApiServer::StartResult::kStarted) << why;
    client_ = fakeapi::QuickClient(server_);
    server_.Ops(
        {CreateOp(kPod), CreateOp(ClaimJson("c1", false)), CreateOp(ClaimJson("c2", true))});
    // The server gives the pod its uid.
    auto pod = ParsePod(client_->Get(k8s::ObjectPath(k8s::resources::kPod, "default", "p")).body);
    ASSERT_TRUE(pod.ok()) << pod.error().message;
    pod_ = *pod;
    plugin_ = MakeDynamicResources(*client_);
  }

  // The server's claim `name`.
  rapidjson::Document Claim(const std::string& name) {
    return fakeapi::ParseJson(client_->Get(k8s::ObjectPath(kClaims, "default", name)).body);
  }

  FakeApiServer server_;
  std::unique_ptr<k8s::ApiClient> client_;
  PodView pod_;
  std::unique_ptr<BindPlugin> plugin_;
};

BindRequestObject Request() {
  BindRequestObject r;
  r.pod_name = "p";
  r.selected_node = "n1";
  r.claim_allocations = {{"gpu", {{"r", "gpu.nvidia.com", "n1", "gpu-3"}}, "n1"},
                         {"shared", {{"r", "gpu.nvidia.com", "n1", "gpu-9"}}, "n1"}};
  return r;
}

TEST_F(BinderDraFakeApi, ClaimsGetTheAllocationAndThePodIsReservedOnce) {
  const BindRequestObject r = Request();
  BindContext ctx{pod_, r, {}, {}, {}};
  const Status s = plugin_->PreBind(ctx);
  ASSERT_TRUE(s.ok()) << s.error().message;
  const rapidjson::Document c1 = Claim("c1");
  const auto& result = c1["status"]["allocation"]["devices"]["results"][0];
  EXPECT_STREQ(result["device"].GetString(), "gpu-3");
  EXPECT_STREQ(c1["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]
                 ["values"][0]
                     .GetString(),
               "n1");
  ASSERT_EQ(c1["status"]["reservedFor"].Size(), 1u);
  EXPECT_EQ(std::string(c1["status"]["reservedFor"][0]["uid"].GetString()), pod_.uid);
  // c2 was allocated before: its allocation stays, the pod joins its consumers.
  const rapidjson::Document c2 = Claim("c2");
  EXPECT_STREQ(c2["status"]["allocation"]["devices"]["results"][0]["device"].GetString(), "gpu-7");
  ASSERT_EQ(c2["status"]["reservedFor"].Size(), 2u);
  EXPECT_STREQ(c2["status"]["reservedFor"][0]["name"].GetString(), "other");
  EXPECT_STREQ(c2["status"]["reservedFor"][1]["name"].GetString(), "p");
  // A retried bind changes nothing.
  ASSERT_TRUE(plugin_->PreBind(ctx).ok());
  EXPECT_EQ(Claim("c2")["status"]["reservedFor"].Size(), 2u);
}

TEST_F(BinderDraFakeApi, AConflictingUpdateIsReadAgain) {
  server_.AddFault(R"({"method":"PATCH","path":"/apis/resource.k8s.io/v1/namespaces/default/)"
                   R"(resourceclaims/c1/status$","times":2,"action":{"status":409}})");
  const BindRequestObject r = Request();
  BindContext ctx{pod_, r, {}, {}, {}};
  const Status s = plugin_->PreBind(ctx);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(Claim("c1")["status"]["reservedFor"].Size(), 1u);
}

TEST_F(BinderDraFakeApi, AMissingClaimFailsTheBindNamingIt) {
  BindRequestObject r = Request();
  r.claim_allocations[0].name = "nic";
  BindContext ctx{pod_, r, {}, {}, {}};
  const Status s = plugin_->PreBind(ctx);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("claim nic"), std::string::npos) << s.error().message;
}

TEST_F(BinderDraFakeApi, ExtendedResourcesGetAClaimOfTheirOwn) {
  BindRequestObject r;
  r.pod_name = "p";
  r.selected_node = "n1";
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
  r.extended_allocation = e;
  BindContext ctx{pod_, r, {}, {}, {}};
  ASSERT_TRUE(plugin_->PreBind(ctx).ok());
  ASSERT_FALSE(ctx.extended_claim.empty());
  const rapidjson::Document c = Claim(ctx.extended_claim);
  EXPECT_EQ(ctx.extended_claim.rfind("p-extended-resources-", 0), 0u) << ctx.extended_claim;
  EXPECT_STREQ(
      c["metadata"]["annotations"]["resource.kubernetes.io/extended-resource-claim"].GetString(),
      "true");
  EXPECT_EQ(std::string(c["metadata"]["ownerReferences"][0]["uid"].GetString()), pod_.uid);
  EXPECT_EQ(c["spec"]["devices"]["requests"][0]["exactly"]["count"].GetInt(), 2);
  EXPECT_EQ(c["status"]["allocation"]["devices"]["results"].Size(), 2u);
  EXPECT_EQ(std::string(c["status"]["reservedFor"][0]["uid"].GetString()), pod_.uid);
  const rapidjson::Document pod =
      fakeapi::ParseJson(client_->Get(k8s::ObjectPath(k8s::resources::kPod, "default", "p")).body);
  const auto& status = pod["status"]["extendedResourceClaimStatus"];
  EXPECT_EQ(std::string(status["resourceClaimName"].GetString()), ctx.extended_claim);
  EXPECT_STREQ(status["requestMappings"][0]["requestName"].GetString(), "container-0-request-1");
  // A retried bind finds the claim it made.
  BindContext again{pod_, r, {}, {}, {}};
  ASSERT_TRUE(plugin_->PreBind(again).ok());
  EXPECT_EQ(again.extended_claim, ctx.extended_claim);
  // Rollback deletes it (its delete-protection finalizer keeps it until the resource claim
  // controller lets it go) and clears the pod's status.
  ASSERT_TRUE(plugin_->Rollback(again).ok());
  const rapidjson::Document deleted = Claim(ctx.extended_claim);
  EXPECT_TRUE(deleted["metadata"].HasMember("deletionTimestamp"));
  const rapidjson::Document after =
      fakeapi::ParseJson(client_->Get(k8s::ObjectPath(k8s::resources::kPod, "default", "p")).body);
  EXPECT_TRUE(!after["status"].HasMember("extendedResourceClaimStatus") ||
              after["status"]["extendedResourceClaimStatus"].IsNull());
}

// An IMEX channel's claim (a ComputeDomain's): the status the binder writes carries the
// allocation's driver configuration, the parameters as the JSON they are.
TEST_F(BinderDraFakeApi, TheClaimsAllocationCarriesItsDriverConfig) {
  BindRequestObject r = Request();
  r.claim_allocations[0].devices = {{"channel", "compute-domain.nvidia.com", "n1", "channel-0"}};
  r.claim_allocations[0].config = {
      {DeviceConfigSource::kClass, {"channel"}, "compute-domain.nvidia.com", R"({"level":1})"},
      {DeviceConfigSource::kClaim,
       {"channel"},
       "compute-domain.nvidia.com",
       R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"ComputeDomainChannelConfig",)"
       R"("domainID":"5b0f6f4e","n":"4"})"}};
  BindContext ctx{pod_, r, {}, {}, {}};
  const Status s = plugin_->PreBind(ctx);
  ASSERT_TRUE(s.ok()) << s.error().message;
  const rapidjson::Document c1 = Claim("c1");
  const auto& config = c1["status"]["allocation"]["devices"]["config"];
  ASSERT_TRUE(config.IsArray());
  ASSERT_EQ(config.Size(), 2u);
  EXPECT_STREQ(config[0]["source"].GetString(), "FromClass");
  EXPECT_EQ(config[0]["opaque"]["parameters"]["level"].GetInt(), 1);
  EXPECT_STREQ(config[1]["source"].GetString(), "FromClaim");
  EXPECT_STREQ(config[1]["requests"][0].GetString(), "channel");
  EXPECT_STREQ(config[1]["opaque"]["driver"].GetString(), "compute-domain.nvidia.com");
  const auto& params = config[1]["opaque"]["parameters"];
  EXPECT_STREQ(params["kind"].GetString(), "ComputeDomainChannelConfig");
  EXPECT_STREQ(params["domainID"].GetString(), "5b0f6f4e");
  EXPECT_TRUE(params["n"].IsString());  // a string stays a string
  // c2 was allocated before: its allocation (with no config) is left as it was.
  EXPECT_FALSE(Claim("c2")["status"]["allocation"]["devices"].HasMember("config"));
}

}  // namespace
}  // namespace kai::binder
