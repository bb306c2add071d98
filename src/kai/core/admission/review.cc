#include "kai/core/admission/review.h"

#include <algorithm>
#include <functional>

#include "kai/core/k8s/json_body.h"

namespace kai::admission {
namespace {

using k8s::JsonWriter;
using k8s::KeyStr;
using k8s::Str;

Result<Operation> OperationOf(std::string_view op) {
  if (op == "CREATE") return Operation::kCreate;
  if (op == "UPDATE") return Operation::kUpdate;
  if (op == "DELETE") return Operation::kDelete;
  return Error{"request.operation: \"" + std::string(op) +
               "\" is not one of CREATE, UPDATE, DELETE"};
}

void WriteStatus(JsonWriter& w, const Verdict& v) {
  Str(w, "status");
  w.StartObject();
  Str(w, "code");
  w.Int(403);
  KeyStr(w, "reason", "Forbidden");
  KeyStr(w, "message", v.message);
  w.EndObject();
}

void WritePatch(JsonWriter& w, const Verdict& v) {
  KeyStr(w, "patchType", "JSONPatch");
  KeyStr(w, "patch", Base64(PatchJson(v.patch)));
}

}  // namespace

Result<Review> ParseReview(std::string_view body) {
  auto parsed = doc::ParseJson(body);
  if (!parsed.ok()) return Error{"AdmissionReview: " + parsed.error().message};
  Review r;
  r.doc = std::make_unique<doc::Document>(std::move(parsed.value()));
  if (r.doc->Roots().empty()) return Error{"AdmissionReview: empty body"};
  const doc::Node req = r.doc->Roots()[0]["request"];
  if (!req.IsMap()) return Error{"AdmissionReview: request: missing"};
  r.uid = std::string(req["uid"].Scalar());
  if (r.uid.empty()) return Error{"AdmissionReview: request.uid: missing"};
  r.kind = std::string(req["kind"]["kind"].Scalar());
  auto op = OperationOf(req["operation"].Scalar());
  if (!op.ok()) return Error{"AdmissionReview " + r.uid + ": " + op.error().message};
  r.request.operation = *op;
  r.request.ns = std::string(req["namespace"].Scalar());
  r.request.name = std::string(req["name"].Scalar());
  r.request.object = req["object"];
  r.request.old_object = req["oldObject"];
  r.request.username = std::string(req["userInfo"]["username"].Scalar());
  return r;
}

std::string ReviewResponse(const std::string& uid, const Verdict& verdict) {
  return k8s::Json([&](JsonWriter& w) {
    w.StartObject();
    KeyStr(w, "apiVersion", "admission.k8s.io/v1");
    KeyStr(w, "kind", "AdmissionReview");
    Str(w, "response");
    w.StartObject();
    KeyStr(w, "uid", uid);
    Str(w, "allowed");
    w.Bool(verdict.allowed);
    if (!verdict.allowed) WriteStatus(w, verdict);
    if (verdict.allowed && !verdict.patch.empty()) WritePatch(w, verdict);
    if (!verdict.warnings.empty()) {
      Str(w, "warnings");
      w.StartArray();
      for (const std::string& warning : verdict.warnings) Str(w, warning);
      w.EndArray();
    }
    w.EndObject();
    w.EndObject();
  });
}

namespace {

// Pods of the cluster's own namespaces are left alone: a webhook that is down must not stop
// the control plane or kai itself from starting pods.
constexpr std::string_view kPodNamespaceSelector =
    "  namespaceSelector:\n"
    "    matchExpressions:\n"
    "    - key: kubernetes.io/metadata.name\n"
    "      operator: NotIn\n"
    "      values: [kube-system, kai-scheduler, kai-resource-reservation, kai-scale-adjust]\n";

struct Hook {
  std::string_view name, path, group, version, resource, scope, operations;
  bool pods;
  bool reinvoke;  // reinvocationPolicy IfNeeded (the mutating pod hook)
};

// `client_config` is the clientConfig's target lines for one hook path (url, or service).
using ClientConfig = std::function<std::string(std::string_view path)>;

// What every hook file shares: the CA, and the pod hooks' scheduler-name condition.
struct HookContext {
  std::string ca;
  std::string pod_match;  // the matchConditions block of the pod hooks
};

// A pod's schedulerName is a DNS subdomain (the API server validates it): lower-case letters,
// digits, '-' and '.', at most 253 characters, a letter or digit at both ends. Such a name
// needs no quoting in a CEL string literal or in YAML.
bool IsDnsSubdomain(std::string_view s) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (s.empty() || s.size() > 253 || !alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-' || c == '.'; });
}

Result<std::string> SchedulerNameMatch(const std::string& scheduler_name) {
  if (!IsDnsSubdomain(scheduler_name)) {
    return Error{"webhook configuration: scheduler name \"" + scheduler_name +
                 "\" is not a DNS subdomain (lower-case letters, digits, '-' and '.', at most "
                 "253 characters), so no pod can name it as its schedulerName"};
  }
  return "  matchConditions:\n  - name: scheduler-name-match\n    expression: "
         "\"object.spec.schedulerName == '" +
         scheduler_name + "'\"\n";
}

std::string HookYaml(const Hook& h, const ClientConfig& client_config, const HookContext& ctx) {
  std::string y = "- name: " + std::string(h.name) + "\n";
  y += "  admissionReviewVersions: [v1]\n  sideEffects: None\n  failurePolicy: Fail\n";
  y += "  timeoutSeconds: 10\n";
  if (h.reinvoke) y += "  reinvocationPolicy: IfNeeded\n";
  y += "  clientConfig:\n" + client_config(h.path) + "    caBundle: " + ctx.ca + "\n";
  y += "  rules:\n  - apiGroups: [\"" + std::string(h.group) + "\"]\n    apiVersions: [" +
       std::string(h.version) + "]\n    operations: [" + std::string(h.operations) +
       "]\n    resources: [" + std::string(h.resource) + "]\n    scope: " + std::string(h.scope) +
       "\n";
  if (h.pods) y += std::string(kPodNamespaceSelector) + ctx.pod_match;
  return y;
}

Result<std::string> ConfigsYaml(const ClientConfig& client_config, const std::string& ca_bundle_pem,
                                const std::string& scheduler_name) {
  auto match = SchedulerNameMatch(scheduler_name);
  if (!match.ok()) return match.error();
  const HookContext ctx{Base64(ca_bundle_pem), std::move(*match)};
  std::string y =
      "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n"
      "metadata:\n  name: kai-admission\nwebhooks:\n";
  y += HookYaml({"pods.mutate.kai.scheduler", "/mutate-pod", "", "v1", "pods", "Namespaced",
                 "CREATE", true, true},
                client_config, ctx);
  y += "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
       "metadata:\n  name: kai-admission\nwebhooks:\n";
  // pods/resize: in-place resizes from Kubernetes 1.33 (earlier ones are pod updates).
  y += HookYaml({"pods.validate.kai.scheduler", "/validate-pod", "", "v1", "pods, pods/resize",
                 "Namespaced", "CREATE, UPDATE", true, false},
                client_config, ctx);
  y += HookYaml({"queues.validate.kai.scheduler", "/validate-queue", "scheduling.run.ai", "v2",
                 "queues", "Cluster", "CREATE, UPDATE, DELETE", false, false},
                client_config, ctx);
  y += HookYaml({"podgroups.validate.kai.scheduler", "/validate-podgroup", "scheduling.run.ai",
                 "v2alpha2", "podgroups", "Namespaced", "CREATE, UPDATE", false, false},
                client_config, ctx);
  return y;
}

}  // namespace

Result<std::string> WebhookConfigYaml(const std::string& url, const std::string& ca_bundle_pem,
                                      const std::string& scheduler_name) {
  std::string base = url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return ConfigsYaml(
      [&](std::string_view path) { return "    url: " + base + std::string(path) + "\n"; },
      ca_bundle_pem, scheduler_name);
}

Result<std::string> WebhookServiceConfigYaml(const WebhookService& service,
                                             const std::string& ca_bundle_pem,
                                             const std::string& scheduler_name) {
  return ConfigsYaml(
      [&](std::string_view path) {
        return "    service:\n      namespace: " + service.ns + "\n      name: " + service.name +
               "\n      port: " + std::to_string(service.port) +
               "\n      path: " + std::string(path) + "\n";
      },
      ca_bundle_pem, scheduler_name);
}

std::string Base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t v = 0;
    for (size_t k = 0; k < 3; ++k) {
      v = (v << 8) | (k < n ? static_cast<uint8_t>(bytes[i + k]) : 0);
    }
    for (size_t k = 0; k < 4; ++k) {
      out.push_back(k <= n ? kAlphabet[(v >> (18 - 6 * k)) & 63] : '=');
    }
  }
  return out;
}

}  // namespace kai::admission
