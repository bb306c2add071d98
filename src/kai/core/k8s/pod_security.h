#pragma once
// The security contexts of the pods kai creates itself (reservation pods, the scale adjuster's
// pause pods): what the `restricted` Pod Security level asks for, so that kai's namespaces can
// enforce it. JSON objects, written into a pod as they are.
#include <string_view>

namespace kai::k8s {

// Non-root user and group 65532 (kai's image user; the pause image runs as anyone), the runtime's
// default seccomp profile.
inline constexpr std::string_view kRestrictedPodSecurityContext =
    R"({"runAsNonRoot":true,"runAsUser":65532,"runAsGroup":65532,)"
    R"("seccompProfile":{"type":"RuntimeDefault"}})";
// No privilege escalation, every capability dropped.
inline constexpr std::string_view kRestrictedContainerSecurityContext =
    R"({"allowPrivilegeEscalation":false,"runAsNonRoot":true,"runAsUser":65532,)"
    R"("capabilities":{"drop":["ALL"]},"seccompProfile":{"type":"RuntimeDefault"}})";

}  // namespace kai::k8s
