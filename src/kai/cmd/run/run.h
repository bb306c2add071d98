#pragma once
// `kai run`: every component in one process, for small clusters and for trying kai. The
// components share one API client (one connection pool, one set of credentials) and run as
// they run alone, each in its own thread; a component that exits stops the others, and the
// process exits with the first failure's status. Each component can still run alone
// (`kai scheduler`, `kai binder`, ...).
#include <atomic>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include "kai/kube/client/api_client.h"

namespace kai::run {

// One component: its name (as `--components` names it) and how to run it until `stop` is set.
struct Component {
  std::string name;
  std::function<int(const k8s::ApiClient&, std::ostream& log, const std::atomic<bool>& stop)> run;
};

// Runs the components on one client until a process stop (runtime::RequestProcessStop, the
// SIGTERM handler's) or one of them exits; returns 0 when all stopped cleanly, else the first
// non-zero exit status. Each component's log lines go to
// `err` whole (lines of different components never interleave); `err_mu`, when given, is the
// lock that others writing to `err` hold too.
int RunComponents(const std::vector<Component>& components, const k8s::ApiClient& client,
                  std::ostream& err, std::mutex* err_mu = nullptr);

// "HOST:PORT" with PORT + offset ("" stays ""): the per-component metrics and health ports
// of `kai run --metrics-bind-address`. Empty on a malformed address.
std::string OffsetAddress(const std::string& address, int offset);

}  // namespace kai::run
