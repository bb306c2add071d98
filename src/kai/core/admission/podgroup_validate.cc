// The validating PodGroup webhook (KAI's pkg/apis/scheduling/v2alpha2/podgroup_webhook.go): the
// SubGroup tree and its minimums, on kai's decoded PodGroup (k8s/decode_podgroup.cc), plus kai's
// rule for running semi-preemptible PodGroups (k8s/decode.h ValidatePodGroupUpdate).
#include <map>
#include <set>

#include "kai/core/admission/admission.h"
#include "kai/core/admission/decode_request.h"
#include "kai/core/k8s/decode.h"

namespace kai::admission {
namespace {

constexpr std::string_view kPodGroupApiVersion = "scheduling.run.ai/v2alpha2";
// What the decoder requires and KAI's PodGroup does not: a queue (the scheduler reports a
// PodGroup without one) and, for generateName, a name (the API server gives it after admission).
const std::vector<std::string_view> kLenient = {"spec.queue: missing", "metadata.name: missing"};

// What the tree check found: errors deny; warnings are what KAI lets through (a minSubGroup above
// the number of children always, a mid-level minMember on updates, for objects made before
// the rule).
struct Findings {
  std::vector<std::string> errors, warnings;
};

struct Tree {
  std::map<std::string, size_t> index;                  // SubGroup name -> position
  std::map<std::string, std::vector<size_t>> children;  // "" = the PodGroup itself
};

std::string SubGroupField(size_t i) { return "spec.subGroups[" + std::to_string(i) + "]"; }

// Unique names, known parents, no cycle; the first structural error only (the rest may follow
// from it), as KAI reports.
std::optional<std::string> StructureError(const PodGroupObject& pg, Tree& tree) {
  for (size_t i = 0; i < pg.sub_groups.size(); ++i) {
    if (!tree.index.emplace(pg.sub_groups[i].name, i).second) {
      return SubGroupField(i) + ".name: duplicate SubGroup name \"" + pg.sub_groups[i].name + "\"";
    }
  }
  for (size_t i = 0; i < pg.sub_groups.size(); ++i) {
    const SubGroupSpec& sg = pg.sub_groups[i];
    if (!sg.parent.empty() && !tree.index.count(sg.parent)) {
      return SubGroupField(i) + ".parent: SubGroup \"" + sg.parent + "\" does not exist";
    }
    tree.children[sg.parent].push_back(i);
  }
  for (size_t i = 0; i < pg.sub_groups.size(); ++i) {
    std::string up = pg.sub_groups[i].parent;
    for (size_t steps = 0; !up.empty(); ++steps) {
      if (steps >= pg.sub_groups.size()) {
        return SubGroupField(i) + ".parent: the SubGroups form a cycle through \"" +
               pg.sub_groups[i].name + "\"";
      }
      up = pg.sub_groups[tree.index.at(up)].parent;
    }
  }
  return std::nullopt;
}

std::optional<std::string> BothMinimums(std::string_view field, const std::optional<int>& member,
                                        const std::optional<int>& sub_group) {
  if (!member || !sub_group) return std::nullopt;
  return std::string(field) +
         ": minMember and minSubGroup are mutually exclusive (minMember counts pods, minSubGroup "
         "child SubGroups)";
}

void CheckMinimums(const SubGroupSpec& sg, size_t i, const Tree& tree, bool update, Findings& out) {
  const std::string field = SubGroupField(i);
  auto it = tree.children.find(sg.name);
  const size_t n = it == tree.children.end() ? 0 : it->second.size();
  if (n == 0) {
    if (sg.min_sub_group) {
      out.errors.push_back(field + ".minSubGroup: SubGroup \"" + sg.name +
                           "\" has no child SubGroups (a leaf states minMember)");
    }
    if (!sg.min_member) {
      out.errors.push_back(field + ".minMember: required on the leaf SubGroup \"" + sg.name + "\"");
    }
    return;
  }
  if (sg.min_member) {
    (update ? out.warnings : out.errors)
        .push_back(field + ".minMember: SubGroup \"" + sg.name +
                   "\" has child SubGroups; it states minSubGroup instead");
  }
  if (sg.min_sub_group && static_cast<size_t>(*sg.min_sub_group) > n) {
    out.warnings.push_back(field + ".minSubGroup: " + std::to_string(*sg.min_sub_group) +
                           " exceeds the number of child SubGroups of \"" + sg.name + "\" (" +
                           std::to_string(n) + ")");
  }
}

Findings CheckTree(const PodGroupObject& pg, bool update) {
  Findings out;
  if (auto e = BothMinimums("spec", pg.min_member, pg.min_sub_group)) {
    out.errors.push_back(*e);
    return out;
  }
  Tree tree;
  if (auto e = StructureError(pg, tree)) {
    out.errors.push_back(*e);
    return out;
  }
  for (size_t i = 0; i < pg.sub_groups.size(); ++i) {
    const SubGroupSpec& sg = pg.sub_groups[i];
    if (auto e = BothMinimums(SubGroupField(i), sg.min_member, sg.min_sub_group)) {
      out.errors.push_back(*e);
      return out;
    }
    CheckMinimums(sg, i, tree, update, out);
  }
  const size_t roots = tree.children.count("") ? tree.children.at("").size() : 0;
  if (pg.min_sub_group && static_cast<size_t>(*pg.min_sub_group) > roots) {
    out.warnings.push_back("spec.minSubGroup: " + std::to_string(*pg.min_sub_group) +
                           " exceeds the number of top-level SubGroups (" + std::to_string(roots) +
                           ")");
  }
  return out;
}

std::string Joined(const std::string& ref, const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + ref + ": " + p;
  return out;
}

// ValidatePodGroupUpdate's messages name the PodGroup as the decoder's source does.
std::string WithoutSource(std::string message) {
  const std::string head = "admission: ";
  if (message.rfind(head, 0) == 0) message.erase(0, head.size());
  return message;
}

std::optional<std::string> RaisedMinimums(const Request& request, const PodGroupObject& after,
                                          const ClusterLookup& lookup) {
  auto before = DecodeRequestObject(request, request.old_object, kPodGroupApiVersion, "PodGroup",
                                    true, kLenient);
  if (!before.ok() || before->pod_groups.empty()) return std::nullopt;  // the old object stood
  // Whether the group runs (a list of its namespace's pods) matters only for an update that
  // would be refused if it did.
  if (ValidatePodGroupUpdate(before->pod_groups.front(), after, /*running=*/true).ok()) {
    return std::nullopt;
  }
  std::string ns(request.object["metadata"]["namespace"].Scalar());
  if (ns.empty()) ns = request.ns;
  auto running = lookup.PodGroupRunning(ns, after.meta.name);
  const std::string ref = ObjectRef(request, request.object, "PodGroup", true);
  if (!running.ok()) return ref + ": cannot read its pods: " + running.error().message;
  std::string out;
  for (const std::string& e :
       ProblemsOf(ValidatePodGroupUpdate(before->pod_groups.front(), after, running.value()))) {
    out += (out.empty() ? "" : "; ") + WithoutSource(e);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace

Verdict ValidatePodGroup(const Request& request, const ClusterLookup& lookup) {
  if (request.operation == Operation::kDelete) return Verdict::Allow();
  auto decoded =
      DecodeRequestObject(request, request.object, kPodGroupApiVersion, "PodGroup", true, kLenient);
  if (!decoded.ok()) return Verdict::Deny(decoded.error().message);
  const PodGroupObject& pg = decoded->pod_groups.front();
  const std::string ref = ObjectRef(request, request.object, "PodGroup", true);
  const bool update = request.operation == Operation::kUpdate;
  Findings f = CheckTree(pg, update);
  if (!f.errors.empty()) return Verdict::Deny(Joined(ref, f.errors));
  if (update) {
    if (auto e = RaisedMinimums(request, pg, lookup)) return Verdict::Deny(*e, "minimum_raised");
  }
  Verdict v;
  for (const std::string& w : f.warnings) v.warnings.push_back(ref + ": " + w);
  return v;
}

}  // namespace kai::admission
