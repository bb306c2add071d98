#include "kai/kube/client/kubeconfig.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kai/core/k8s/doc.h"
#include "kai/kube/tls/base64.h"

namespace kai::k8s {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// Finds the entry of a kubeconfig list (clusters, users, contexts) with the given name.
doc::Node Named(const doc::Node& list, std::string_view name, std::string_view inner) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i]["name"].Scalar() == name) return list[i][inner];
  }
  return {};
}

class KubeconfigReader {
 public:
  KubeconfigReader(std::string path, ClusterConfig& out) : path_(std::move(path)), out_(out) {
    dir_ = fs::path(path_).parent_path().string();
  }

  // A file path field, relative to the kubeconfig's directory.
  std::string PathField(const doc::Node& n, std::string_view key) const {
    std::string v(n[key].Scalar());
    if (v.empty() || fs::path(v).is_absolute()) return v;
    return (fs::path(dir_) / v).string();
  }

  // A *-data field (base64 PEM); false with `error` set when it does not decode.
  bool DataField(const doc::Node& n, std::string_view key, std::string& into, std::string& error) {
    const std::string_view v = n[key].Scalar();
    if (v.empty()) return true;
    auto decoded = tls::Base64Decode(v);
    if (!decoded) {
      error = path_ + ": " + std::string(key) + ": not valid base64";
      return false;
    }
    into = std::move(*decoded);
    return true;
  }

  std::optional<std::string> Cluster(const doc::Node& c, std::string_view name) {
    if (!c.IsMap()) return path_ + ": clusters: no cluster named \"" + std::string(name) + "\"";
    out_.server = std::string(c["server"].Scalar());
    if (out_.server.empty()) return path_ + ": cluster " + std::string(name) + ": server: missing";
    out_.ca_file = PathField(c, "certificate-authority");
    out_.insecure_skip_tls_verify = c["insecure-skip-tls-verify"].Scalar() == "true";
    std::string err;
    if (!DataField(c, "certificate-authority-data", out_.ca_pem, err)) return err;
    return std::nullopt;
  }

  std::optional<std::string> User(const doc::Node& u) {
    if (!u.IsMap()) return std::nullopt;  // anonymous
    out_.token = std::string(u["token"].Scalar());
    out_.token_file = PathField(u, "tokenFile");
    out_.client_cert_file = PathField(u, "client-certificate");
    out_.client_key_file = PathField(u, "client-key");
    std::string err;
    if (!DataField(u, "client-certificate-data", out_.client_cert_pem, err)) return err;
    if (!DataField(u, "client-key-data", out_.client_key_pem, err)) return err;
    if (u["exec"].IsDefined() || u["auth-provider"].IsDefined()) {
      return path_ +
             ": user: exec and auth-provider credentials are not supported by kai; use "
             "a token, token file or client certificate";
    }
    return std::nullopt;
  }

 private:
  std::string path_, dir_;
  ClusterConfig& out_;
};

}  // namespace

EnvLookup ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());  // the process edge: front ends only
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

Result<ClusterConfig> LoadKubeconfig(const std::string& path, const std::string& context) {
  auto text = ReadFile(path);
  if (!text) return Error{path + ": cannot read kubeconfig"};
  return ParseKubeconfig(*text, path, context);
}

Result<ClusterConfig> ParseKubeconfig(std::string_view text, const std::string& path,
                                      const std::string& context) {
  // A kubeconfig is a few KiB; 16 MiB leaves room for many inline certificates.
  auto parsed = doc::ParseYaml(text, doc::Limits{.max_bytes = size_t{16} << 20});
  if (!parsed.ok()) return Error{path + ": " + parsed.error().message};
  const auto roots = parsed->Roots();
  if (roots.empty() || !roots[0].IsMap()) return Error{path + ": not a kubeconfig (a mapping)"};
  const doc::Node root = roots[0];
  ClusterConfig out;
  out.source = path;
  out.context = context.empty() ? std::string(root["current-context"].Scalar()) : context;
  if (out.context.empty()) return Error{path + ": current-context: not set (pass --context)"};
  const doc::Node ctx = Named(root["contexts"], out.context, "context");
  if (!ctx.IsMap()) return Error{path + ": contexts: no context named \"" + out.context + "\""};
  if (auto ns = ctx["namespace"].Scalar(); !ns.empty()) out.default_namespace = std::string(ns);
  KubeconfigReader reader(path, out);
  const std::string cluster(ctx["cluster"].Scalar());
  if (auto err = reader.Cluster(Named(root["clusters"], cluster, "cluster"), cluster)) {
    return Error{*err};
  }
  const std::string user(ctx["user"].Scalar());
  if (auto err = reader.User(Named(root["users"], user, "user"))) return Error{*err};
  return out;
}

Result<ClusterConfig> InClusterConfig(const EnvLookup& env, const std::string& sa_dir) {
  const auto host = env("KUBERNETES_SERVICE_HOST");
  const auto port = env("KUBERNETES_SERVICE_PORT");
  if (!host || !port) {
    return Error{
        "in-cluster configuration: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT "
        "must be set"};
  }
  ClusterConfig out;
  out.source = "in-cluster service account (" + sa_dir + ")";
  const bool v6 = host->find(':') != std::string::npos;
  out.server = "https://" + (v6 ? "[" + *host + "]" : *host) + ":" + *port;
  out.token_file = sa_dir + "/token";
  out.ca_file = sa_dir + "/ca.crt";
  if (!fs::exists(out.token_file)) return Error{out.token_file + ": service account token missing"};
  if (auto ns = ReadFile(sa_dir + "/namespace"); ns && !ns->empty()) out.default_namespace = *ns;
  return out;
}

Result<ClusterConfig> ResolveConfig(const std::string& kubeconfig_flag, const std::string& context,
                                    const EnvLookup& env) {
  if (!kubeconfig_flag.empty()) return LoadKubeconfig(kubeconfig_flag, context);
  if (auto kc = env("KUBECONFIG"); kc && !kc->empty()) {
    std::stringstream list(*kc);
    std::string entry;
    while (std::getline(list, entry, ':')) {
      if (!entry.empty() && fs::exists(entry)) return LoadKubeconfig(entry, context);
    }
    return Error{"KUBECONFIG=" + *kc + ": no such file"};
  }
  if (env("KUBERNETES_SERVICE_HOST")) {
    return InClusterConfig(env, "/var/run/secrets/kubernetes.io/serviceaccount");
  }
  if (auto home = env("HOME")) {
    const std::string path = *home + "/.kube/config";
    if (fs::exists(path)) return LoadKubeconfig(path, context);
  }
  return Error{"no cluster configuration: pass --kubeconfig, set KUBECONFIG, or run in a pod"};
}

TokenSource::TokenSource(const ClusterConfig& c, int refresh_seconds)
    : inline_(c.token), file_(c.token_file), refresh_(refresh_seconds) {}

std::string TokenSource::Token() const {
  if (file_.empty()) return inline_;
  const long long now = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
  std::lock_guard<std::mutex> lock(mu_);
  if (read_at_ < 0 || now - read_at_ >= refresh_) {
    if (auto t = ReadFile(file_)) {
      while (!t->empty() && (t->back() == '\n' || t->back() == ' ')) t->pop_back();
      cached_ = *t;
    }
    read_at_ = now;
  }
  return cached_.empty() ? inline_ : cached_;
}

}  // namespace kai::k8s
