#pragma once
// The files of deploy/ (CRDs, RBAC, Deployments, defaults, dashboards) compiled into the binary,
// so that `kai install --print` needs no checkout. CMake generates the definition
// (cmake/embed_files.cmake) at build time from the files themselves.
#include <span>
#include <string_view>

namespace kai::install {

struct EmbeddedFile {
  std::string_view path;  // relative to the repository root, e.g. deploy/rbac/binder.yaml
  std::string_view text;
};

std::span<const EmbeddedFile> EmbeddedDeployFiles();

}  // namespace kai::install
