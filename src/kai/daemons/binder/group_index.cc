#include "kai/daemons/binder/group_index.h"

#include <algorithm>

namespace kai::binder {

void GroupIndex::Upsert(const std::string& key, IndexedPod pod) {
  Erase(key);
  Count(pod, +1);
  pods_.emplace(key, std::move(pod));
}

void GroupIndex::Erase(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  Count(it->second, -1);
  pods_.erase(it);
}

void GroupIndex::Count(const IndexedPod& pod, int sign) {
  for (const std::string& g : pod.groups) {
    Counts& c = groups_[g];
    c.pods += sign;
    if (pod.reservation) c.reservations += sign;
    if (pod.holds_gpu) c.holders += sign;
    if (pod.reservation && pod.has_gpu_id) c.ready += sign;
    if (c.pods == 0) groups_.erase(g);
    if (pod.node.empty()) continue;
    auto& on_node = by_node_[pod.node];
    if ((on_node[g] += sign) == 0) on_node.erase(g);
    if (on_node.empty()) by_node_.erase(pod.node);
  }
}

const IndexedPod* GroupIndex::Find(const std::string& key) const {
  auto it = pods_.find(key);
  return it == pods_.end() ? nullptr : &it->second;
}

std::vector<std::string> GroupIndex::GroupsOnNode(const std::string& node) const {
  std::vector<std::string> out;
  if (auto it = by_node_.find(node); it != by_node_.end()) {
    for (const auto& [g, n] : it->second) out.push_back(g);
  }
  std::sort(out.begin(), out.end());
  return out;
}

int GroupIndex::Reservations(const std::string& group) const {
  auto it = groups_.find(group);
  return it == groups_.end() ? 0 : it->second.reservations;
}

int GroupIndex::Holders(const std::string& group) const {
  auto it = groups_.find(group);
  return it == groups_.end() ? 0 : it->second.holders;
}

int GroupIndex::Ready(const std::string& group) const {
  auto it = groups_.find(group);
  return it == groups_.end() ? 0 : it->second.ready;
}

bool ParkedRequests::Park(const std::string& key, const std::vector<std::string>& groups,
                          const GroupIndex& index) {
  const bool arrived = std::any_of(groups.begin(), groups.end(),
                                   [&](const std::string& g) { return index.Ready(g) > 0; });
  if (arrived) return false;
  Remove(key);
  for (const std::string& g : groups) by_group_[g].push_back(key);
  groups_of_[key] = groups;
  return true;
}

std::vector<std::string> ParkedRequests::Take(const std::vector<std::string>& groups) {
  std::vector<std::string> keys;
  for (const std::string& g : groups) {
    if (auto it = by_group_.find(g); it != by_group_.end()) {
      keys.insert(keys.end(), it->second.begin(), it->second.end());
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (const std::string& k : keys) Remove(k);
  return keys;
}

void ParkedRequests::Remove(const std::string& key) {
  auto it = groups_of_.find(key);
  if (it == groups_of_.end()) return;
  for (const std::string& g : it->second) {
    auto bg = by_group_.find(g);
    if (bg == by_group_.end()) continue;
    std::erase(bg->second, key);
    if (bg->second.empty()) by_group_.erase(bg);
  }
  groups_of_.erase(it);
}

}  // namespace kai::binder
