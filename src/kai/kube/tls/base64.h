#pragma once
// Standard base64 decoding (RFC 4648, line breaks and spaces ignored), through OpenSSL: the
// *-data fields of a kubeconfig, the data of a Secret.
#include <optional>
#include <string>
#include <string_view>

namespace kai::tls {

// nullopt when `in` is not base64.
std::optional<std::string> Base64Decode(std::string_view in);

}  // namespace kai::tls
