#include "kai/core/admission/admission.h"
#include "kai/core/k8s/json_body.h"

namespace kai::admission {

std::string PointerToken(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string PatchJson(const std::vector<PatchOp>& ops) {
  return k8s::Json([&](k8s::JsonWriter& w) {
    w.StartArray();
    for (const PatchOp& op : ops) {
      w.StartObject();
      k8s::KeyStr(w, "op", op.op);
      k8s::KeyStr(w, "path", op.path);
      if (!op.value_json.empty()) {
        k8s::Str(w, "value");
        w.RawValue(op.value_json.data(), op.value_json.size(), rapidjson::kObjectType);
      }
      w.EndObject();
    }
    w.EndArray();
  });
}

}  // namespace kai::admission
