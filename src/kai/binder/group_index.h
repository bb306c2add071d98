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

}  // namespace kai::binder
