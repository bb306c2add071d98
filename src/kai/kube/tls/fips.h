#pragma once
// FIPS mode (--fips-mode, docs/fips.md): every TLS handshake, key and certificate of the process
// served by OpenSSL 3's FIPS provider alone, with FIPS-approved TLS settings. Switched on once,
// at start, before anything sets up TLS; kai refuses to start where the provider is missing.
#include <openssl/types.h>

#include <string>

#include "kai/core/util/result.h"

namespace kai::tls {

// Loads OpenSSL's "fips" provider and its "base" provider (key and certificate encodings, no
// algorithms) into `ctx` (null: the process's default library context), makes "fips=yes" the
// context's default property query, and checks that SHA-256 and AES-GCM now come from the fips
// provider. The error says what is missing (fips.so in the modules directory, or the
// configuration its self-test needs) and where to get it.
Status EnableFips(OSSL_LIB_CTX* ctx);

// FIPS mode for the whole process: EnableFips on the default library context, which libcurl and
// every server's TLS context use. Idempotent once it succeeded.
Status EnableFipsMode();

// True once EnableFipsMode succeeded.
bool FipsModeEnabled();

// Restricts `ctx` to FIPS-approved TLS: TLS 1.2 and 1.3 only, ECDHE key exchange on the NIST
// curves, AES-GCM cipher suites. An error names the setting OpenSSL refused.
Status RestrictToFips(SSL_CTX* ctx);

// RestrictToFips when the process is in FIPS mode; nothing otherwise.
Status RestrictWhenFips(SSL_CTX* ctx);

// Where OpenSSL loads provider modules from: $OPENSSL_MODULES, else its built-in MODULESDIR.
std::string ProviderModulesDir();

// The OpenSSL configuration file it reads: $OPENSSL_CONF, else OPENSSLDIR/openssl.cnf.
std::string OpenSslConfigFile();

}  // namespace kai::tls
