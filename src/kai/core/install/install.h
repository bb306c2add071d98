#pragma once
// `kai install --print`: deploy/'s manifests as one multi-document YAML stream for
// `kubectl apply -f -`, in an order the API server accepts in one pass (namespaces, CRDs, RBAC,
// Secrets and Services, Deployments, priority classes, the webhook configurations last). The
// stream holds no object of kai's own CRDs: kubectl maps every object of a stream to its API
// before the CRDs in it exist, so a Queue next to its CRD is refused. The default queue tree and
// SchedulingShard (deploy/defaults/) are created by `kai controllers --create-defaults` once the
// CRDs serve, or printed alone by `kai install --print --defaults-only`. Pure: the TLS material
// and the webhook configurations come from the caller.
#include <span>
#include <string>
#include <vector>

#include "kai/core/install/embedded.h"
#include "kai/core/util/result.h"

namespace kai::install {

// The image every Deployment in deploy/install/ names; --image replaces it.
inline constexpr std::string_view kDefaultImage = "kai:latest";

struct InstallOptions {
  std::string image{kDefaultImage};
  // Extra documents the caller made (the TLS Secret, the webhook configurations).
  std::vector<std::string> extra_documents;
  bool crds = true;            // deploy/crds/
  bool defaults_only = false;  // only deploy/defaults/: the default queues and shard
};

// One object of the stream: where it came from, what it is, its text.
struct Manifest {
  std::string source;  // deploy/... or "generated"
  std::string api_version, kind, ns, name;
  std::string text;
};

// Splits the files under deploy/{crds,rbac,install,defaults}/ into objects. An object that
// several files hold (each component's RBAC file creates its namespace) is kept once; two
// different texts for one object are an error naming both files.
Result<std::vector<Manifest>> CollectManifests(std::span<const EmbeddedFile> files,
                                               const InstallOptions& options);

// The whole stream (`---` between objects), the image replaced. The image reference is
// checked (no whitespace, quotes or YAML specials).
Result<std::string> RenderInstall(std::span<const EmbeddedFile> files,
                                  const InstallOptions& options);

// The objects of deploy/defaults/ (the default queue tree and SchedulingShard), in file order.
Result<std::vector<Manifest>> DefaultObjects(std::span<const EmbeddedFile> files);

// A kubernetes.io/tls Secret holding a certificate, its key and the CA that signed it.
std::string TlsSecretYaml(const std::string& ns, const std::string& name,
                          const std::string& cert_pem, const std::string& key_pem,
                          const std::string& ca_pem);

}  // namespace kai::install
