// libFuzzer target for kubeconfig files: any text must become an error that names the file, or a
// cluster configuration with a server, never a crash, a hang, a leak or an exception.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kai/kube/client/kubeconfig.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string path = "/nonexistent/fuzz.kubeconfig";
  auto c = kai::k8s::ParseKubeconfig(text, path, "");
  if (!c.ok()) {
    if (c.error().message.rfind(path, 0) != 0) {
      std::fprintf(stderr, "invariant failed: the error names the file: %s\n",
                   c.error().message.c_str());
      std::abort();
    }
    return 0;
  }
  if (c->server.empty()) {
    std::fprintf(stderr, "invariant failed: an accepted kubeconfig names a server\n");
    std::abort();
  }
  return 0;
}
