#include "kai/model/labels.h"

#include <stdexcept>

namespace kai {

const std::string& Labels::at(std::string_view key) const {
  auto it = find(key);
  if (it == end()) throw std::out_of_range("Labels::at: no key " + std::string(key));
  return it->second;
}

}  // namespace kai
