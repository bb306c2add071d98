// `kai <component> --fips-mode` through the binary: where OpenSSL's FIPS provider is missing (as
// on Debian and Ubuntu, which do not package it) every component refuses to start with one line
// saying what is missing; with a provider named fips (tests/fips' stand-in) it goes on.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "kai/testing/scoped_env.h"

namespace kai::cmd {
namespace {

namespace fs = std::filesystem;

struct Ran {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

Ran RunKai(const std::string& args) {
  const std::string command = std::string("'") + KAI_BINARY + "' " + args + " 2>&1";
  Ran ran;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return ran;
  std::array<char, 4096> buf;
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;)
    ran.output.append(buf.data(), n);
  const int status = ::pclose(p);
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return ran;
}

// A fresh directory for OPENSSL_MODULES, with the stand-in provider as fips.so when asked.
fs::path ModulesDir(const std::string& name, bool with_provider) {
  const fs::path dir = fs::temp_directory_path() / ("kai-fips-mode-test-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  if (with_provider) fs::copy_file(KAI_FAKE_FIPS, dir / "fips.so");
  return dir;
}

// Every command that talks to an API server.
constexpr const char* kComponents[] = {
    "scheduler",  "binder",      "resource-reservation",  "admission",
    "podgrouper", "controllers", "scale-adjuster",        "operator",
    "run",        "queues",      "explain pod default/x", "numa-exporter --node-name n1"};

constexpr const char* kNoKubeconfig = "--kubeconfig /nonexistent/kai-fips-test/kubeconfig";

TEST(FipsModeBinary, EveryComponentRefusesToStartWithoutTheProvider) {
  const fs::path dir = ModulesDir("empty", false);
  testutil::ScopedEnv env;
  env.Set("OPENSSL_MODULES", dir.string());
  const std::string expected =
      "kai: FIPS mode: OpenSSL's FIPS provider is not available: there is no fips.so in " +
      dir.string() + " ";
  for (const char* component : kComponents) {
    const Ran ran = RunKai(std::string(component) + " --fips-mode " + kNoKubeconfig);
    EXPECT_EQ(ran.exit_code, 1) << component << ": " << ran.output;
    EXPECT_EQ(ran.output.rfind(expected, 0), 0u) << component << ": " << ran.output;
    EXPECT_NE(ran.output.find("docs/fips.md"), std::string::npos) << ran.output;
    // That line only: nothing ran, the kubeconfig was never read.
    EXPECT_EQ(std::count(ran.output.begin(), ran.output.end(), '\n'), 1) << ran.output;
  }
}

TEST(FipsModeBinary, WithoutTheFlagNothingAsksForTheProvider) {
  const fs::path dir = ModulesDir("unused", false);
  testutil::ScopedEnv env;
  env.Set("OPENSSL_MODULES", dir.string());
  const Ran ran = RunKai(std::string("scheduler ") + kNoKubeconfig);
  EXPECT_NE(ran.exit_code, 0);
  EXPECT_EQ(ran.output.find("FIPS"), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find("kubeconfig"), std::string::npos) << ran.output;
}

TEST(FipsModeBinary, WithAProviderNamedFipsTheComponentStarts) {
  const fs::path dir = ModulesDir("provider", true);
  testutil::ScopedEnv env;
  env.Set("OPENSSL_MODULES", dir.string());
  const Ran ran = RunKai(std::string("scheduler --fips-mode ") + kNoKubeconfig);
  EXPECT_NE(ran.output.find("INFO\tscheduler\tFIPS mode: TLS through OpenSSL's FIPS provider only"),
            std::string::npos)
      << ran.output;
  EXPECT_EQ(ran.output.find("not available"), std::string::npos) << ran.output;
  // It went on to read its kubeconfig, which is not there.
  EXPECT_NE(ran.output.find("kubeconfig"), std::string::npos) << ran.output;
}

TEST(FipsModeBinary, OfflineCommandsHaveNoSuchFlag) {
  const Ran ran = RunKai("simulate --fips-mode -f /nonexistent");
  EXPECT_EQ(ran.exit_code, 2) << ran.output;
}

}  // namespace
}  // namespace kai::cmd
