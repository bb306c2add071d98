#include "kai/core/admission/hamicore.h"

#include "kai/core/k8s/json_body.h"
#include "kai/core/k8s/keys.h"

namespace kai::admission {

EnvSetting CudaMemoryLimitEnv(std::string_view capabilities_config_map) {
  const std::string_view name = keys::kCudaDeviceMemoryLimitEnv;
  EnvSetting out;
  out.entry.name = std::string(name);
  out.entry.value_from = true;
  out.entry.config_map = std::string(capabilities_config_map);
  out.entry.key = std::string(name);
  out.entry.optional = true;
  out.json = k8s::Json([&](k8s::JsonWriter& w) {
    w.StartObject();
    k8s::KeyStr(w, "name", name);
    k8s::Str(w, "valueFrom");
    w.StartObject();
    k8s::Str(w, "configMapKeyRef");
    w.StartObject();
    k8s::KeyStr(w, "key", name);
    k8s::KeyStr(w, "name", capabilities_config_map);
    k8s::Str(w, "optional");
    w.Bool(true);
    w.EndObject();
    w.EndObject();
    w.EndObject();
  });
  return out;
}

}  // namespace kai::admission
