#include "kai/kube/tls/certs.h"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <ctime>
#include <memory>

namespace kai::webhook {
namespace {

X509* ReadCert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* c = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return c;
}

TEST(Certs, NotAfterIsTheValidityAskedFor) {
  auto c = GenerateServingCertificate({{"x.example"}, std::chrono::hours(48)});
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto not_after = CertificateNotAfter(c->cert_pem);
  ASSERT_TRUE(not_after.ok()) << not_after.error().message;
  const int64_t now = std::time(nullptr);
  EXPECT_NEAR(static_cast<double>(*not_after - now), 48 * 3600.0, 120.0);
  EXPECT_FALSE(CertificateNotAfter("not a certificate").ok());
}

TEST(Certs, TheServingCertificateVerifiesAgainstItsCaForTheServiceNames) {
  auto c = GenerateServingCertificate({ServiceDnsNames("kai-scheduler", "kai-admission")});
  ASSERT_TRUE(c.ok()) << c.error().message;
  X509* ca = ReadCert(c->ca_pem);
  X509* leaf = ReadCert(c->cert_pem);
  ASSERT_TRUE(ca && leaf);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf, nullptr);
  X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx), "kai-admission.kai-scheduler.svc", 0);
  EXPECT_EQ(X509_verify_cert(ctx), 1)
      << X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx));
  // Another host name does not verify.
  X509_STORE_CTX_cleanup(ctx);
  X509_STORE_CTX_init(ctx, store, leaf, nullptr);
  X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx), "other.example.com", 0);
  EXPECT_NE(X509_verify_cert(ctx), 1);
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  X509_free(ca);
  X509_free(leaf);
  EXPECT_NE(c->key_pem.find("-----BEGIN PRIVATE KEY-----"), std::string::npos);
}

TEST(Certs, EveryCallMakesANewCa) {
  auto a = GenerateServingCertificate({{"a"}});
  auto b = GenerateServingCertificate({{"a"}});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->ca_pem, b->ca_pem);
  EXPECT_FALSE(GenerateServingCertificate({{}}).ok());
}

}  // namespace
}  // namespace kai::webhook
