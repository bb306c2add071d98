// `kai explain` on the examples: the table and the JSON document.
#include "kai/cmd/explain_command.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <CLI/CLI.hpp>

#include <sstream>
#include <string>

namespace kai::cmd {
namespace {

ExplainArgs Args(const std::string& example, const std::string& target) {
  ExplainArgs a;
  a.kind = "podgroup";
  a.target = target;
  a.files = {std::string(KAI_SOURCE_DIR) + "/examples/explain/" + example + ".yaml"};
  a.now = "2025-01-01T12:00:00Z";
  return a;
}

TEST(ExplainCommand, TableListsVerifiedSuggestionsSmallestFirst) {
  std::ostringstream out, err;
  ASSERT_EQ(RunExplain(Args("topology", "ml/ex-t-allreduce"), out, err), 0) << err.str();
  const std::string t = out.str();
  const size_t relax = t.find("relax the required topology level from ex-t/rack to ex-t/zone");
  const size_t free = t.find("free 2 GPUs on ex-t-b1 by stopping ml/ex-t-notebook");
  ASSERT_NE(relax, std::string::npos) << t;
  ASSERT_NE(free, std::string::npos) << t;
  EXPECT_LT(relax, free);
}

TEST(ExplainCommand, JsonCarriesTheTypedChange) {
  ExplainArgs a = Args("fragmentation", "ml/ex-f-pretrain");
  a.output = "json";
  std::ostringstream out, err;
  ASSERT_EQ(RunExplain(a, out, err), 0) << err.str();
  rapidjson::Document d;
  d.Parse(out.str().c_str());
  ASSERT_FALSE(d.HasParseError()) << out.str();
  EXPECT_FALSE(d["runs"].GetBool());
  const auto& s = d["suggestions"];
  ASSERT_EQ(s.Size(), 1u) << out.str();
  EXPECT_STREQ(s[0]["kind"].GetString(), "free-gpus");
  EXPECT_EQ(s[0]["change"]["amount"].GetInt64(), 2000);
  EXPECT_EQ(s[0]["change"]["freed"].Size(), 2u);
  EXPECT_TRUE(s[0]["after"]["runs"].GetBool());
  EXPECT_TRUE(d["eviction"].IsNull());
}

TEST(ExplainCommand, BadTargetIsAClearError) {
  ExplainArgs a = Args("quota", "no-slash");
  std::ostringstream out, err;
  EXPECT_EQ(RunExplain(a, out, err), 2);
  EXPECT_NE(err.str().find("NAMESPACE/NAME"), std::string::npos);
  a.target = "ml/ghost";
  err.str("");
  EXPECT_EQ(RunExplain(a, out, err), 2);
  EXPECT_NE(err.str().find("podgroup ml/ghost: no such PodGroup"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace kai::cmd

namespace kai::cmd {
namespace {

// -f takes one value per use, as kubectl's: the positionals after it stay the command's.
TEST(ExplainCommand, FileFlagTakesOneValuePerUse) {
  CLI::App app;
  ExplainArgs a;
  AddExplainCommand(app, a);
  app.parse("explain -f a.yaml podgroup ml/train -f dir/", false);
  EXPECT_EQ(a.files, (std::vector<std::string>{"a.yaml", "dir/"}));
  EXPECT_EQ(a.kind, "podgroup");
  EXPECT_EQ(a.target, "ml/train");
}

}  // namespace
}  // namespace kai::cmd
