#include "kai/core/k8s/doc.h"

#include <gtest/gtest.h>

#include "kai/core/k8s/decode.h"

namespace kai::doc {
namespace {

TEST(DocTest, YamlScalarsMapsSequencesAndNulls) {
  auto d = ParseYaml("a: 1\nb: [x, \"y\"]\nc: ~\nd: {}\ne: 'null'\n");
  ASSERT_TRUE(d.ok()) << d.error().message;
  const auto roots = d->Roots();
  ASSERT_EQ(roots.size(), 1u);
  const Node r = roots[0];
  EXPECT_TRUE(r.IsMap());
  EXPECT_EQ(r.size(), 5u);
  EXPECT_EQ(r["a"].Scalar(), "1");
  EXPECT_TRUE(r["b"].IsSequence());
  EXPECT_EQ(r["b"][1].Scalar(), "y");
  EXPECT_FALSE(r["b"][2].IsDefined());
  EXPECT_TRUE(r["c"].IsNull());
  EXPECT_TRUE(r["d"].IsMap());
  EXPECT_EQ(r["d"].size(), 0u);
  EXPECT_TRUE(r["e"].IsScalar());  // a quoted "null" is a string
  EXPECT_FALSE(r["missing"].IsDefined());
  EXPECT_FALSE(r["a"]["x"].IsDefined());  // lookups through a scalar stay undefined
}

TEST(DocTest, YamlStreamHasOneRootPerDocumentAndAliasesShareNodes) {
  auto d = ParseYaml("x: &v {k: 1}\ny: *v\n---\nz: 2\n");
  ASSERT_TRUE(d.ok()) << d.error().message;
  const auto roots = d->Roots();
  ASSERT_EQ(roots.size(), 2u);
  EXPECT_EQ(roots[0]["y"]["k"].Scalar(), "1");
  EXPECT_EQ(roots[1]["z"].Scalar(), "2");
}

TEST(DocTest, JsonNumbersAndBooleansKeepTheirText) {
  auto d = ParseJson(R"({"n": 12, "f": 0.50, "t": true, "z": null, "s": "a\"b", "l": [1, {}]})");
  ASSERT_TRUE(d.ok()) << d.error().message;
  const Node r = d->Roots().at(0);
  EXPECT_EQ(r["n"].Scalar(), "12");
  EXPECT_EQ(r["f"].Scalar(), "0.50");
  EXPECT_EQ(r["t"].Scalar(), "true");
  EXPECT_TRUE(r["z"].IsNull());
  EXPECT_EQ(r["s"].Scalar(), "a\"b");
  EXPECT_TRUE(r["l"][1].IsMap());
  const auto entries = r.Entries();
  ASSERT_EQ(entries.size(), 6u);
  EXPECT_EQ(entries[0].first.Scalar(), "n");
}

TEST(DocTest, MalformedInputNamesWhereItBroke) {
  auto j = ParseJson(R"({"a": [1, 2)");
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.error().message.find("invalid JSON at offset"), std::string::npos);
  auto trailing = ParseJson(R"({"a": 1} x)");
  EXPECT_FALSE(trailing.ok());
  auto y = ParseYaml("a: [1, 2\n");
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.error().message.find("invalid YAML at line"), std::string::npos);
}

// The same Pod as YAML and as the API server's JSON (numbers as numbers, a typed list whose items
// carry no kind) decodes to the same object.
TEST(DocTest, OneDecoderForYamlManifestsAndApiJson) {
  const char* yaml = R"(
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: team
  uid: u-1
  creationTimestamp: "2025-01-01T00:00:00Z"
  annotations: {pod-group-name: pg, gpu-fraction: "0.5"}
spec:
  schedulerName: kai-scheduler
  priority: 100
  containers:
  - name: c
    resources: {requests: {cpu: 500m, memory: 1Gi}}
status: {phase: Pending}
)";
  const char* json = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},
    "items":[{"metadata":{"name":"p","namespace":"team","uid":"u-1",
      "creationTimestamp":"2025-01-01T00:00:00Z",
      "annotations":{"pod-group-name":"pg","gpu-fraction":"0.5"}},
      "spec":{"schedulerName":"kai-scheduler","priority":100,
        "containers":[{"name":"c","resources":{"requests":{"cpu":"500m","memory":"1Gi"}}}]},
      "status":{"phase":"Pending"}}]})";
  ClusterState from_yaml, from_json;
  EXPECT_TRUE(DecodeManifestText(yaml, "y", from_yaml).ok());
  EXPECT_TRUE(DecodeJsonText(json, "j", from_json).ok());
  ASSERT_EQ(from_yaml.pods.size(), 1u);
  ASSERT_EQ(from_json.pods.size(), 1u);
  const PodObject& a = from_yaml.pods[0];
  const PodObject& b = from_json.pods[0];
  EXPECT_EQ(a.meta.name, b.meta.name);
  EXPECT_EQ(a.meta.uid, b.meta.uid);
  EXPECT_EQ(a.priority, b.priority);
  EXPECT_EQ(a.request.milli_cpu, 500);
  EXPECT_EQ(a.request.milli_cpu, b.request.milli_cpu);
  EXPECT_EQ(a.request.memory, b.request.memory);
  EXPECT_EQ(a.gpu_sharing.fraction_milli, 500);
  EXPECT_EQ(b.gpu_sharing.fraction_milli, 500);
  EXPECT_EQ(a.pod_group, b.pod_group);
}

TEST(DocTest, DecodeObjectOfAGivenKindNamesTheField) {
  auto d = ParseJson(R"({"metadata":{"name":"n1"},"status":{"capacity":{"cpu":"x"}}})");
  ASSERT_TRUE(d.ok());
  ClusterState s;
  auto errs = ProblemsOf(DecodeObject(d->Roots().at(0), "v1", "Node", "api", s));
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_NE(errs[0].find("Node n1: status.capacity.cpu"), std::string::npos) << errs[0];
}

TEST(DocTest, CopyOfOutlivesTheDocumentItCopies) {
  doc::Document copy;
  {
    auto d = doc::ParseJson(R"({"a":{"b":[1,"x",null,{"c":true}]},"d":"e"})");
    ASSERT_TRUE(d.ok());
    copy = doc::CopyOf(d->Roots().at(0)["a"]);
  }
  const doc::Node a = copy.Roots().at(0);
  ASSERT_EQ(a["b"].size(), 4u);
  EXPECT_EQ(a["b"][0].Scalar(), "1");
  EXPECT_EQ(a["b"][1].Scalar(), "x");
  EXPECT_TRUE(a["b"][2].IsNull());
  EXPECT_EQ(a["b"][3]["c"].Scalar(), "true");
  EXPECT_FALSE(a["d"].IsDefined());
}

TEST(DocTest, CopyOfLeavesOutTheEntryAtAPath) {
  auto d = doc::ParseJson(
      R"({"metadata":{"name":"p","managedFields":[{"manager":"kubectl"}]},"managedFields":1})");
  ASSERT_TRUE(d.ok());
  const doc::Document copy = doc::CopyOf(d->Roots().at(0), {"metadata", "managedFields"});
  const doc::Node o = copy.Roots().at(0);
  EXPECT_EQ(o["metadata"]["name"].Scalar(), "p");
  EXPECT_FALSE(o["metadata"]["managedFields"].IsDefined());
  EXPECT_EQ(o["managedFields"].Scalar(), "1") << "only the entry at the path";
}

}  // namespace
}  // namespace kai::doc

namespace kai::doc {
namespace {

// The hostile inputs of issue 34: each is refused with an error naming its limit, on the stack
// of a test thread (no recursion on input depth), in time linear in the input.
TEST(DocLimitsTest, DeepJsonIsAnErrorNamingTheDepthLimit) {
  for (const std::string& deep : {std::string(400'000, '['), [] {
                                    std::string s;
                                    for (int i = 0; i < 100'000; ++i) s += "{\"a\":";
                                    return s;
                                  }()}) {
    auto d = ParseJson(deep);
    ASSERT_FALSE(d.ok());
    EXPECT_NE(d.error().message.find("limit of 256 levels"), std::string::npos)
        << d.error().message;
  }
}

TEST(DocLimitsTest, JsonAtTheDepthLimitParsesAndOneMoreDoesNot) {
  const auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_TRUE(ParseJson(nested(256)).ok());
  EXPECT_FALSE(ParseJson(nested(257)).ok());
  EXPECT_TRUE(ParseJson(nested(10), Limits{.max_depth = 10}).ok());
  EXPECT_FALSE(ParseJson(nested(11), Limits{.max_depth = 10}).ok());
}

TEST(DocLimitsTest, TooLargeDocumentsAreRefusedBeforeParsing) {
  const std::string big = "{\"a\":\"" + std::string(2000, 'x') + "\"}";
  auto j = ParseJson(big, Limits{.max_bytes = 1000});
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.error().message.find("larger than the limit of 1000 bytes"), std::string::npos)
      << j.error().message;
  auto y = ParseYaml("a: " + std::string(2000, 'x'), Limits{.max_bytes = 1000});
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.error().message.find("limit of 1000 bytes"), std::string::npos);
}

TEST(DocLimitsTest, DeepYamlIsAnErrorNamingTheDepthLimit) {
  auto flow = ParseYaml(std::string(5000, '[') + std::string(5000, ']'));
  ASSERT_FALSE(flow.ok());
  auto block = std::string();
  for (int i = 0; i < 300; ++i) block += std::string(i * 2, ' ') + "a:\n";
  auto b = ParseYaml(block);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("limit of 256 levels"), std::string::npos) << b.error().message;
  EXPECT_TRUE(ParseYaml(block, Limits{.max_depth = 400}).ok());
}

TEST(DocLimitsTest, BillionLaughsIsRefusedAtTheAliasLimit) {
  std::string yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    const std::string p = "*a" + std::to_string(i - 1);
    yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + p;
    for (int k = 1; k < 10; ++k) yaml += ", " + p;
    yaml += "]\n";
  }
  auto d = ParseYaml(yaml);  // 10^9 scalars once expanded
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("aliases expand to more than the limit of 1000000 nodes"),
            std::string::npos)
      << d.error().message;
}

TEST(DocLimitsTest, OrdinaryAliasesStayWithinTheLimit) {
  // Anchors and merge-style reuse as real manifests use them: well under the limit.
  auto d = ParseYaml(
      "base: &base {cpu: 1, memory: 1Gi}\n"
      "pods:\n- {name: a, requests: *base}\n- {name: b, requests: *base}\n");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->Roots()[0]["pods"][1]["requests"]["cpu"].Scalar(), "1");
  auto counted = ParseYaml("a: &a [1, 2, 3]\nb: [*a, *a]\n", Limits{.max_alias_nodes = 8});
  EXPECT_TRUE(counted.ok());  // each alias weighs 4 (the list and its 3 scalars): 8 in all
  EXPECT_FALSE(ParseYaml("a: &a [1, 2, 3]\nb: [*a, *a, *a]\n", Limits{.max_alias_nodes = 8}).ok());
}

// What DRA keeps of an opaque configuration's parameters: compact JSON, strings as strings (a
// quoted "12" or "true" stays a string), numbers and booleans as written, keys in order.
TEST(DocTest, ScalarsKnowWhetherTheyWereQuotedAndConvertToCompactJson) {
  auto j = ParseJson(R"({"n": 1.50, "s": "12", "t": true, "z": null, "l": ["x", -3e2, {}]})");
  ASSERT_TRUE(j.ok()) << j.error().message;
  const Node jr = j->Roots().at(0);
  EXPECT_FALSE(jr["n"].IsQuoted());
  EXPECT_TRUE(jr["s"].IsQuoted());
  EXPECT_FALSE(jr["l"].IsQuoted());
  EXPECT_EQ(ToCompactJson(jr, 1000), R"({"n":1.50,"s":"12","t":true,"z":null,"l":["x",-3e2,{}]})");
  auto y =
      ParseYaml("b: 2\na: '2'\nc: True\nd: 0x1F\ne: ~\nf: \"x\\ty\"\ng: !!str 3\nh: |\n  text\n");
  ASSERT_TRUE(y.ok()) << y.error().message;
  const Node yr = y->Roots().at(0);
  EXPECT_EQ(ToCompactJson(yr, 1000),
            R"({"b":2,"a":"2","c":true,"d":"0x1F","e":null,"f":"x\ty","g":"3","h":"text\n"})");
  // A copy (a watch cache's) keeps the difference.
  const Document copy = CopyOf(yr);
  EXPECT_EQ(ToCompactJson(copy.Roots().at(0), 1000), ToCompactJson(yr, 1000));
  // Past the limit: nothing, however the aliases would expand.
  EXPECT_EQ(ToCompactJson(jr, 10), std::nullopt);
  auto bomb = ParseYaml(
      "a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a]\n"
      "c: [*b, *b, *b, *b, *b, *b, *b, *b]\n");
  ASSERT_TRUE(bomb.ok()) << bomb.error().message;
  EXPECT_EQ(ToCompactJson(bomb->Roots().at(0), 100), std::nullopt);
}

}  // namespace
}  // namespace kai::doc
