// gpupack / gpuspread / gpusharingorder order the GPUs (and nodes) offered to fractional GPU
// requests. Whole-GPU tasks are unaffected. Fractional GPU placement lands with issue 5 ("GPU
// sharing"); until then these plugins register no hook and only validate their configuration.
#include "kai/plugins/builtin.h"

namespace kai::plugins {
namespace {

class GpuOrderPlugin : public Plugin {
 public:
  explicit GpuOrderPlugin(bool pack) : pack_(pack) {}
  void OnSessionOpen(Session&) override {}
  bool pack() const { return pack_; }

 private:
  bool pack_;
};

class PendingPlugin : public Plugin {
 public:
  void OnSessionOpen(Session&) override {}
};

}  // namespace

std::unique_ptr<Plugin> MakeGpuOrder(bool pack) { return std::make_unique<GpuOrderPlugin>(pack); }
std::unique_ptr<Plugin> MakeGpuSharingOrder() { return std::make_unique<PendingPlugin>(); }
std::unique_ptr<Plugin> MakePending() { return std::make_unique<PendingPlugin>(); }

}  // namespace kai::plugins
