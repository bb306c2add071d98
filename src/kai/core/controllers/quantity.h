#pragma once
// Resource quantities as KAI's controllers hold and write them: apimachinery's resource.Quantity,
// an exact value (rounded up to nano units when parsed, as apimachinery does) plus the suffix
// family it serialises with. The statuses KAI writes are Go ResourceLists: each value's text is
// the Quantity's canonical form ("500m", "2k", "1Gi"), and a sum keeps the format of its left
// operand unless that is zero. Matching both lets a status kai writes equal KAI's byte for byte.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "kai/core/util/result.h"

namespace kai::controllers {

enum class QuantityFormat : uint8_t { kDecimalSI, kBinarySI, kDecimalExponent };

struct KubeQuantity {
  __int128 nano = 0;  // the value in units of 10^-9
  QuantityFormat format = QuantityFormat::kDecimalSI;
  friend bool operator==(const KubeQuantity&, const KubeQuantity&) = default;
};

// "1Gi", "500m", "0.5", "1e3": the grammar of apimachinery (kai/core/resource/quantity.h); the
// error quotes the text.
Result<KubeQuantity> ParseKubeQuantity(std::string_view text);
// apimachinery's canonical text: the largest suffix that keeps the number an integer (decimal
// suffixes in steps of 10^3, binary ones in steps of 2^10; a binary quantity under 1024 or with a
// fractional part is written with a decimal suffix).
std::string CanonicalText(const KubeQuantity& q);
// q += y, with Quantity.Add's format rule: q keeps its format unless q is zero.
void AddTo(KubeQuantity& q, const KubeQuantity& y);
// The value rounded half away from zero to 4 decimals, as KAI's queue metrics report it.
double RoundedTo4Decimals(const KubeQuantity& q);

// A ResourceList: resource name -> quantity, in name order (Go's JSON writes map keys sorted).
using ResourceList = std::map<std::string, KubeQuantity, std::less<>>;
// The sum KAI's SumResources computes: a copy of `left` with each of `right` added to it (a
// name only in `right` is copied). Formats follow AddTo, so the argument order matters.
ResourceList Sum(const ResourceList& left, const ResourceList& right);
// name -> canonical text, the form statuses are compared and written in.
std::map<std::string, std::string, std::less<>> Texts(const ResourceList& list);
// Parses a ResourceList as a status holds it; `what` names the field in errors.
Result<ResourceList> ParseList(const std::map<std::string, std::string, std::less<>>& texts,
                               const std::string& what);

}  // namespace kai::controllers
