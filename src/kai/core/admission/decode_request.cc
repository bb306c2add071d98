#include "kai/core/admission/decode_request.h"

#include <algorithm>

#include "kai/core/k8s/decode.h"

namespace kai::admission {
namespace {

constexpr std::string_view kSource = "admission";

// A decoder error without its "<source>: <ref>: " head (the decoder names the object by kind
// alone until it has read metadata.name, and defaults a missing namespace).
std::string FieldPart(std::string message, std::string_view kind) {
  const std::string head = std::string(kSource) + ": ";
  if (message.rfind(head, 0) == 0) message.erase(0, head.size());
  if (message.rfind(std::string(kind) + " ", 0) == 0 ||
      message.rfind(std::string(kind) + ":", 0) == 0) {
    const size_t colon = message.find(": ");
    if (colon != std::string::npos) message.erase(0, colon + 2);
  }
  return message;
}

}  // namespace

std::string ObjectRef(const Request& request, const doc::Node& object, std::string_view kind,
                      bool namespaced) {
  const doc::Node md = object["metadata"];
  std::string ns(md["namespace"].Scalar()), name(md["name"].Scalar());
  if (ns.empty()) ns = request.ns;
  if (name.empty()) name = request.name;
  return std::string(kind) + " " + (namespaced ? ns + "/" : "") + name;
}

Result<ClusterState> DecodeRequestObject(const Request& request, const doc::Node& object,
                                         std::string_view api_version, std::string_view kind,
                                         bool namespaced,
                                         const std::vector<std::string_view>& ignored) {
  ClusterState state;
  const std::vector<std::string> errors =
      ProblemsOf(DecodeObject(object, api_version, kind, std::string(kSource), state));
  const std::string ref = ObjectRef(request, object, kind, namespaced);
  std::string message;
  for (const std::string& e : errors) {
    const std::string field = FieldPart(e, kind);
    if (std::find(ignored.begin(), ignored.end(), field) != ignored.end()) continue;
    message += (message.empty() ? "" : "; ") + ref + ": " + field;
  }
  if (message.empty()) return state;
  return Error{message};
}

}  // namespace kai::admission
