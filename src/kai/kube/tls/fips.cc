#include "kai/kube/tls/fips.h"

#include <openssl/conf.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/ssl.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string_view>

namespace kai::tls {
namespace {

// TLS 1.2: ECDHE key exchange and AES-GCM only (SP 800-52r2's approved suites kube-apiserver,
// Go's TLS, speaks); TLS 1.3: its AES-GCM suites.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384";
constexpr const char* kTls13Suites = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384";
constexpr const char* kGroups = "P-256:P-384:P-521";
constexpr const char* kSignatures =
    "ECDSA+SHA256:ECDSA+SHA384:ECDSA+SHA512:rsa_pss_rsae_sha256:rsa_pss_rsae_sha384:"
    "rsa_pss_rsae_sha512:RSA+SHA256:RSA+SHA384:RSA+SHA512";

std::atomic<bool> g_fips_mode{false};

// OpenSSL's queued errors, oldest first, each once; the queue is emptied.
std::string OpenSslErrors() {
  std::string out;
  char line[256];
  for (unsigned long e, last = 0; (e = ERR_get_error()) != 0; last = e) {
    if (e == last) continue;
    ERR_error_string_n(e, line, sizeof line);
    if (!out.empty()) out += "; ";
    out += line;
  }
  return out.empty() ? "OpenSSL gave no reason" : out;
}

// Why the "fips" provider did not load, and how to get it.
std::string ProviderMissing() {
  const std::string dir = ProviderModulesDir();
  const std::filesystem::path module = std::filesystem::path(dir) / "fips.so";
  std::error_code ec;
  if (!std::filesystem::exists(module, ec)) {
    ERR_clear_error();
    return "FIPS mode: OpenSSL's FIPS provider is not available: there is no fips.so in " + dir +
           " (OpenSSL's provider modules directory: $OPENSSL_MODULES, else its MODULESDIR), so "
           "kai does not start. Install OpenSSL 3's FIPS provider module there (fips.so, built "
           "from a FIPS-validated OpenSSL release with `./Configure enable-fips`; Debian and "
           "Ubuntu do not package it), write its configuration with `openssl fipsinstall -module " +
           module.string() +
           " -out fipsmodule.cnf` and include that from the OpenSSL "
           "configuration (" +
           OpenSslConfigFile() + ", or $OPENSSL_CONF), or run a -fips image built so; see " +
           "docs/fips.md";
  }
  return "FIPS mode: OpenSSL could not load its FIPS provider " + module.string() + " (" +
         OpenSslErrors() +
         "), so kai does not start. The provider checks itself against the configuration "
         "`openssl fipsinstall` writes (fipsmodule.cnf, with the module's checksum), which the "
         "OpenSSL configuration (" +
         OpenSslConfigFile() + ", or $OPENSSL_CONF) must include and activate; see docs/fips.md";
}

// The name of the provider that `ctx` fetches `algorithm` from with its default properties;
// "" when none offers it.
std::string DigestProvider(OSSL_LIB_CTX* ctx, const char* algorithm) {
  EVP_MD* md = EVP_MD_fetch(ctx, algorithm, nullptr);
  if (md == nullptr) return "";
  std::string name = OSSL_PROVIDER_get0_name(EVP_MD_get0_provider(md));
  EVP_MD_free(md);
  return name;
}

std::string CipherProvider(OSSL_LIB_CTX* ctx, const char* algorithm) {
  EVP_CIPHER* cipher = EVP_CIPHER_fetch(ctx, algorithm, nullptr);
  if (cipher == nullptr) return "";
  std::string name = OSSL_PROVIDER_get0_name(EVP_CIPHER_get0_provider(cipher));
  EVP_CIPHER_free(cipher);
  return name;
}

Status CheckServedByFips(OSSL_LIB_CTX* ctx) {
  for (const auto& [what, provider] :
       {std::pair{"SHA2-256", DigestProvider(ctx, "SHA2-256")},
        std::pair{"AES-128-GCM", CipherProvider(ctx, "AES-128-GCM")}}) {
    if (provider != "fips") {
      return Error{std::string("FIPS mode: ") + what + " does not come from OpenSSL's fips " +
                   "provider (" + (provider.empty() ? "no provider offers it" : provider) + ": " +
                   OpenSslErrors() + "), so kai does not start; see docs/fips.md"};
    }
  }
  ERR_clear_error();
  return Ok();
}

// A failed load turns off OpenSSL's loading of its default provider when nothing else was
// loaded; load it, so that the attempt leaves the context as it would have been.
void KeepDefaultProvider(OSSL_LIB_CTX* ctx) {
  if (!OSSL_PROVIDER_available(ctx, "default")) OSSL_PROVIDER_try_load(ctx, "default", 1);
  ERR_clear_error();
}

Status Refused(const std::string& setting) {
  return Error{"FIPS mode: TLS: OpenSSL refused " + setting + " (" + OpenSslErrors() + ")"};
}

}  // namespace

Status EnableFips(OSSL_LIB_CTX* ctx) {
  if (ctx == nullptr) OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, nullptr);
#if defined(__SANITIZE_ADDRESS__)
  // OpenSSL 3.0 keeps, for the rest of the process, parts of a provider whose load failed and of
  // the default provider loaded again after it: libcrypto's memory, once per process (a failed
  // load ends the start), which the sanitizer builds would otherwise report as kai's leak.
  __lsan::ScopedDisabler openssl_keeps_these;
#endif
  if (OSSL_PROVIDER_load(ctx, "fips") == nullptr) {
    std::string why = ProviderMissing();
    KeepDefaultProvider(ctx);
    return Error{std::move(why)};
  }
  if (OSSL_PROVIDER_load(ctx, "base") == nullptr) {
    return Error{"FIPS mode: OpenSSL's base provider did not load (" + OpenSslErrors() + ")"};
  }
  if (EVP_default_properties_enable_fips(ctx, 1) != 1) {
    return Error{"FIPS mode: OpenSSL refused the default property fips=yes (" + OpenSslErrors() +
                 ")"};
  }
  return CheckServedByFips(ctx);
}

Status EnableFipsMode() {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (g_fips_mode.load()) return Ok();
  if (Status s = EnableFips(nullptr); !s.ok()) return s;
  g_fips_mode.store(true);
  return Ok();
}

bool FipsModeEnabled() { return g_fips_mode.load(); }

Status RestrictToFips(SSL_CTX* ctx) {
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) return Refused("TLS 1.2 at least");
  if (SSL_CTX_set_cipher_list(ctx, kTls12Ciphers) != 1) return Refused("the TLS 1.2 suites");
  if (SSL_CTX_set_ciphersuites(ctx, kTls13Suites) != 1) return Refused("the TLS 1.3 suites");
  if (SSL_CTX_set1_groups_list(ctx, kGroups) != 1)
    return Refused("the groups " + std::string(kGroups));
  if (SSL_CTX_set1_sigalgs_list(ctx, kSignatures) != 1) return Refused("the signature algorithms");
  return Ok();
}

Status RestrictWhenFips(SSL_CTX* ctx) { return FipsModeEnabled() ? RestrictToFips(ctx) : Ok(); }

std::string ProviderModulesDir() {
  if (const char* env = std::getenv("OPENSSL_MODULES"); env != nullptr && *env != '\0') return env;
  // OpenSSL_version(OPENSSL_MODULES_DIR) reads `MODULESDIR: "/usr/lib/.../ossl-modules"`.
  const std::string_view text = OpenSSL_version(OPENSSL_MODULES_DIR);
  const size_t open = text.find('"');
  const size_t close = text.rfind('"');
  if (open == std::string_view::npos || close <= open) return std::string(text);
  return std::string(text.substr(open + 1, close - open - 1));
}

std::string OpenSslConfigFile() {
  char* file = CONF_get1_default_config_file();
  std::string out = file != nullptr ? file : "";
  OPENSSL_free(file);
  return out;
}

}  // namespace kai::tls
