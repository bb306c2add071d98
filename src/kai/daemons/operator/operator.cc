#include "kai/daemons/operator/operator.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "kai/core/install/embedded.h"
#include "kai/core/k8s/conditions.h"
#include "kai/core/k8s/doc.h"
#include "kai/core/operator/json_tree.h"
#include "kai/core/operator/render.h"
#include "kai/core/util/time.h"
#include "kai/kube/runtime/manager.h"
#include "kai/kube/serve/controller_metrics.h"
#include "kai/kube/serve/metrics.h"
#include "kai/kube/tls/base64.h"
#include "kai/kube/tls/certs.h"
#include "kai/kube/tls/fips.h"

namespace kai::operatord {
namespace {

namespace res = k8s::resources;
using Clock = std::chrono::steady_clock;

constexpr k8s::ResourceType kConfig{"kai.scheduler/v1", "Config", "configs", false};
constexpr k8s::ResourceType kDeployment{"apps/v1", "Deployment", "deployments", true};
constexpr k8s::ResourceType kSecret{"v1", "Secret", "secrets", true};
constexpr k8s::ResourceType kBudget{"policy/v1", "PodDisruptionBudget", "poddisruptionbudgets",
                                    true};
constexpr std::string_view kTlsSecret = "kai-admission-tls";

// The kinds the operator applies (deploy/'s objects).
constexpr k8s::ResourceType kKinds[] = {
    {"v1", "Namespace", "namespaces", false},
    {"v1", "ServiceAccount", "serviceaccounts", true},
    kSecret,
    {"v1", "Service", "services", true},
    {"v1", "ConfigMap", "configmaps", true},
    kDeployment,
    kBudget,
    {"rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", false},
    {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", false},
    {"rbac.authorization.k8s.io/v1", "Role", "roles", true},
    {"rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", true},
    {"scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", false},
    {"admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration",
     "mutatingwebhookconfigurations", false},
    {"admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration",
     "validatingwebhookconfigurations", false},
};

const k8s::ResourceType* KindOf(const op::Desired& d) {
  for (const auto& k : kKinds) {
    if (k.api_version == d.api_version && k.kind == d.kind) return &k;
  }
  return nullptr;
}

std::string Where(const op::Desired& d) {
  return d.kind + " " + (d.ns.empty() ? "" : d.ns + "/") + d.name;
}

// What one pass found, for the conditions.
struct PassResult {
  std::vector<std::string> failed;       // objects not applied, each with the answer
  std::vector<std::string> unavailable;  // Deployments without their replicas available
  std::vector<std::string> progressing;  // Deployments whose rollout has not been observed
  std::map<std::string, std::vector<std::string>> shard_unavailable, shard_failed;
  std::set<std::string> shard_deployed;
};

std::string Joined(const std::vector<std::string>& items, size_t max = 10) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < max; ++i) out += (i ? "; " : "") + items[i];
  if (items.size() > max) out += "; and " + std::to_string(items.size() - max) + " more";
  return out;
}

class Operator final : public runtime::Component {
 public:
  Operator(const OperatorOptions& o, runtime::Manager& m) : o_(o), m_(m), client_(m.client()) {
    registry_.AddSource([this] { return Metrics(); });
  }

  Status Start() override { return Ok(); }
  Status Sync(std::chrono::milliseconds) override { return Ok(); }
  bool Synced() const override { return true; }

  int Run() override {
    m_.Log("started: reconciling Config " + o_.config_name + " (default image " + o_.image + ")");
    while (!m_.Stopping()) {
      const bool ok = MeasuredPass();
      if (o_.once) return ok ? 0 : 1;
      m_.Sleep(ok ? o_.resync_period
                  : std::min<std::chrono::milliseconds>(o_.resync_period, std::chrono::seconds(2)));
    }
    return 0;
  }

  void Stop(bool) override {}

 private:
  std::vector<prometheus::MetricFamily> Metrics() const {
    const auto n = [](int64_t v) { return static_cast<double>(v); };
    return {serve::CounterOf("kai_operator_passes_total", "Reconcile passes.", n(passes_)),
            serve::CounterOf("kai_operator_applied_total", "Objects applied.", n(applied_)),
            serve::CounterOf("kai_operator_failures_total", "Objects not applied.", n(failures_)),
            serve::CounterOf("kai_operator_certificates_total", "TLS certificates made.",
                             n(certificates_))};
  }

  void LogOnce(const std::string& line) {
    if (line == last_log_) return;
    last_log_ = line;
    m_.Log(line);
  }

  bool MeasuredPass() {
    const Clock::time_point started = Clock::now();
    passes_metric_.Active(1);
    const bool ok = Pass();
    passes_metric_.Observe(Clock::now() - started, ok ? serve::ReconcileMetrics::Result::kSuccess
                                                      : serve::ReconcileMetrics::Result::kError);
    passes_metric_.Active(-1);
    return ok;
  }

  bool Pass() {
    ++passes_;
    const std::string config_path = k8s::ObjectPath(kConfig, "", o_.config_name);
    const k8s::HttpResponse got = client_.Get(config_path);
    if (got.status == 404) {
      LogOnce("waiting for Config " + o_.config_name + " (kubectl get configs.kai.scheduler)");
      return !o_.once;
    }
    if (!got.ok()) {
      LogOnce(k8s::Describe({"GET", config_path}, got));
      return false;
    }
    auto shards = ListShards();
    if (!shards) {
      LogOnce(shards.error().message);
      return false;
    }
    op::RenderInput in{got.body, *shards, std::nullopt, o_.image};
    in.fips_mode = tls::FipsModeEnabled();
    auto ns = NamespaceOf(got.body);
    auto tls = EnsureTls(ns);
    if (!tls) {
      LogOnce("the admission webhooks' certificate: " + tls.error().message);
    } else {
      in.tls = *tls;
    }
    auto rendered = op::Render(install::EmbeddedDeployFiles(), in);
    PassResult result;
    if (!rendered) {
      result.failed.push_back(rendered.error().message);
      LogOnce(rendered.error().message);
    } else {
      ReportIgnored(rendered->ignored);
      Apply(*rendered, result);
      Prune(*rendered, result);
      Observe(*rendered, result);
    }
    WriteConfigStatus(got.body, rendered ? rendered->ignored : std::vector<std::string>{}, result);
    if (rendered) WriteShardStatus(*shards, result);
    if (result.failed.empty()) {
      LogOnce(result.unavailable.empty()
                  ? "every component deployed and available"
                  : "every component deployed; waiting for " + Joined(result.unavailable));
    }
    return result.failed.empty() && tls.ok();
  }

  std::string NamespaceOf(const std::string& config_json) const {
    auto d = op::ParseJson(config_json, "Config");
    if (!d) return "kai-scheduler";
    const op::Json* ns = op::FindPath(*d, {"spec", "namespace"});
    return ns && ns->IsString() && ns->GetStringLength() > 0 ? ns->GetString() : "kai-scheduler";
  }

  Result<std::vector<op::Shard>> ListShards() const {
    const std::string path = k8s::CollectionPath(res::kShard);
    const k8s::HttpResponse r = client_.Get(path);
    if (r.status == 404) return std::vector<op::Shard>();  // the CRD is not installed yet
    if (!r.ok()) return Error{k8s::Describe({"GET", path}, r)};
    auto d = op::ParseJson(r.body, "the SchedulingShard list");
    if (!d) return d.error();
    std::vector<op::Shard> out;
    const op::Json* items = op::Find(*d, "items");
    if (items == nullptr || !items->IsArray()) return out;
    for (const auto& item : items->GetArray()) {
      op::Shard s;
      auto str = [&](std::initializer_list<std::string_view> path) {
        const op::Json* v = op::FindPath(item, path);
        return v && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : "";
      };
      s.name = str({"metadata", "name"});
      s.uid = str({"metadata", "uid"});
      s.partition_label_value = str({"spec", "partitionLabelValue"});
      if (const op::Json* deleting = op::FindPath(item, {"metadata", "deletionTimestamp"});
          deleting && !deleting->IsNull()) {
        continue;
      }
      if (!s.name.empty()) out.push_back(std::move(s));
    }
    std::sort(out.begin(), out.end(),
              [](const op::Shard& a, const op::Shard& b) { return a.name < b.name; });
    return out;
  }

  // The Secret's certificate while it is valid for more than renew_before; else a new one.
  Result<op::Tls> EnsureTls(const std::string& ns) {
    const std::string path = k8s::ObjectPath(kSecret, ns, kTlsSecret);
    const k8s::HttpResponse r = client_.Get(path);
    if (r.ok()) {
      auto kept = Read(r.body);
      if (kept) {
        auto not_after = webhook::CertificateNotAfter(kept->cert_pem);
        const auto left = std::chrono::seconds((not_after ? *not_after : 0) - WallClockSeconds());
        if (not_after && left > o_.renew_before) return kept;
        m_.Log("Secret " + ns + "/" + std::string(kTlsSecret) +
               (not_after ? ": the certificate expires within the renewal window; a new one"
                          : ": " + not_after.error().message + "; a new one"));
      } else {
        m_.Log("Secret " + ns + "/" + std::string(kTlsSecret) + ": " + kept.error().message +
               "; a new one");
      }
    } else if (r.status != 404) {
      return Error{k8s::Describe({"GET", path}, r)};
    }
    auto made = webhook::GenerateServingCertificate(
        {webhook::ServiceDnsNames(ns, "kai-admission"), std::chrono::hours(24 * 365)});
    if (!made) return made.error();
    ++certificates_;
    return op::Tls{made->ca_pem, made->cert_pem, made->key_pem};
  }

  static Result<op::Tls> Read(const std::string& secret_json) {
    auto d = op::ParseJson(secret_json, "the Secret");
    if (!d) return d.error();
    op::Tls t;
    for (auto [key, target] : {std::pair{"ca.crt", &t.ca_pem}, std::pair{"tls.crt", &t.cert_pem},
                               std::pair{"tls.key", &t.key_pem}}) {
      const op::Json* v = op::FindPath(*d, {"data", key});
      if (v == nullptr || !v->IsString()) return Error{std::string("data.") + key + ": missing"};
      auto decoded = tls::Base64Decode(std::string_view(v->GetString(), v->GetStringLength()));
      if (!decoded) return Error{std::string("data.") + key + ": not base64"};
      *target = std::move(*decoded);
    }
    return t;
  }

  void ReportIgnored(const std::vector<std::string>& ignored) {
    std::set<std::string> now(ignored.begin(), ignored.end());
    for (const std::string& i : now) {
      if (!ignored_.count(i)) m_.Log("Config " + o_.config_name + ": not applied: " + i);
    }
    ignored_ = std::move(now);
  }

  std::string ApplyPath(const k8s::ResourceType& kind, const op::Desired& d) const {
    return k8s::ObjectPath(kind, d.ns, d.name) + "?fieldManager=" + std::string(op::kFieldManager) +
           "&force=true";
  }

  void Apply(const op::Rendered& r, PassResult& result) {
    for (const op::Desired& d : r.objects) {
      const k8s::ResourceType* kind = KindOf(d);
      std::string error;
      if (kind == nullptr) {
        error = "kai's operator does not apply " + d.api_version + " " + d.kind;
      } else {
        std::string body = d.json;
        if (!o_.image_pull_secret.empty() && d.kind == "Deployment") body = WithPullSecret(body);
        const k8s::HttpResponse resp =
            client_.Patch(ApplyPath(*kind, d), body, k8s::PatchType::kApply);
        if (resp.ok()) {
          ++applied_;
          continue;
        }
        error = k8s::Describe({"PATCH", ApplyPath(*kind, d)}, resp);
      }
      ++failures_;
      const std::string line = Where(d) + ": " + error;
      result.failed.push_back(line);
      if (d.kind == "Deployment" && d.component == "scheduler") {
        result.shard_failed[ShardOf(d)].push_back(line);
      }
      m_.Log("not applied: " + line);
    }
  }

  std::string WithPullSecret(const std::string& json) const {
    auto d = op::ParseJson(json, "Deployment");
    if (!d) return json;
    op::Alloc& a = d->GetAllocator();
    op::Json& pod = op::Member(op::Member(op::Member(*d, "spec", rapidjson::kObjectType, a),
                                          "template", rapidjson::kObjectType, a),
                               "spec", rapidjson::kObjectType, a);
    op::Json& secrets = op::Member(pod, "imagePullSecrets", rapidjson::kArrayType, a);
    op::Json s(rapidjson::kObjectType);
    s.AddMember("name", op::Str(o_.image_pull_secret, a), a);
    secrets.PushBack(s, a);
    return op::ToJson(*d);
  }

  static std::string ShardOf(const op::Desired& d) {
    auto doc = op::ParseJson(d.json, "Deployment");
    if (!doc) return "";
    const op::Json* v = op::FindPath(*doc, {"metadata", "labels", "kai.scheduler/shard"});
    return v && v->IsString() ? v->GetString() : "";
  }

  // Deployments and PodDisruptionBudgets the operator made that the Config no longer asks for (a
  // component turned off, a budget disabled or its Deployment down to one replica).
  void Prune(const op::Rendered& r, PassResult& result) {
    for (const k8s::ResourceType* kind : {&kDeployment, &kBudget}) {
      std::set<std::string> wanted;
      for (const op::Desired& d : r.objects) {
        if (d.kind == kind->kind) wanted.insert(d.name);
      }
      PruneKind(r.ns, *kind, wanted, result);
    }
  }

  void PruneKind(const std::string& ns, const k8s::ResourceType& kind,
                 const std::set<std::string>& wanted, PassResult& result) {
    const std::string query =
        "labelSelector=" +
        k8s::UrlEscape(std::string(op::kManagedByLabel) + "=" + std::string(op::kFieldManager));
    std::vector<std::string> stale;
    k8s::ApiClient::ListCallbacks cb;
    cb.page = [&](const doc::Node& items) {
      for (size_t i = 0; i < items.size(); ++i) {
        const std::string name(items[i]["metadata"]["name"].Scalar());
        if (!wanted.count(name)) stale.push_back(name);
      }
    };
    cb.restart = [&] { stale.clear(); };
    auto listed = client_.List(k8s::CollectionPath(kind, ns), query, 500, cb);
    if (!listed.ok()) {
      result.failed.push_back("listing the " + std::string(kind.plural) + " of " + ns + ": " +
                              listed.error().message);
      return;
    }
    for (const std::string& name : stale) {
      const std::string path = k8s::ObjectPath(kind, ns, name);
      const k8s::HttpResponse resp = client_.Delete(path);
      if (resp.ok() || resp.status == 404) {
        m_.Log("deleted " + std::string(kind.kind) + " " + ns + "/" + name +
               ": the Config no longer asks for it");
      } else {
        result.failed.push_back(k8s::Describe({"DELETE", path}, resp));
      }
    }
  }

  // Each Deployment's rollout: observed and every replica updated and available.
  void Observe(const op::Rendered& r, PassResult& result) {
    for (const op::Desired& d : r.objects) {
      if (d.kind != "Deployment") continue;
      const std::string path = k8s::ObjectPath(kDeployment, d.ns, d.name);
      const k8s::HttpResponse resp = client_.Get(path);
      const std::string shard = d.component == "scheduler" ? ShardOf(d) : "";
      if (!shard.empty()) result.shard_deployed.insert(shard);
      if (!resp.ok()) continue;  // not applied: already in `failed`
      auto parsed = doc::ParseJson(resp.body);
      if (!parsed.ok()) continue;
      const doc::Node dep = parsed->Roots()[0];
      const auto num = [](const doc::Node& n) {
        const std::string_view s = n.Scalar();
        return s.empty() ? int64_t{0} : std::strtoll(std::string(s).c_str(), nullptr, 10);
      };
      const int64_t want = dep["spec"]["replicas"].IsDefined() ? num(dep["spec"]["replicas"]) : 1;
      const int64_t available = num(dep["status"]["availableReplicas"]);
      const int64_t updated = num(dep["status"]["updatedReplicas"]);
      const bool observed =
          num(dep["status"]["observedGeneration"]) >= num(dep["metadata"]["generation"]);
      const std::string line =
          d.name + " (" + std::to_string(available) + "/" + std::to_string(want) + " available)";
      if (!observed || updated < want) result.progressing.push_back(d.name);
      if (available < want) {
        result.unavailable.push_back(line);
        if (!shard.empty()) result.shard_unavailable[shard].push_back(line);
      }
    }
  }

  std::vector<k8s::Condition> Conditions(const std::vector<std::string>& failed,
                                         const std::vector<std::string>& unavailable,
                                         bool progressing, const std::vector<std::string>& ignored,
                                         std::optional<int64_t> generation) const {
    k8s::Condition deployed{
        "Deployed",
        failed.empty() ? "True" : "False",
        failed.empty() ? "deployed" : "not_deployed",
        failed.empty() ? "every component's objects are applied" : "not applied: " + Joined(failed),
        "",
        generation};
    if (!ignored.empty())
      deployed.message += "; not applied (kai has no such setting): " + Joined(ignored);
    k8s::Condition available{"Available",
                             unavailable.empty() ? "True" : "False",
                             unavailable.empty() ? "available" : "not_ready",
                             unavailable.empty() ? "every Deployment has its replicas available"
                                                 : "waiting for " + Joined(unavailable),
                             "",
                             generation};
    k8s::Condition reconciling{"Reconciling",
                               progressing || !failed.empty() ? "True" : "False",
                               progressing || !failed.empty() ? "reconciling" : "reconciled",
                               progressing ? "a rollout is in progress"
                                           : (failed.empty() ? "nothing left to change"
                                                             : "some objects are not applied yet"),
                               "",
                               generation};
    return {deployed, available, reconciling};
  }

  void WriteConfigStatus(const std::string& config_json, const std::vector<std::string>& ignored,
                         const PassResult& result) {
    auto parsed = doc::ParseJson(config_json);
    if (!parsed.ok()) return;
    const doc::Node config = parsed->Roots()[0];
    std::optional<int64_t> generation;
    if (const std::string_view g = config["metadata"]["generation"].Scalar(); !g.empty()) {
      generation = std::strtoll(std::string(g).c_str(), nullptr, 10);
    }
    const std::string body =
        k8s::ConditionsPatch(config,
                             Conditions(result.failed, result.unavailable,
                                        !result.progressing.empty(), ignored, generation),
                             WallClockSeconds());
    if (body.empty()) return;
    const std::string path = k8s::ObjectPath(kConfig, "", o_.config_name, "status");
    const k8s::HttpResponse r = client_.Patch(path, body, k8s::PatchType::kMerge);
    if (!r.ok() && r.status != 409) LogOnce(k8s::Describe({"PATCH", path}, r));
  }

  void WriteShardStatus(const std::vector<op::Shard>& shards, const PassResult& result) {
    for (const op::Shard& s : shards) {
      if (!result.shard_deployed.count(s.name)) continue;  // the scheduler is turned off
      const std::string path = k8s::ObjectPath(res::kShard, "", s.name);
      const k8s::HttpResponse got = client_.Get(path);
      if (!got.ok()) continue;
      auto parsed = doc::ParseJson(got.body);
      if (!parsed.ok()) continue;
      const auto failed = result.shard_failed.find(s.name);
      const auto unavailable = result.shard_unavailable.find(s.name);
      const std::vector<std::string> none;
      auto conditions =
          Conditions(failed == result.shard_failed.end() ? none : failed->second,
                     unavailable == result.shard_unavailable.end() ? none : unavailable->second,
                     false, {}, std::nullopt);
      conditions.pop_back();  // Reconciling is the Config's
      const std::string body =
          k8s::ConditionsPatch(parsed->Roots()[0], conditions, WallClockSeconds());
      if (body.empty()) continue;
      const k8s::HttpResponse r = client_.Patch(path + "/status", body, k8s::PatchType::kMerge);
      if (!r.ok() && r.status != 409) LogOnce(k8s::Describe({"PATCH", path + "/status"}, r));
    }
  }

  const OperatorOptions& o_;
  runtime::Manager& m_;
  const k8s::ApiClient& client_;
  serve::MetricsRegistry& registry_ = m_.registry();
  serve::ReconcileMetrics passes_metric_{registry_, "operator", 1};
  std::atomic<int64_t> passes_{0}, applied_{0}, failures_{0}, certificates_{0};
  std::string last_log_;
  std::set<std::string> ignored_;
};

}  // namespace

int RunOperator(const OperatorOptions& options, std::ostream& err) {
  return runtime::RunComponent(
      runtime::ClientOptionsOf(options), runtime::ManagerOptionsOf("operator", options), err,
      [&](runtime::Manager& m) { return std::make_unique<Operator>(options, m); });
}

}  // namespace kai::operatord
