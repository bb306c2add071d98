#pragma once
// Where the API server is and how to authenticate to it: a kubeconfig file (--kubeconfig,
// KUBECONFIG, ~/.kube/config; its current context or --context) or the in-cluster service
// account, resolved the way controller-runtime resolves them.
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "kai/core/util/result.h"

namespace kai::k8s {

struct ClusterConfig {
  std::string server;  // https://host:port (http:// too, for tests)
  std::string context;
  std::string default_namespace = "default";
  // Authentication: a bearer token (inline or re-read from a file, which rotates in a pod) or a
  // client certificate and key (PEM, from data or files).
  std::string token;
  std::string token_file;
  std::string client_cert_pem, client_key_pem;
  std::string client_cert_file, client_key_file;
  // Server verification: a CA bundle (PEM data or file), or none at all.
  std::string ca_pem;
  std::string ca_file;
  bool insecure_skip_tls_verify = false;
  std::string source;  // where this came from, for messages
  // Client-side rate limiting, as client-go's rest.Config: `qps` requests a second on average,
  // `burst` at once; qps 0 (or less): no limit (the default; --qps and --burst set it).
  double qps = 0;
  int burst = 0;
};

// The environment, injected so that resolution is testable.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvLookup ProcessEnv();

// Reads a kubeconfig file; `context` "" = its current-context. Errors name the file and field.
Result<ClusterConfig> LoadKubeconfig(const std::string& path, const std::string& context);
// The same from the file's text (`path` names it in errors and anchors relative file names).
Result<ClusterConfig> ParseKubeconfig(std::string_view text, const std::string& path,
                                      const std::string& context);

// The in-cluster service account (KUBERNETES_SERVICE_HOST/PORT, the token and CA under `sa_dir`,
// normally /var/run/secrets/kubernetes.io/serviceaccount).
Result<ClusterConfig> InClusterConfig(const EnvLookup& env, const std::string& sa_dir);

// --kubeconfig when given, else $KUBECONFIG (first existing entry), else in-cluster when
// KUBERNETES_SERVICE_HOST is set, else ~/.kube/config.
Result<ClusterConfig> ResolveConfig(const std::string& kubeconfig_flag, const std::string& context,
                                    const EnvLookup& env);

// A bearer token that follows its file (re-read at most every `refresh_seconds`).
class TokenSource {
 public:
  explicit TokenSource(const ClusterConfig& c, int refresh_seconds = 60);
  std::string Token() const;

 private:
  std::string inline_, file_;
  int refresh_;
  mutable std::mutex mu_;
  mutable std::string cached_;
  mutable long long read_at_ = -1;
};

}  // namespace kai::k8s
