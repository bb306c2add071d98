#pragma once
// Test helper: decodes and validates manifest documents, failing the test on any error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kai/core/k8s/decode.h"

namespace kai::testing {

// Metadata of an object built in code: uid = name, namespace "default" when namespaced.
inline ObjectMeta Meta(std::string kind, std::string name, bool namespaced) {
  ObjectMeta m;
  m.kind = std::move(kind);
  m.uid = name;
  m.name = std::move(name);
  if (namespaced) m.ns = "default";
  return m;
}

inline ClusterState LoadDocs(const std::vector<std::string>& docs) {
  std::string text;
  for (const auto& d : docs) text += "---\n" + d + "\n";
  ClusterState state;
  const Status decoded = DecodeManifestText(text, "test.yaml", state);
  EXPECT_TRUE(decoded.ok()) << (decoded.ok() ? "" : decoded.error().message);
  const Status valid = ValidateCluster(state);
  EXPECT_TRUE(valid.ok()) << (valid.ok() ? "" : valid.error().message);
  return state;
}

}  // namespace kai::testing
