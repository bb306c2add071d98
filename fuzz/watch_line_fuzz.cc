// libFuzzer target for one line of a watch stream from the API server: it must become an error
// or a well-formed event (a known type, an object that is a map), never a crash, a hang or a leak.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "kai/core/k8s/watch_event.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  auto ev = kai::k8s::ParseWatchEvent(line);
  if (!ev.ok()) return 0;
  if (!ev->object().IsMap()) {
    std::fprintf(stderr, "invariant failed: an accepted event's object is a map\n");
    std::abort();
  }
  (void)ev->resource_version();
  return 0;
}
