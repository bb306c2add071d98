#pragma once
// The admission webhooks' TLS material for `kai install`: a private CA and a serving
// certificate for the webhook Service's DNS names, signed by it. The API server trusts the CA
// through the webhook configurations' caBundle; the server reads the pair from a Secret.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "kai/core/util/result.h"

namespace kai::webhook {

struct ServingCertificate {
  std::string ca_pem;    // the CA's certificate (the caBundle)
  std::string cert_pem;  // the serving certificate
  std::string key_pem;   // its private key (PKCS#8)
};

struct CertificateRequest {
  std::vector<std::string> dns_names;  // the first is also the subject's common name
  std::chrono::hours validity{24 * 365 * 5};
};

// A fresh CA (EC P-256, self-signed) and a serving certificate for the names, both valid from
// now for `validity`. Errors name the OpenSSL step that failed.
Result<ServingCertificate> GenerateServingCertificate(const CertificateRequest& request);

// When a PEM certificate stops being valid (its notAfter), as seconds since the epoch; an error
// when the text holds no certificate.
Result<int64_t> CertificateNotAfter(const std::string& cert_pem);

// The DNS names the API server uses for a Service `name` in `ns`.
std::vector<std::string> ServiceDnsNames(const std::string& ns, const std::string& name);

}  // namespace kai::webhook
