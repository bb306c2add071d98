#pragma once
// `kai install --print`: the full installation as one YAML stream (install/install.h), with
// the admission webhooks' TLS material made here: a fresh CA and serving certificate, or the
// ones kept in --tls-dir (so that applying the stream again keeps the same certificate).
#include <ostream>
#include <string>

namespace kai::run {

struct InstallCommandOptions {
  std::string image;    // "" = deploy/'s default (kai:latest)
  std::string tls_dir;  // "" = a fresh certificate on every run, kept nowhere
  bool crds = true;
  bool defaults_only = false;  // only the default queues and shard (after the CRDs)
};

// Writes the stream to `out`; 0, or 1 with a `kai: ...` line on `err`.
int PrintInstall(const InstallCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace kai::run
