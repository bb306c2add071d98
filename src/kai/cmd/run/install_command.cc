#include "kai/cmd/run/install_command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "kai/core/admission/review.h"
#include "kai/core/install/install.h"
#include "kai/kube/tls/certs.h"

namespace kai::run {
namespace {

namespace fs = std::filesystem;
constexpr const char* kNamespace = "kai-scheduler";
constexpr const char* kService = "kai-admission";
constexpr const char* kSecret = "kai-admission-tls";
// The scheduler name deploy/install's Deployments use (their --scheduler-name default).
constexpr const char* kScheduler = "kai-scheduler";

Result<std::string> ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  if (!in) return Error{p.string() + ": cannot be read"};
  return s.str();
}

// Created with its final mode (a key is never readable by others, not even for a moment), then
// renamed into place.
Result<bool> WriteFile(const fs::path& p, const std::string& text, mode_t mode) {
  const std::string tmp = p.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return Error{tmp + ": cannot be created"};
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const bool closed = ::close(fd) == 0;
  if (!written || !closed || ::rename(tmp.c_str(), p.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return Error{p.string() + ": cannot be written"};
  }
  return true;
}

// The certificate kept in `dir` when all three files are there; none of them: a new one,
// written there; some of them: an error (a half-written directory is not silently replaced).
Result<webhook::ServingCertificate> CertificateFor(const std::string& dir) {
  const auto request = webhook::CertificateRequest{webhook::ServiceDnsNames(kNamespace, kService)};
  if (dir.empty()) return webhook::GenerateServingCertificate(request);
  const fs::path d(dir);
  const fs::path ca = d / "ca.crt", cert = d / "tls.crt", key = d / "tls.key";
  const int present = fs::exists(ca) + fs::exists(cert) + fs::exists(key);
  if (present == 3) {
    webhook::ServingCertificate c;
    for (auto [path, target] :
         {std::pair{ca, &c.ca_pem}, std::pair{cert, &c.cert_pem}, std::pair{key, &c.key_pem}}) {
      auto text = ReadFile(path);
      if (!text.ok()) return text.error();
      *target = std::move(text.value());
    }
    return c;
  }
  if (present != 0) {
    return Error{"--tls-dir " + dir + ": holds some of ca.crt, tls.crt, tls.key but not all"};
  }
  auto c = webhook::GenerateServingCertificate(request);
  if (!c.ok()) return c.error();
  std::error_code ec;
  fs::create_directories(d, ec);
  if (ec) return Error{"--tls-dir " + dir + ": " + ec.message()};
  for (auto [path, text, mode] :
       {std::tuple{ca, &c->ca_pem, mode_t{0644}}, std::tuple{cert, &c->cert_pem, mode_t{0644}},
        std::tuple{key, &c->key_pem, mode_t{0600}}}) {
    if (auto w = WriteFile(path, *text, mode); !w.ok()) return w.error();
  }
  return c;
}

}  // namespace

int PrintInstall(const InstallCommandOptions& o, std::ostream& out, std::ostream& err) {
  auto cert = CertificateFor(o.tls_dir);
  if (!cert.ok()) {
    err << "kai: " << cert.error().message << "\n";
    return 1;
  }
  install::InstallOptions io;
  if (!o.image.empty()) io.image = o.image;
  io.crds = o.crds;
  io.defaults_only = o.defaults_only;
  io.extra_documents.push_back(
      install::TlsSecretYaml(kNamespace, kSecret, cert->cert_pem, cert->key_pem, cert->ca_pem));
  auto webhooks =
      admission::WebhookServiceConfigYaml({kNamespace, kService, 443}, cert->ca_pem, kScheduler);
  if (!webhooks.ok()) {
    err << "kai: " << webhooks.error().message << "\n";
    return 1;
  }
  io.extra_documents.push_back(std::move(*webhooks));
  auto stream = install::RenderInstall(install::EmbeddedDeployFiles(), io);
  if (!stream.ok()) {
    err << "kai: " << stream.error().message << "\n";
    return 1;
  }
  out << *stream;
  return 0;
}

}  // namespace kai::run
