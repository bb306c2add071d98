#pragma once
// Exact Kubernetes resource-quantity parsing ("500m", "1Gi", "1e3", "0.5", ...) with no floating
// point, following the grammar of k8s.io/apimachinery/pkg/api/resource:
//   <quantity>     ::= <signedNumber><suffix>
//   <signedNumber> ::= [+-]<number>,  <number> ::= digits | digits. | .digits | digits.digits
//   <suffix>       ::= Ki Mi Gi Ti Pi Ei | n u m "" k M G T P E | (e|E)[+-]digits
#include <cstdint>
#include <string>
#include <string_view>

#include "kai/core/util/result.h"

namespace kai {

// Smallest and largest accepted scale_exp10 for ParseQuantity.
inline constexpr int kMinQuantityScale = -18;
inline constexpr int kMaxQuantityScale = 18;

// Parses `text` exactly and returns ceil(value * 10^scale_exp10) as int64, or an error with a
// human-readable message (e.g. "invalid quantity \"1.2.3\": unexpected character '.'").
// scale_exp10: 0 => base units (bytes, cores, devices), 3 => milli units; within [-18, 18].
// Rounding is toward +infinity for every sign: "0.0001" at scale 3 is 1, "-0.5" at scale 0 is 0,
// "-1.5" at scale 0 is -1.
// Errors: empty text, bad syntax (spaces, "1.2.3", "--1", "1e", a suffix without a number),
// unknown suffix ("1Gb"), a scale outside [-18, 18], and a result outside int64 ("out of range").
// Allocates only when it returns an error.
Result<int64_t> ParseQuantity(std::string_view text, int scale_exp10);

// Formats milli-units as a decimal string without trailing zeros:
// 1500 -> "1.5", 2000 -> "2", -1000 -> "-1", 1 -> "0.001", -1 -> "-0.001", 0 -> "0".
// The output always parses back to `milli` with ParseQuantity(text, 3).
std::string FormatMilli(int64_t milli);

}  // namespace kai
