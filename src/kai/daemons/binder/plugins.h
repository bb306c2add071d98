#pragma once
// The binder's plugins (KAI's B/plugins/): each prepares what a pod needs on its node before the
// pods/binding call (PreBind), may act after it (PostBind), and undoes its preparation when the
// bind fails (Rollback). They run by priority, highest first (ties by name), as KAI's binder
// orders them: volumebinding 300, dynamicresources 200, gpusharing 100, hamicore 50 (off by
// default; hamicore.h).
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kai/daemons/binder/objects.h"
#include "kai/kube/client/api_client.h"

namespace kai::binder {

// One bind attempt, as the plugins see it.
struct BindContext {
  const PodView& pod;
  const BindRequestObject& request;
  std::vector<std::string> gpu_ids;         // the reserved GPUs (fraction binds)
  std::vector<std::string> annotated_pvcs;  // claims volumebinding gave a selected node
  std::vector<std::string> bound_volumes;   // volumes volumebinding gave a claim (claimRef)
  std::string extended_claim;  // the claim dynamicresources made for DRA-backed extended resources
};

class BindPlugin {
 public:
  virtual ~BindPlugin() = default;
  virtual std::string_view Name() const = 0;
  virtual Status PreBind(BindContext& ctx) = 0;
  virtual void PostBind(BindContext&) {}
  virtual Status Rollback(BindContext& ctx) = 0;
};

struct PluginSettings {
  bool enabled = true;
  int priority = 0;
  std::map<std::string, std::string> arguments;
};
using PluginConfig = std::map<std::string, PluginSettings>;

// KAI's defaults (pkg/apis/kai/v1/binder): bindTimeoutSeconds 120, cdiEnabled false.
PluginConfig DefaultPluginConfig();
// Overrides in KAI's --plugins form, JSON: {"<name>":{"enabled":bool,"priority":int,
// "arguments":{"k":"v"}}}; a plugin not in the defaults is an error naming it.
Result<PluginConfig> MergePluginConfig(PluginConfig base, const std::string& json);

// The enabled plugins of `config` in run order. Errors name the plugin and argument, or the
// order hamicore needs (hamicore.h). `log` takes what a plugin reports without failing a bind.
Result<std::vector<std::unique_ptr<BindPlugin>>> BuildPlugins(
    const PluginConfig& config, const k8s::ApiClient& client, const std::atomic<bool>& stop,
    const std::function<void(const std::string&)>& log = {});

// The plugins, one class each (plugins.cc builds them by name).
std::unique_ptr<BindPlugin> MakeVolumeBinding(const k8s::ApiClient& client,
                                              std::chrono::seconds timeout,
                                              const std::atomic<bool>& stop);
// DRA (binder/dra.cc): writes each claim's allocation and the pod's reservation from the
// BindRequest, and creates the claim of the pod's DRA-backed extended resources.
std::unique_ptr<BindPlugin> MakeDynamicResources(const k8s::ApiClient& client);
std::unique_ptr<BindPlugin> MakeGpuSharing(const k8s::ApiClient& client, bool cdi);

}  // namespace kai::binder
