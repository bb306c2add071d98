#pragma once
// The part of CEL device selectors (DeviceClass spec.selectors, a request's selectors) that kai
// evaluates: conjunctions (&&) of
//   device.driver == "name"            (also !=)
//   device.attributes["domain"].name <op> literal   (op: == != < <= > >=; string, int or bool)
//   device.capacity["domain"].name.compareTo(quantity("80Gi")) <op> 0
//   true
// String literals in double or single quotes (NVIDIA's DeviceClasses write 'compute-domain...').
// Anything else is reported as unsupported (the claim's pod gets that as its reason), never
// taken as a match.
#include <string>
#include <string_view>

#include "kai/core/model/dra.h"

namespace kai {

struct CelOutcome {
  bool matches = false;
  std::string unsupported;  // non-empty: the expression (or the part) kai cannot evaluate
};

CelOutcome EvalDeviceSelector(std::string_view expression, std::string_view driver,
                              const SliceDevice& device);

}  // namespace kai
