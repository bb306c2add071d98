#pragma once
// Internal to admission/: a request's Queue or PodGroup through kai's own decoder (k8s/decode.h),
// so that admission and the scheduler read every field alike.
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/admission/admission.h"

namespace kai::admission {

// "Kind namespace/name" (or "Kind name") of the request's object; the request's namespace and
// name stand in for what the object leaves out.
std::string ObjectRef(const Request& request, const doc::Node& object, std::string_view kind,
                      bool namespaced);

// Decodes `object` (kind at api_version) into a ClusterState of that one object. The error
// lists the decoder's field errors, each as "<ref>: <field>: <rule>", joined by "; ", less those
// whose "<field>: <rule>" is in `ignored` (what the scheduler needs but KAI's admission allows).
Result<ClusterState> DecodeRequestObject(const Request& request, const doc::Node& object,
                                         std::string_view api_version, std::string_view kind,
                                         bool namespaced,
                                         const std::vector<std::string_view>& ignored = {});

}  // namespace kai::admission
