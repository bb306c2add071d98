#include "kai/core/k8s/watch_event.h"

#include <gtest/gtest.h>

namespace kai::k8s {
namespace {

TEST(WatchEventTest, ReadsEachTypeAndTheObject) {
  auto added = ParseWatchEvent(
      R"({"type":"ADDED","object":{"metadata":{"name":"p","resourceVersion":"42"}}})");
  ASSERT_TRUE(added.ok()) << added.error().message;
  EXPECT_EQ(added->type(), WatchEventType::kAdded);
  EXPECT_EQ(added->object()["metadata"]["name"].Scalar(), "p");
  EXPECT_EQ(added->resource_version(), "42");
  auto bookmark =
      ParseWatchEvent(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7"}}})");
  ASSERT_TRUE(bookmark.ok());
  EXPECT_EQ(bookmark->type(), WatchEventType::kBookmark);
  auto error = ParseWatchEvent(R"({"type":"ERROR","object":{"code":410,"kind":"Status"}})");
  ASSERT_TRUE(error.ok());
  EXPECT_EQ(error->type(), WatchEventType::kError);
  EXPECT_EQ(error->object()["code"].Scalar(), "410");
}

TEST(WatchEventTest, MalformedEventsAreErrorsNamingTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {R"([1,2])", "not an object"},
      {R"({"type":"ADDED"})", "object: not an object"},
      {R"({"type":"ADDED","object":"p"})", "object: not an object"},
      {R"({"type":"MODIFIED","object":{}})", "object.metadata: not an object"},
      {R"({"type":"RENAMED","object":{"metadata":{}}})", "unknown watch event type \"RENAMED\""},
      {R"({"object":{"metadata":{}}})", "unknown watch event type \"\""},
      {R"({"type":"ADDED","object":{"metadata":{)", "invalid JSON"},
  };
  for (const auto& [line, what] : cases) {
    auto ev = ParseWatchEvent(line);
    ASSERT_FALSE(ev.ok()) << line;
    EXPECT_NE(ev.error().message.find(what), std::string::npos) << ev.error().message;
  }
  auto deep = ParseWatchEvent(std::string(100'000, '['));
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.error().message.find("limit of 256 levels"), std::string::npos);
}

}  // namespace
}  // namespace kai::k8s
