#pragma once
// The part of jq that Karta's paths use (a Karta names the fields of a workload and of its pods
// with jq expressions): paths of keys and indexes, iteration, optional steps and pipes, as in
//   .spec.worker.replicas   .metadata.labels["e2e.example.com/role"]   .spec.groups[].size
//   .spec.groups[0]?        ."key-with-dash"                             .spec.roles[] | .replicas
// Anything else (operators, functions, literals, comparisons) is refused when parsed, naming the
// expression, so a Karta kai cannot evaluate is found when it is read, never at grouping time.
//
// Evaluation follows jq: a missing key or index gives null; a key of null gives null; indexing a
// string or number, or iterating over null or a scalar, is an error unless the step ends in `?`
// (then it gives nothing).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/k8s/doc.h"
#include "kai/core/util/result.h"

namespace kai::podgrouper {

class JqPath {
 public:
  struct Step {
    enum class Kind { kKey, kIndex, kIterate };
    Kind kind = Kind::kKey;
    std::string key;
    long long index = 0;
    bool optional = false;  // `?`: errors give no result
  };

  // Errors name the expression and what in it kai does not evaluate.
  static Result<JqPath> Parse(std::string_view expression);

  // The results, in order; a null (or missing) result is an undefined Node.
  Result<std::vector<doc::Node>> Evaluate(doc::Node input) const;

  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::vector<Step> steps_;
};

// A result as jq's tostring would print a scalar: a string as is, a number or boolean as written.
// nullopt for null, a map or a list.
std::optional<std::string> JqScalarText(doc::Node n);

}  // namespace kai::podgrouper
