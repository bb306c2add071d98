#pragma once
// `kai admission`: the HTTPS webhook server around admission/'s decisions (serve/http_server.h,
// bounded as every kai server: AdmissionReview bodies of at most 4 MiB, application/json only).
// Routes:
//   POST /mutate-pod, /validate-pod, /validate-queue, /validate-podgroup   AdmissionReview v1
//   GET  /healthz
//   GET  /metrics  kai_admission_request_duration_seconds{webhook} (histogram),
//                  kai_admission_rejections_total{webhook,reason} (reason: the Verdict's word,
//                  or bad_review for a body that is no AdmissionReview), and process_*; also on
//                  --metrics-bind-address (plain HTTP) when set
// The certificate and key are read from files and read again when either file changes (checked
// at most every second, on a handshake), so a rotated certificate is served without a restart.
#include <atomic>
#include <ostream>
#include <string>

#include "kai/core/admission/admission.h"
#include "kai/kube/client/api_client.h"

namespace kai::webhook {

struct ServerOptions {
  std::string address = "0.0.0.0:9443";  // HOST:PORT
  std::string metrics_address;           // HOST:PORT of a plain HTTP /metrics ("" off)
  std::string health_address;            // HOST:PORT of a plain HTTP /healthz, /readyz ("" off)
  std::string cert_file, key_file;       // PEM: the certificate chain, its private key
  std::string kubeconfig, context;       // for the Queue and PodGroup lookups
  double qps = 0;  // --qps and --burst: the API client's rate limit (qps 0: none)
  int burst = 300;
  admission::Options admission;
};

// Serves on the component runtime (kube/runtime/manager.h) until a stop. Exit status: 0 on a
// stop, 2 on bad options or unreadable certificate files, 1 when an address cannot be bound.
int RunAdmission(const ServerOptions& options, std::ostream& err);
// The same on a client the caller shares (`kai run`; options.kubeconfig is not read), also
// stopping when `also_stop` is set.
int RunAdmission(const ServerOptions& options, const k8s::ApiClient& client, std::ostream& err,
                 const std::atomic<bool>* also_stop = nullptr);

}  // namespace kai::webhook
