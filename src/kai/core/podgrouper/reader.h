#pragma once
// What the pod grouper reads besides the pod: an injected reader, so that the grouping logic does
// no I/O. `kai podgrouper` implements it with the API server (and its watch caches); the tests and
// offline runs use MemoryReader over manifests.
//
// The grouping asks for: the pod's owners (by their owner references), the objects some groupers
// name (a CronJob's Job, a Knative Revision, a RayJob's RayCluster), existing PodGroups (legacy
// names and shapes), pods of a workload (an MPIJob's launcher, a Revision's pods), PriorityClasses
// (does one exist) and the ConfigMap of per-kind default priorities.
#include <atomic>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "kai/core/model/labels.h"
#include "kai/core/podgrouper/object.h"
#include "kai/core/util/result.h"

namespace kai::podgrouper {

struct ObjectKey {
  std::string api_version, kind;
  std::string ns;  // "" for a cluster-scoped kind
  std::string name;
  friend bool operator==(const ObjectKey&, const ObjectKey&) = default;
};

enum class FetchStatus {
  kFound,
  kNotFound,
  kForbidden,  // the grouper may not read that kind: KAI stops the owner walk there
  kFailed,     // any other failure (time-out, server error)
};

struct Fetched {
  FetchStatus status = FetchStatus::kNotFound;
  Object object;        // when found
  std::string message;  // why not, when not found
};

class ObjectReader {
 public:
  virtual ~ObjectReader() = default;
  virtual Fetched Get(const ObjectKey& key) const = 0;
  // The objects of one kind in `ns` whose labels hold every entry of `selector`, ordered by name.
  virtual Result<std::vector<Object>> List(std::string_view api_version, std::string_view kind,
                                           std::string_view ns, const Labels& selector) const = 0;
};

// A reader over objects held in memory (decoded manifests). Kinds may be marked forbidden, and
// single objects as failing, to test the grouper's handling of those answers. Reads may run
// concurrently; Add, Forbid and Fail may not run alongside them.
class MemoryReader : public ObjectReader {
 public:
  MemoryReader() = default;
  explicit MemoryReader(std::vector<Object> objects);
  void Add(Object o);
  void Forbid(std::string_view api_version, std::string_view kind);
  void Fail(const ObjectKey& key, std::string message);

  Fetched Get(const ObjectKey& key) const override;
  Result<std::vector<Object>> List(std::string_view api_version, std::string_view kind,
                                   std::string_view ns, const Labels& selector) const override;

  // The number of Get and List calls answered (each call costs a round trip in production).
  size_t calls() const { return calls_; }

 private:
  // (group, kind, namespace, name): a Get names a version, but any served version finds the
  // object, as on the API server.
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  static Key KeyOf(std::string_view api_version, std::string_view kind, std::string_view ns,
                   std::string_view name);
  std::map<Key, Object> objects_;
  std::set<std::pair<std::string, std::string>> forbidden_;  // (group, kind)
  std::map<Key, std::string> failing_;
  mutable std::atomic<size_t> calls_ = 0;
};

}  // namespace kai::podgrouper
