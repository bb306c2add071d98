#pragma once
// The admission.k8s.io/v1 AdmissionReview envelope, without I/O: the request the API server
// posts to a webhook, read into a Request, and the review the webhook answers with, written from
// a Verdict (the patch as base64 JSON Patch, a denial as status 403 with the message).
#include <memory>
#include <string>
#include <string_view>

#include "kai/core/admission/admission.h"
#include "kai/core/k8s/doc.h"
#include "kai/core/util/result.h"

namespace kai::admission {

// A parsed review: the request (its objects are views into `doc`, which stays put when the
// review moves), its uid and kind.
struct Review {
  std::unique_ptr<doc::Document> doc;
  std::string uid, kind;  // request.uid; request.kind.kind ("Pod", "Queue", "PodGroup")
  Request request;
};

// Reads an AdmissionReview request body; errors name the field ("request.uid: missing").
Result<Review> ParseReview(std::string_view body);

// The AdmissionReview response for `uid`.
std::string ReviewResponse(const std::string& uid, const Verdict& verdict);

// The ValidatingWebhookConfiguration and MutatingWebhookConfiguration that register a server at
// `url` (https://host:port, no path) whose certificate `ca_bundle_pem` verifies, as one
// multi-document YAML for `kubectl apply -f -`. As KAI's: the pod hooks are called only for pods
// whose spec.schedulerName is `scheduler_name` (a CEL matchCondition) outside the control plane's
// and kai's own namespaces; the mutating hook is called again when a later mutation changed the
// pod (reinvocationPolicy IfNeeded); every hook fails closed (failurePolicy Fail). The scheduler
// name must be a DNS subdomain (what the API server accepts as a pod's schedulerName); an error
// names it otherwise.
Result<std::string> WebhookConfigYaml(const std::string& url, const std::string& ca_bundle_pem,
                                      const std::string& scheduler_name);

// The same configurations for a server behind a Service of the cluster (`kai install`).
struct WebhookService {
  std::string ns = "kai-scheduler", name = "kai-admission";
  int port = 443;
};
Result<std::string> WebhookServiceConfigYaml(const WebhookService& service,
                                             const std::string& ca_bundle_pem,
                                             const std::string& scheduler_name);

// RFC 4648 base64 (the JSON Patch travels base64-encoded).
std::string Base64(std::string_view bytes);

}  // namespace kai::admission
