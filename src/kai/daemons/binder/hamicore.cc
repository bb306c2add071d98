#include "kai/daemons/binder/hamicore.h"

#include <charconv>

#include "kai/core/k8s/decode.h"
#include "kai/core/k8s/json_body.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/resource/quantity.h"
#include "kai/daemons/binder/nvfractions.h"

namespace kai::binder {
namespace {

namespace res = k8s::resources;

constexpr std::string_view kHamiCore = "hamicore";
constexpr std::string_view kGpuSharing = "gpusharing";
// The portion is read in billionths of a GPU: exact for every portion the scheduler writes.
constexpr int64_t kNanoPerGpu = 1'000'000'000;

std::string RequestRef(const BindRequestObject& r) {
  return "BindRequest " + r.meta.ns + "/" + r.meta.name;
}

Result<int64_t> ParseLabelMib(std::string_view node, const std::optional<std::string>& label) {
  const std::string field =
      "Node " + std::string(node) + ": label " + std::string(keys::kNodeGpuMemory);
  if (!label)
    return Error{field + ": absent (the GPU's memory in MiB, set by GPU feature discovery)"};
  int64_t mib = 0;
  const char* end = label->data() + label->size();
  auto [p, ec] = std::from_chars(label->data(), end, mib);
  if (ec != std::errc() || p != end || mib <= 0) {
    return Error{field + ": expected a positive integer of MiB, got \"" + *label + "\""};
  }
  return mib;
}

Result<int64_t> ParsePortionNano(const BindRequestObject& request) {
  const std::string field = RequestRef(request) + ": spec.receivedGPU.portion";
  auto nano = ParseQuantity(request.gpu_portion, 9);
  if (!nano.ok()) return Error{field + ": " + nano.error().message};
  if (*nano <= 0 || *nano > kNanoPerGpu) {
    return Error{field + ": expected a share of one GPU, above 0 and at most 1, got \"" +
                 request.gpu_portion + "\""};
  }
  return *nano;
}

// floor(mib * nano / 10^9) without overflow: nano <= 10^9, so each product stays below 2^63.
int64_t ShareOf(int64_t mib, int64_t nano) {
  return mib / kNanoPerGpu * nano + mib % kNanoPerGpu * nano / kNanoPerGpu;
}

std::string LimitPatch(const std::string& value) {
  return k8s::Json([&](k8s::JsonWriter& w) {
    w.StartObject();
    k8s::Str(w, "data");
    w.StartObject();
    k8s::KeyStr(w, keys::kCudaDeviceMemoryLimitEnv, value);
    w.EndObject();
    w.EndObject();
  });
}

class HamiCore final : public BindPlugin {
 public:
  HamiCore(const k8s::ApiClient& c, std::function<void(const std::string&)> log)
      : client_(c), log_(std::move(log)) {}
  std::string_view Name() const override { return kHamiCore; }

  Status PreBind(BindContext& ctx) override {
    if (!IsSharedGpu(ctx.request)) return Ok();
    // NvFractions pods have no ConfigMaps: their runtime enforces the memory itself.
    if (auto nv = NvFractionsContainer(ctx.pod); !nv.ok() || *nv) return Ok();
    auto label = NodeLabel(ctx.request.selected_node);
    if (!label.ok()) return label.error();
    auto mib = CudaMemoryLimitMib(ctx.request.selected_node, *label, ctx.request);
    if (!mib.ok()) {
      Log("pod " + ctx.pod.Ref() + " gets no " + std::string(keys::kCudaDeviceMemoryLimitEnv) +
          ": " + mib.error().message);
      return Ok();
    }
    auto c = FractionContainer(ctx.pod);
    if (!c.ok()) return c.error();
    auto names = SharingConfigMapNames(ctx.pod, *c);
    if (!names.ok()) return names.error();
    return WriteLimit(ctx.pod.ns, names->capabilities, CudaMemoryLimitValue(*mib));
  }

  // The limit goes with the ConfigMap, which gpusharing deletes.
  Status Rollback(BindContext&) override { return Ok(); }

 private:
  void Log(const std::string& line) const {
    if (log_) log_(line);
  }

  // The node's nvidia.com/gpu.memory label, nullopt when it has none.
  Result<std::optional<std::string>> NodeLabel(const std::string& node) const {
    const std::string path = k8s::ObjectPath(res::kNode, "", node);
    const k8s::HttpResponse r = client_.GetCached(path);
    if (!r.ok()) return Error{k8s::Describe({"GET", path}, r)};
    auto d = doc::ParseJson(r.body);
    if (!d.ok() || d->Roots().empty()) {
      return Error{"Node " + node + ": " + (d.ok() ? "empty answer" : d.error().message)};
    }
    const doc::Node label = d->Roots()[0]["metadata"]["labels"][keys::kNodeGpuMemory];
    if (!label.IsScalar()) return std::optional<std::string>();
    return std::optional<std::string>(std::string(label.Scalar()));
  }

  Status WriteLimit(const std::string& ns, const std::string& name, const std::string& value) {
    const std::string path = k8s::ObjectPath(res::kConfigMap, ns, name);
    const k8s::HttpResponse r = client_.Patch(path, LimitPatch(value), k8s::PatchType::kMerge);
    if (r.ok()) return Ok();
    return Error{"ConfigMap " + ns + "/" + name + ": data." +
                 std::string(keys::kCudaDeviceMemoryLimitEnv) + ": " +
                 k8s::Describe({"PATCH", path}, r)};
  }

  const k8s::ApiClient& client_;
  std::function<void(const std::string&)> log_;
};

}  // namespace

Result<int64_t> CudaMemoryLimitMib(std::string_view node,
                                   const std::optional<std::string>& gpu_memory_label,
                                   const BindRequestObject& request) {
  auto mib = ParseLabelMib(node, gpu_memory_label);
  if (!mib.ok()) return mib.error();
  auto nano = ParsePortionNano(request);
  if (!nano.ok()) return nano.error();
  const int64_t limit = ShareOf(*mib, *nano);
  if (limit <= 0) {
    return Error{RequestRef(request) + ": spec.receivedGPU.portion: " + request.gpu_portion +
                 " of the " + std::to_string(*mib) + " MiB of node " + std::string(node) +
                 "'s GPU is less than 1 MiB"};
  }
  return limit;
}

std::string CudaMemoryLimitValue(int64_t mib) { return std::to_string(mib) + "m"; }

Status CheckHamiCoreOrder(const PluginConfig& config) {
  const auto hami = config.find(std::string(kHamiCore));
  if (hami == config.end() || !hami->second.enabled) return Ok();
  const auto sharing = config.find(std::string(kGpuSharing));
  if (sharing == config.end() || !sharing->second.enabled) {
    return Error{
        "binder plugin hamicore needs plugin gpusharing enabled (it writes into the "
        "ConfigMap gpusharing makes)"};
  }
  if (sharing->second.priority <= hami->second.priority) {
    return Error{
        "binder plugin hamicore needs plugin gpusharing to run before it: "
        "gpusharing.priority " +
        std::to_string(sharing->second.priority) + " must be above hamicore.priority " +
        std::to_string(hami->second.priority)};
  }
  return Ok();
}

std::unique_ptr<BindPlugin> MakeHamiCore(const k8s::ApiClient& client,
                                         std::function<void(const std::string&)> log) {
  return std::make_unique<HamiCore>(client, std::move(log));
}

}  // namespace kai::binder
