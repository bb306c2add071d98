#pragma once
// The pod grouper's ObjectReader on the API server: any kind, found through API discovery
// (group/version -> resource name, namespaced or not), read from the API server's watch cache
// (resourceVersion=0). A kind no API serves (a workload CRD not installed) reads as not found,
// naming it; a 403 as forbidden (the owner walk stops there, as in KAI).
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "kai/core/podgrouper/reader.h"
#include "kai/kube/client/api_client.h"

namespace kai::podgrouperd {

// One object of an API answer (JSON), its kind defaulted to the one asked for; `what` names the
// read in errors.
Result<podgrouper::Object> ParseObject(const std::string& body, const std::string& what,
                                       std::string_view api_version = "",
                                       std::string_view kind = "");

class ApiReader : public podgrouper::ObjectReader {
 public:
  explicit ApiReader(const k8s::ApiClient& client) : client_(client) {}

  podgrouper::Fetched Get(const podgrouper::ObjectKey& key) const override;
  Result<std::vector<podgrouper::Object>> List(std::string_view api_version, std::string_view kind,
                                               std::string_view ns,
                                               const Labels& selector) const override;

  // "/api/v1" or "/apis/<group>/<version>", then "/namespaces/<ns>" when namespaced, then the
  // resource (and "/<name>"). Errors: the kind is not served.
  Result<std::string> PathOf(std::string_view api_version, std::string_view kind,
                             std::string_view ns, std::string_view name) const;

 private:
  struct Resource {
    std::string plural;
    bool namespaced = true;
  };
  struct GroupVersion {
    std::map<std::string, Resource, std::less<>> kinds;  // kind -> resource
    bool served = false;
    std::chrono::steady_clock::time_point read_at;
  };
  // The kinds one group/version serves, read once (again after a minute when it was not
  // served: a CRD installed later is found).
  Result<const GroupVersion*> Discover(std::string_view api_version) const;

  const k8s::ApiClient& client_;
  mutable std::mutex mu_;
  mutable std::map<std::string, GroupVersion, std::less<>> discovered_;
};

}  // namespace kai::podgrouperd
