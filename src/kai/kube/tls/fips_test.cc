#include "kai/kube/tls/fips.h"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/provider.h>
#include <openssl/ssl.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "kai/kube/tls/certs.h"
#include "kai/testing/scoped_env.h"

namespace kai::tls {
namespace {

namespace fs = std::filesystem;

fs::path FreshDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("kai-fips-test-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

struct LibCtxFree {
  void operator()(OSSL_LIB_CTX* c) const { OSSL_LIB_CTX_free(c); }
};
using LibCtx = std::unique_ptr<OSSL_LIB_CTX, LibCtxFree>;

TEST(Fips, ModulesDirIsOpenSslModulesElseItsBuiltInDirectory) {
  {
    testutil::ScopedEnv env;
    env.Set("OPENSSL_MODULES", "/somewhere/ossl-modules");
    EXPECT_EQ(ProviderModulesDir(), "/somewhere/ossl-modules");
  }
  testutil::ScopedEnv env;
  env.Unset("OPENSSL_MODULES");
  const std::string built_in = ProviderModulesDir();
  EXPECT_FALSE(built_in.empty());
  EXPECT_EQ(built_in.find('"'), std::string::npos) << built_in;
  EXPECT_FALSE(OpenSslConfigFile().empty());
}

TEST(Fips, WithoutTheProviderModuleTheErrorSaysWhatIsMissingAndHowToGetIt) {
  const fs::path dir = FreshDir("empty");
  testutil::ScopedEnv env;
  env.Set("OPENSSL_MODULES", dir.string());
  LibCtx ctx(OSSL_LIB_CTX_new());
  const Status s = EnableFips(ctx.get());
  ASSERT_FALSE(s.ok());
  const std::string& m = s.error().message;
  EXPECT_NE(m.find("OpenSSL's FIPS provider is not available"), std::string::npos) << m;
  EXPECT_NE(m.find("no fips.so in " + dir.string()), std::string::npos) << m;
  EXPECT_NE(m.find("kai does not start"), std::string::npos) << m;
  EXPECT_NE(m.find("openssl fipsinstall -module " + (dir / "fips.so").string()), std::string::npos)
      << m;
  EXPECT_NE(m.find("docs/fips.md"), std::string::npos) << m;
  EXPECT_EQ(EVP_default_properties_is_fips_enabled(ctx.get()), 0);
}

TEST(Fips, AModuleThatDoesNotLoadIsNamedWithOpenSslsReason) {
  const fs::path dir = FreshDir("broken");
  std::ofstream(dir / "fips.so") << "not a shared object";
  testutil::ScopedEnv env;
  env.Set("OPENSSL_MODULES", dir.string());
  LibCtx ctx(OSSL_LIB_CTX_new());
  const Status s = EnableFips(ctx.get());
  ASSERT_FALSE(s.ok());
  const std::string& m = s.error().message;
  EXPECT_NE(m.find("could not load its FIPS provider " + (dir / "fips.so").string()),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("fipsmodule.cnf"), std::string::npos) << m;
  EXPECT_NE(m.find("docs/fips.md"), std::string::npos) << m;
}

// The process-wide switch where the machine has no FIPS provider (Debian, Ubuntu): refused, and
// the process's TLS is as it was.
TEST(Fips, TheProcessStaysOutOfFipsModeWhereTheProviderIsMissing) {
  testutil::ScopedEnv env;
  env.Unset("OPENSSL_MODULES");
  if (fs::exists(fs::path(ProviderModulesDir()) / "fips.so")) {
    GTEST_SKIP() << "this machine has OpenSSL's FIPS provider";
  }
  const Status s = EnableFipsMode();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("no fips.so"), std::string::npos) << s.error().message;
  EXPECT_FALSE(FipsModeEnabled());
  EXPECT_EQ(EVP_default_properties_is_fips_enabled(nullptr), 0);
  EVP_MD* md = EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
  ASSERT_NE(md, nullptr);
  EXPECT_STREQ(OSSL_PROVIDER_get0_name(EVP_MD_get0_provider(md)), "default");
  EVP_MD_free(md);
}

// --- the FIPS TLS settings, on OpenSSL's default provider ---------------------------------------

struct SslCtxFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
using SslCtx = std::unique_ptr<SSL_CTX, SslCtxFree>;

SslCtx Server(bool restricted) {
  auto cert = webhook::GenerateServingCertificate({{"kai.example"}});
  EXPECT_TRUE(cert.ok());
  SslCtx ctx(SSL_CTX_new(TLS_server_method()));
  BIO* c = BIO_new_mem_buf(cert->cert_pem.data(), static_cast<int>(cert->cert_pem.size()));
  BIO* k = BIO_new_mem_buf(cert->key_pem.data(), static_cast<int>(cert->key_pem.size()));
  X509* x = PEM_read_bio_X509(c, nullptr, nullptr, nullptr);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(k, nullptr, nullptr, nullptr);
  EXPECT_EQ(SSL_CTX_use_certificate(ctx.get(), x), 1);
  EXPECT_EQ(SSL_CTX_use_PrivateKey(ctx.get(), key), 1);
  X509_free(x);
  EVP_PKEY_free(key);
  BIO_free(c);
  BIO_free(k);
  if (restricted) {
    EXPECT_TRUE(RestrictToFips(ctx.get()).ok());
  }
  return ctx;
}

// The cipher a handshake between the two contexts agreed on, in memory; "" when it failed.
std::string Handshake(SSL_CTX* server_ctx, SSL_CTX* client_ctx) {
  SSL* server = SSL_new(server_ctx);
  SSL* client = SSL_new(client_ctx);
  BIO* sb = nullptr;
  BIO* cb = nullptr;
  BIO_new_bio_pair(&sb, 0, &cb, 0);
  SSL_set_bio(server, sb, sb);
  SSL_set_bio(client, cb, cb);
  SSL_set_accept_state(server);
  SSL_set_connect_state(client);
  std::string cipher;
  for (int round = 0; round < 20; ++round) {
    const int c = SSL_do_handshake(client);
    const int s = SSL_do_handshake(server);
    if (c == 1 && s == 1) {
      cipher = SSL_get_cipher_name(client);
      break;
    }
    const int ce = SSL_get_error(client, c);
    const int se = SSL_get_error(server, s);
    const auto waiting = [](int e) { return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_NONE; };
    if (!waiting(ce) || !waiting(se)) break;
  }
  SSL_free(client);
  SSL_free(server);
  ERR_clear_error();
  return cipher;
}

TEST(Fips, RestrictedContextsOfferTls12AndUpWithAesGcmOnly) {
  SslCtx ctx(SSL_CTX_new(TLS_client_method()));
  ASSERT_TRUE(RestrictToFips(ctx.get()).ok());
  EXPECT_EQ(SSL_CTX_get_min_proto_version(ctx.get()), TLS1_2_VERSION);
  const std::set<std::string> approved = {
      "TLS_AES_128_GCM_SHA256",        "TLS_AES_256_GCM_SHA384",
      "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
      "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384"};
  STACK_OF(SSL_CIPHER)* ciphers = SSL_CTX_get_ciphers(ctx.get());
  ASSERT_GT(sk_SSL_CIPHER_num(ciphers), 0);
  for (int i = 0; i < sk_SSL_CIPHER_num(ciphers); ++i) {
    const std::string name = SSL_CIPHER_get_name(sk_SSL_CIPHER_value(ciphers, i));
    EXPECT_TRUE(approved.count(name)) << name;
  }
}

TEST(Fips, TwoRestrictedEndsAgreeOnAnAesGcmSuite) {
  SslCtx server = Server(true);
  SslCtx client(SSL_CTX_new(TLS_client_method()));
  ASSERT_TRUE(RestrictToFips(client.get()).ok());
  EXPECT_EQ(Handshake(server.get(), client.get()), "TLS_AES_128_GCM_SHA256");
  // TLS 1.2 only, as a client may be.
  SSL_CTX_set_max_proto_version(client.get(), TLS1_2_VERSION);
  EXPECT_EQ(Handshake(server.get(), client.get()), "ECDHE-ECDSA-AES128-GCM-SHA256");
}

TEST(Fips, ARestrictedServerRefusesAClientOfNonApprovedSuitesOnly) {
  SslCtx server = Server(true);
  SslCtx chacha(SSL_CTX_new(TLS_client_method()));
  ASSERT_EQ(SSL_CTX_set_ciphersuites(chacha.get(), "TLS_CHACHA20_POLY1305_SHA256"), 1);
  ASSERT_EQ(SSL_CTX_set_cipher_list(chacha.get(), "ECDHE-ECDSA-CHACHA20-POLY1305"), 1);
  EXPECT_EQ(Handshake(server.get(), chacha.get()), "");
  // The same client against a server left as OpenSSL sets it up.
  SslCtx open = Server(false);
  EXPECT_EQ(Handshake(open.get(), chacha.get()), "TLS_CHACHA20_POLY1305_SHA256");
  // X25519 alone is not an approved group.
  SslCtx x25519(SSL_CTX_new(TLS_client_method()));
  ASSERT_EQ(SSL_CTX_set1_groups_list(x25519.get(), "X25519"), 1);
  EXPECT_EQ(Handshake(server.get(), x25519.get()), "");
}

TEST(Fips, OutsideFipsModeContextsAreLeftAlone) {
  ASSERT_FALSE(FipsModeEnabled());
  SslCtx ctx(SSL_CTX_new(TLS_client_method()));
  const int before = sk_SSL_CIPHER_num(SSL_CTX_get_ciphers(ctx.get()));
  ASSERT_TRUE(RestrictWhenFips(ctx.get()).ok());
  EXPECT_EQ(sk_SSL_CIPHER_num(SSL_CTX_get_ciphers(ctx.get())), before);
}

}  // namespace
}  // namespace kai::tls
