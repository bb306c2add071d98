#include "kai/kube/client/kubeconfig.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace kai::k8s {
namespace {

namespace fs = std::filesystem;

class KubeconfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kai-kubeconfig-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  EnvLookup Env(std::map<std::string, std::string> vars) {
    return [vars](const std::string& k) -> std::optional<std::string> {
      auto it = vars.find(k);
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
  }
  fs::path dir_;
};

constexpr const char* kTwoContexts = R"(
apiVersion: v1
kind: Config
current-context: admin
clusters:
- name: c1
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: aGVsbG8gY2E=
- name: c2
  cluster:
    server: https://10.0.0.1:443
    certificate-authority: pki/ca.crt
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: secret-token
- name: robot
  user:
    tokenFile: token
    client-certificate: certs/robot.crt
    client-key-data: a2V5
contexts:
- name: admin
  context: {cluster: c1, user: admin, namespace: team-a}
- name: robot
  context: {cluster: c2, user: robot}
)";

TEST_F(KubeconfigTest, CurrentContextWithInlineTokenAndCaData) {
  auto c = LoadKubeconfig(Write("config", kTwoContexts), "");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");
  EXPECT_EQ(c->token, "secret-token");
  EXPECT_EQ(c->ca_pem, "hello ca");
  EXPECT_EQ(c->default_namespace, "team-a");
  EXPECT_FALSE(c->insecure_skip_tls_verify);
}

TEST_F(KubeconfigTest, NamedContextResolvesFilesRelativeToTheKubeconfig) {
  auto c = LoadKubeconfig(Write("config", kTwoContexts), "robot");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->server, "https://10.0.0.1:443");
  EXPECT_EQ(c->ca_file, (dir_ / "pki/ca.crt").string());
  EXPECT_EQ(c->token_file, (dir_ / "token").string());
  EXPECT_EQ(c->client_cert_file, (dir_ / "certs/robot.crt").string());
  EXPECT_EQ(c->client_key_pem, "key");
  EXPECT_TRUE(c->insecure_skip_tls_verify);
  EXPECT_EQ(c->default_namespace, "default");
}

TEST_F(KubeconfigTest, ErrorsNameTheFileAndField) {
  const std::string path = Write("config", kTwoContexts);
  auto missing = LoadKubeconfig(path, "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find(path + ": contexts: no context named \"nope\""),
            std::string::npos)
      << missing.error().message;
  auto bad = LoadKubeconfig(Write("bad", "clusters: [\n"), "");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("invalid YAML"), std::string::npos);
  auto absent = LoadKubeconfig((dir_ / "absent").string(), "");
  ASSERT_FALSE(absent.ok());
  EXPECT_NE(absent.error().message.find("cannot read kubeconfig"), std::string::npos);
  auto exec = LoadKubeconfig(Write("exec", R"(
current-context: x
clusters: [{name: c, cluster: {server: "https://a"}}]
users: [{name: u, user: {exec: {command: aws}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
)"),
                             "");
  ASSERT_FALSE(exec.ok());
  EXPECT_NE(exec.error().message.find("exec and auth-provider credentials are not supported"),
            std::string::npos);
  auto bad_b64 = LoadKubeconfig(Write("b64", R"(
current-context: x
clusters: [{name: c, cluster: {server: "https://a", certificate-authority-data: "%%%"}}]
users: [{name: u, user: {}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
)"),
                                "");
  ASSERT_FALSE(bad_b64.ok());
  EXPECT_NE(bad_b64.error().message.find("certificate-authority-data: not valid base64"),
            std::string::npos);
}

TEST_F(KubeconfigTest, ResolutionOrderFlagThenEnvThenInClusterThenHome) {
  const std::string flag = Write("flag", kTwoContexts);
  const std::string env_file = Write("env", kTwoContexts);
  auto from_flag = ResolveConfig(flag, "", Env({{"KUBECONFIG", env_file}}));
  ASSERT_TRUE(from_flag.ok());
  EXPECT_EQ(from_flag->source, flag);
  auto from_env =
      ResolveConfig("", "", Env({{"KUBECONFIG", (dir_ / "missing").string() + ":" + env_file}}));
  ASSERT_TRUE(from_env.ok()) << from_env.error().message;
  EXPECT_EQ(from_env->source, env_file);
  fs::create_directories(dir_ / ".kube");
  Write(".kube/config", kTwoContexts);
  auto from_home = ResolveConfig("", "", Env({{"HOME", dir_.string()}}));
  ASSERT_TRUE(from_home.ok()) << from_home.error().message;
  EXPECT_EQ(from_home->source, (dir_ / ".kube/config").string());
  auto none = ResolveConfig("", "", Env({}));
  EXPECT_FALSE(none.ok());
}

TEST_F(KubeconfigTest, InClusterServiceAccount) {
  fs::create_directories(dir_ / "sa");
  Write("sa/token", "sa-token\n");
  Write("sa/ca.crt", "ca");
  Write("sa/namespace", "kai-scheduler");
  auto c = InClusterConfig(
      Env({{"KUBERNETES_SERVICE_HOST", "fd00::1"}, {"KUBERNETES_SERVICE_PORT", "443"}}),
      (dir_ / "sa").string());
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->server, "https://[fd00::1]:443");
  EXPECT_EQ(c->default_namespace, "kai-scheduler");
  EXPECT_EQ(TokenSource(*c).Token(), "sa-token");
  auto no_env = InClusterConfig(Env({}), (dir_ / "sa").string());
  EXPECT_FALSE(no_env.ok());
}

TEST_F(KubeconfigTest, TokenFileIsReadAgainAfterTheRefreshPeriod) {
  ClusterConfig c;
  c.token_file = Write("tok", "one");
  TokenSource fresh(c, 0);  // re-read on every call
  EXPECT_EQ(fresh.Token(), "one");
  Write("tok", "two");
  EXPECT_EQ(fresh.Token(), "two");
  TokenSource cached(c, 3600);
  EXPECT_EQ(cached.Token(), "two");
  Write("tok", "three");
  EXPECT_EQ(cached.Token(), "two");
}

}  // namespace
}  // namespace kai::k8s
