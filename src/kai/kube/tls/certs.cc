#include "kai/kube/tls/certs.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <memory>

namespace kai::webhook {
namespace {

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

Result<KeyPtr> NewKey() {
  KeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) return Error{"generating an EC P-256 key failed"};
  return key;
}

bool SetRandomSerial(X509* cert) {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return false;
  bytes[0] &= 0x7f;  // a positive serial
  std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>> bn(BN_bin2bn(bytes, sizeof bytes, nullptr));
  return bn && BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert)) != nullptr;
}

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (!ext) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// A certificate for `key` named `common_name`, valid from now for `validity`, not yet signed.
Result<CertPtr> NewCertificate(EVP_PKEY* key, const std::string& common_name,
                               std::chrono::hours validity) {
  CertPtr cert(X509_new());
  if (!cert || X509_set_version(cert.get(), 2) != 1 || !SetRandomSerial(cert.get())) {
    return Error{"creating a certificate failed"};
  }
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -300);  // clock skew between machines
  X509_gmtime_adj(X509_getm_notAfter(cert.get()),
                  static_cast<long>(std::chrono::seconds(validity).count()));
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  if (X509_set_pubkey(cert.get(), key) != 1) return Error{"setting a certificate's key failed"};
  return cert;
}

// `write` puts the PEM into a memory BIO; the text is returned.
template <class Write>
Result<std::string> Pem(Write write, const char* what) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || write(bio.get()) != 1) return Error{std::string("writing ") + what + " failed"};
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

Result<std::string> Pem(X509* cert) {
  return Pem([cert](BIO* b) { return PEM_write_bio_X509(b, cert); }, "a certificate PEM");
}

Result<std::string> Pem(EVP_PKEY* key) {
  return Pem(
      [key](BIO* b) {
        return PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr);
      },
      "a private key PEM");
}

Result<CertPtr> SelfSignedCa(EVP_PKEY* key, std::chrono::hours validity) {
  auto ca = NewCertificate(key, "kai-admission-ca", validity);
  if (!ca.ok()) return ca.error();
  X509* c = ca->get();
  X509_set_issuer_name(c, X509_get_subject_name(c));
  if (!AddExtension(c, c, NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExtension(c, c, NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !AddExtension(c, c, NID_subject_key_identifier, "hash") ||
      X509_sign(c, key, EVP_sha256()) == 0) {
    return Error{"signing the CA certificate failed"};
  }
  return std::move(ca.value());
}

std::string SubjectAltNames(const std::vector<std::string>& names) {
  std::string san;
  for (const std::string& n : names) san += (san.empty() ? "DNS:" : ",DNS:") + n;
  return san;
}

Result<CertPtr> ServingCert(EVP_PKEY* key, X509* ca, EVP_PKEY* ca_key,
                            const CertificateRequest& r) {
  auto cert = NewCertificate(key, r.dns_names.front(), r.validity);
  if (!cert.ok()) return cert.error();
  X509* c = cert->get();
  X509_set_issuer_name(c, X509_get_subject_name(ca));
  if (!AddExtension(c, ca, NID_basic_constraints, "critical,CA:FALSE") ||
      !AddExtension(c, ca, NID_key_usage, "critical,digitalSignature,keyEncipherment") ||
      !AddExtension(c, ca, NID_ext_key_usage, "serverAuth") ||
      !AddExtension(c, ca, NID_subject_alt_name, SubjectAltNames(r.dns_names)) ||
      X509_sign(c, ca_key, EVP_sha256()) == 0) {
    return Error{"signing the serving certificate failed"};
  }
  return std::move(cert.value());
}

}  // namespace

Result<ServingCertificate> GenerateServingCertificate(const CertificateRequest& request) {
  if (request.dns_names.empty()) return Error{"a serving certificate needs at least one DNS name"};
  auto ca_key = NewKey();
  if (!ca_key.ok()) return ca_key.error();
  auto key = NewKey();
  if (!key.ok()) return key.error();
  // The CA outlives the serving certificate by a year, so a renewal can keep the caBundle.
  auto ca = SelfSignedCa(ca_key->get(), request.validity + std::chrono::hours(24 * 365));
  if (!ca.ok()) return ca.error();
  auto cert = ServingCert(key->get(), ca->get(), ca_key->get(), request);
  if (!cert.ok()) return cert.error();
  ServingCertificate out;
  for (auto [target, pem] :
       {std::pair{&out.ca_pem, Pem(ca->get())}, std::pair{&out.cert_pem, Pem(cert->get())},
        std::pair{&out.key_pem, Pem(key->get())}}) {
    if (!pem.ok()) return pem.error();
    *target = std::move(pem.value());
  }
  return out;
}

Result<int64_t> CertificateNotAfter(const std::string& cert_pem) {
  BioPtr bio(BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())));
  if (!bio) return Error{"reading the certificate failed"};
  CertPtr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return Error{"no PEM certificate"};
  struct tm t {};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert.get()), &t) != 1) {
    return Error{"the certificate's notAfter cannot be read"};
  }
  return static_cast<int64_t>(timegm(&t));
}

std::vector<std::string> ServiceDnsNames(const std::string& ns, const std::string& name) {
  return {name + "." + ns + ".svc", name + "." + ns + ".svc.cluster.local", name + "." + ns, name};
}

}  // namespace kai::webhook
