#include "kai/daemons/controllers/defaults.h"

#include <algorithm>
#include <thread>

#include "kai/core/install/install.h"
#include "kai/kube/client/api_client.h"

namespace kai::controllersd {
namespace {

namespace res = k8s::resources;

const k8s::ResourceType* TypeOf(const install::Manifest& m) {
  if (m.kind == "Queue") return &res::kQueue;
  if (m.kind == "SchedulingShard") return &res::kShard;
  return nullptr;
}

enum class Step { kCreated, kExisted, kRetry };

Step TryCreate(const k8s::ApiClient& client, const install::Manifest& m,
               const k8s::ResourceType& type, std::string& why) {
  const std::string path = k8s::ObjectPath(type, m.ns, m.name);
  const k8s::HttpResponse got = client.Get(path);
  if (got.ok()) return Step::kExisted;
  if (got.status != 404) {
    why = k8s::Describe({"GET", path}, got);
    return Step::kRetry;
  }
  k8s::HttpRequest req;
  req.method = "POST";
  req.path = k8s::CollectionPath(type, m.ns);
  req.body = m.text;
  req.content_type = "application/yaml";
  const k8s::HttpResponse made = client.Call(req);
  if (made.ok()) return Step::kCreated;
  if (made.status == 409) return Step::kExisted;  // created meanwhile
  why = k8s::Describe({"POST", req.path}, made);
  return Step::kRetry;
}

}  // namespace

DefaultsOutcome EnsureDefaults(const k8s::ApiClient& client, const std::atomic<bool>& stop,
                               const std::function<void(const std::string&)>& log,
                               const std::function<void(std::chrono::milliseconds)>& sleep) {
  DefaultsOutcome out;
  auto objects = install::DefaultObjects(install::EmbeddedDeployFiles());
  if (!objects.ok()) {
    log("--create-defaults: " + objects.error().message);
    return out;
  }
  for (const install::Manifest& m : *objects) {
    const k8s::ResourceType* type = TypeOf(m);
    if (!type) continue;
    std::chrono::milliseconds delay(500);
    for (int attempt = 1; !stop; ++attempt) {
      std::string why;
      const Step s = TryCreate(client, m, *type, why);
      if (s == Step::kCreated) {
        log("created the default " + m.kind + " " + m.name);
        ++out.created;
        break;
      }
      if (s == Step::kExisted) {
        ++out.existed;
        break;
      }
      if (attempt == 1 || attempt % 10 == 0) {
        log("the default " + m.kind + " " + m.name + " (attempt " + std::to_string(attempt) +
            "): " + why + "; trying again");
      }
      sleep(delay);
      delay = std::min(delay * 2, std::chrono::milliseconds(30000));
    }
  }
  return out;
}

}  // namespace kai::controllersd
