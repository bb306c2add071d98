#pragma once

#include <string>
#include <unordered_map>
#include <vector>

namespace kai::binder {

// What the binder's own watch knows of the pods that take part in GPU sharing: reservation pods
// and fraction pods labelled with their GPU group. It lets a reservation sync skip the API
// server when the answer is plain (the group has its reservation pod and a pod using it), which
// is the common case on every fractional bind.
class GroupView {
 public:
  virtual ~GroupView() = default;
  // The groups that have a reservation pod or a labelled pod on `node`, sorted.
  virtual std::vector<std::string> GroupsOnNode(const std::string& node) const = 0;
  // A reservation pod of the group is known.
  virtual bool KnownReserved(const std::string& group) const = 0;
  // A reservation pod of the group is known, and a bound, live pod labelled with it or an
  // unfinished BindRequest naming it: nothing to clean up.
  virtual bool KnownInUse(const std::string& group) const = 0;
  // A BindRequest not yet finished names the group (it needs its reservation pod though no pod
  // is bound to it yet).
  virtual bool Active(const std::string& group) const = 0;
};

// One watched pod as the index counts it.
struct IndexedPod {
  std::string node;
  std::vector<std::string> groups;
  bool reservation = false;  // in the reservation namespace
  bool holds_gpu = false;    // a fraction pod bound to a node, Pending or Running, not deleted
  bool has_gpu_id = false;   // a reservation pod whose GPU id annotation is written
};

// Per group: how many reservation pods and GPU-holding pods are known; per node: the groups of
// its pods. Updated per watch event; not thread-safe (the owner locks).
class GroupIndex {
 public:
  void Upsert(const std::string& key, IndexedPod pod);
  void Erase(const std::string& key);
  const IndexedPod* Find(const std::string& key) const;
  std::vector<std::string> GroupsOnNode(const std::string& node) const;
  // Reservation pods of the group; bound, live fraction pods labelled with it.
  int Reservations(const std::string& group) const;
  int Holders(const std::string& group) const;
  // Reservation pods of the group that carry their GPU id.
  int Ready(const std::string& group) const;
  size_t size() const { return pods_.size(); }

 private:
  struct Counts {
    int reservations = 0, holders = 0, ready = 0, pods = 0;
  };
  void Count(const IndexedPod& pod, int sign);

  std::unordered_map<std::string, IndexedPod> pods_;
  std::unordered_map<std::string, Counts> groups_;
  std::unordered_map<std::string, std::unordered_map<std::string, int>> by_node_;
};

// Requests whose bind waits for reservation pods' GPU ids, by GPU group: a watch event of a
// group's reservation pod takes its requests out to be tried again. Not thread-safe (the owner
// locks, with the same lock as the index, so that no wake-up is lost between them).
class ParkedRequests {
 public:
  // Parks `key` on `groups`; false (not parked: try again now) when the index shows one of
  // them with its GPU id already, since no event will follow.
  bool Park(const std::string& key, const std::vector<std::string>& groups,
            const GroupIndex& index);
  // Every request parked on one of `groups`, each once, no longer parked on any group.
  std::vector<std::string> Take(const std::vector<std::string>& groups);
  size_t groups() const { return by_group_.size(); }
  size_t requests() const { return groups_of_.size(); }

 private:
  void Remove(const std::string& key);

  std::unordered_map<std::string, std::vector<std::string>> by_group_;   // group -> keys
  std::unordered_map<std::string, std::vector<std::string>> groups_of_;  // key -> groups
};

}  // namespace kai::binder
