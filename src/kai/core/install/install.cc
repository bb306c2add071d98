#include "kai/core/install/install.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "kai/core/admission/review.h"
#include "kai/core/k8s/doc.h"

namespace kai::install {
namespace {

// The order kinds go in: what a later object needs exists before it is applied.
int Rank(std::string_view kind) {
  static constexpr std::string_view kOrder[] = {"Namespace",
                                                "CustomResourceDefinition",
                                                "ServiceAccount",
                                                "ClusterRole",
                                                "ClusterRoleBinding",
                                                "Role",
                                                "RoleBinding",
                                                "Secret",
                                                "ConfigMap",
                                                "Service",
                                                "Deployment",
                                                "PodDisruptionBudget",
                                                "PriorityClass",
                                                "Queue",
                                                "SchedulingShard",
                                                "MutatingWebhookConfiguration",
                                                "ValidatingWebhookConfiguration"};
  const auto* it = std::find(std::begin(kOrder), std::end(kOrder), kind);
  return static_cast<int>(it - std::begin(kOrder));  // unknown kinds after the known ones
}

bool Wanted(std::string_view path, const InstallOptions& o) {
  if (path.ends_with(".json") || path.ends_with("README.md")) return false;
  if (path.starts_with("deploy/defaults/")) return o.defaults_only;
  if (o.defaults_only) return false;
  if (path.starts_with("deploy/crds/")) return o.crds;
  return path.starts_with("deploy/rbac/") || path.starts_with("deploy/install/");
}

// Calls `line` with each line of `text`, without its newline.
template <class F>
void ForEachLine(std::string_view text, F line) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    line(text.substr(pos, end - pos));
    pos = end + 1;
  }
}

bool CommentOrBlank(std::string_view line) {
  const size_t first = line.find_first_not_of(' ');
  return first == std::string_view::npos || line[first] == '#';
}

// The documents of a YAML stream, split at `---` lines; comment-only parts are dropped.
std::vector<std::string> SplitDocuments(std::string_view text) {
  std::vector<std::string> docs;
  std::string current;
  bool has_content = false;
  auto flush = [&] {
    if (has_content) docs.push_back(current);
    current.clear();
    has_content = false;
  };
  ForEachLine(text, [&](std::string_view line) {
    if (line == "---" || line.starts_with("--- ")) {
      flush();
      return;
    }
    if (!CommentOrBlank(line)) has_content = true;
    current.append(line).push_back('\n');
  });
  flush();
  return docs;
}

Result<Manifest> Identify(const std::string& source, std::string text) {
  auto parsed = doc::ParseYaml(text);
  if (!parsed.ok()) return Error{source + ": " + parsed.error().message};
  const auto roots = parsed->Roots();
  if (roots.size() != 1 || !roots[0].IsMap()) {
    return Error{source + ": expected one object per document"};
  }
  const doc::Node& obj = roots[0];
  Manifest m{source,
             std::string(obj["apiVersion"].Scalar()),
             std::string(obj["kind"].Scalar()),
             std::string(obj["metadata"]["namespace"].Scalar()),
             std::string(obj["metadata"]["name"].Scalar()),
             std::move(text)};
  if (m.api_version.empty() || m.kind.empty() || m.name.empty()) {
    return Error{source + ": an object without apiVersion, kind or metadata.name"};
  }
  return m;
}

// The text without its comment-only and blank lines: what two copies of one object must share.
std::string Significant(std::string_view text) {
  std::string out;
  ForEachLine(text, [&](std::string_view line) {
    if (!CommentOrBlank(line)) out.append(line).push_back('\n');
  });
  return out;
}

std::string KeyOf(const Manifest& m) {
  return m.api_version + "/" + m.kind + "/" + m.ns + "/" + m.name;
}

// Keeps the first of equal objects; different texts for one object are an error.
Result<bool> AddUnique(Manifest m, std::map<std::string, size_t>& seen,
                       std::vector<Manifest>& out) {
  const std::string key = KeyOf(m);
  auto [it, inserted] = seen.emplace(key, out.size());
  if (inserted) {
    out.push_back(std::move(m));
    return true;
  }
  const Manifest& first = out[it->second];
  if (Significant(first.text) != Significant(m.text)) {
    return Error{m.source + ": " + m.kind + " " + (m.ns.empty() ? "" : m.ns + "/") + m.name +
                 " differs from the one in " + first.source};
  }
  return false;
}

bool ValidImage(std::string_view image) {
  if (image.empty()) return false;
  return std::none_of(image.begin(), image.end(), [](char c) {
    return c <= ' ' || c == '"' || c == '\'' || c == '#' || c == '{' || c == '}' || c == ',' ||
           c == '[' || c == ']' || c == '&' || c == '*' || c == '!' || c == '|' || c == '>' ||
           c == '%' || c == '`' || static_cast<unsigned char>(c) >= 0x7f;
  });
}

void ReplaceAll(std::string& text, std::string_view from, std::string_view to) {
  for (size_t pos = text.find(from); pos != std::string::npos;
       pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
}

}  // namespace

Result<std::vector<Manifest>> CollectManifests(std::span<const EmbeddedFile> files,
                                               const InstallOptions& options) {
  std::vector<Manifest> out;
  std::map<std::string, size_t> seen;
  auto add = [&](const std::string& source, std::string_view text) -> Result<bool> {
    for (std::string& d : SplitDocuments(text)) {
      auto m = Identify(source, std::move(d));
      if (!m.ok()) return m.error();
      auto added = AddUnique(std::move(m.value()), seen, out);
      if (!added.ok()) return added.error();
    }
    return true;
  };
  for (const EmbeddedFile& f : files) {
    if (!Wanted(f.path, options)) continue;
    if (auto r = add(std::string(f.path), f.text); !r.ok()) return r.error();
  }
  for (const std::string& extra :
       options.defaults_only ? std::vector<std::string>{} : options.extra_documents) {
    if (auto r = add("generated", extra); !r.ok()) return r.error();
  }
  // Stable: within one kind the files' order (sorted paths), then the documents' own order.
  std::stable_sort(out.begin(), out.end(), [](const Manifest& a, const Manifest& b) {
    return Rank(a.kind) < Rank(b.kind);
  });
  return out;
}

Result<std::string> RenderInstall(std::span<const EmbeddedFile> files,
                                  const InstallOptions& options) {
  if (!ValidImage(options.image)) {
    return Error{"--image: \"" + options.image + "\" is not an image reference"};
  }
  auto manifests = CollectManifests(files, options);
  if (!manifests.ok()) return manifests.error();
  std::string out;
  for (Manifest& m : *manifests) {
    if (m.kind == "Deployment") {
      ReplaceAll(m.text, "image: " + std::string(kDefaultImage), "image: " + options.image);
      ReplaceAll(m.text, "-image=" + std::string(kDefaultImage), "-image=" + options.image);
    }
    out += "---\n# Source: " + m.source + "\n" + m.text;
  }
  return out;
}

Result<std::vector<Manifest>> DefaultObjects(std::span<const EmbeddedFile> files) {
  InstallOptions o;
  o.defaults_only = true;
  return CollectManifests(files, o);
}

std::string TlsSecretYaml(const std::string& ns, const std::string& name,
                          const std::string& cert_pem, const std::string& key_pem,
                          const std::string& ca_pem) {
  return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
         "\ntype: kubernetes.io/tls\ndata:\n  tls.crt: " + admission::Base64(cert_pem) +
         "\n  tls.key: " + admission::Base64(key_pem) + "\n  ca.crt: " + admission::Base64(ca_pem) +
         "\n";
}

}  // namespace kai::install
