#pragma once
// A test's world from a manifest text: decoded as `kai simulate -f` decodes a file; a decoding
// error fails the calling test (with the decoder's message) and yields what was decoded.
#include <gtest/gtest.h>

#include "kai/core/k8s/decode.h"

namespace kai::testutil {

inline ClusterState LoadManifest(const char* text) {
  ClusterState state;
  const Status decoded = DecodeManifestText(text, "test.yaml", state);
  EXPECT_TRUE(decoded.ok()) << (decoded.ok() ? "" : decoded.error().message);
  return state;
}

}  // namespace kai::testutil
