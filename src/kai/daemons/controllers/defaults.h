#pragma once
// `kai controllers --create-defaults`: the default queue tree and SchedulingShard of
// deploy/defaults/ (what `kai install --print` cannot hold next to the CRDs), created when absent
// and never changed once they exist (an operator's edits are theirs). A create the webhook refuses
// while `kai admission` still starts is tried again, with backoff, until it lands or the process
// stops.
#include <atomic>
#include <functional>
#include <string>

#include "kai/kube/client/api_client.h"

namespace kai::controllersd {

struct DefaultsOutcome {
  int created = 0, existed = 0;
};

// Creates the missing defaults; returns when every one exists or `stop` is set. `sleep` waits
// between attempts (injected for tests).
DefaultsOutcome EnsureDefaults(const k8s::ApiClient& client, const std::atomic<bool>& stop,
                               const std::function<void(const std::string&)>& log,
                               const std::function<void(std::chrono::milliseconds)>& sleep);

}  // namespace kai::controllersd
