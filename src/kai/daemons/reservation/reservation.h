#pragma once
// `kai resource-reservation`: the program of the binder's GPU reservation pods (namespace
// kai-resource-reservation, one nvidia.com/gpu each). The pod finds which GPU the device plugin
// gave it and writes that GPU's UUID on itself (annotation run.ai/reserve_for_gpu_index), where
// the binder reads it to tell fractional pods which GPU they share; then it holds the GPU until
// it is terminated. A restarted pod that already carries the annotation does not look again.
#include <chrono>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

#include "kai/core/util/result.h"
#include "kai/kube/client/api_client.h"
#include "kai/kube/client/kubeconfig.h"

namespace kai::reservation {

// The pod this program runs in, from the downward API (POD_NAMESPACE, POD_NAME).
struct PodRef {
  std::string ns, name;
};
Result<PodRef> CurrentPod(const k8s::EnvLookup& env);

// Where the reserved GPU's UUID comes from: NVML in the program, a stub in tests. Called only
// when the pod carries no annotation yet.
using UuidSource = std::function<Result<std::string>()>;

struct ReserveOptions {
  // Reads and patches that still fail after the client's own retries (429, 5xx) are tried again
  // up to this many times in all, `retry_delay` apart (doubling).
  int attempts = 5;
  std::chrono::milliseconds retry_delay{1000};
  std::function<void(std::chrono::milliseconds)> sleep;  // default: this_thread::sleep_for
  std::function<bool()> stopped;                         // a signal came: give up retrying
  std::function<void(const std::string&)> log;           // progress lines; default: none
};

enum class Reserved { kPatched, kAlreadyAnnotated };

// Reads the pod; when it has no run.ai/reserve_for_gpu_index annotation, asks `uuid` and
// merge-patches the annotation onto it.
Result<Reserved> ReserveGpu(const k8s::ApiClient& client, const PodRef& pod, const UuidSource& uuid,
                            const ReserveOptions& options);

// {"metadata":{"annotations":{"run.ai/reserve_for_gpu_index":UUID}}}
std::string ReservationPatch(std::string_view uuid);

struct ProgramOptions {
  std::string kubeconfig, context;
  double qps = 0;  // --qps and --burst: the API client's rate limit (qps 0: none)
  int burst = 300;
  bool print = false;  // only print the devices NVML sees; no API server
};

// The whole program: 0 after SIGTERM/SIGINT (RequestStop), 1 with a `kai: ...` line on `err`
// when the reservation fails. --print: one DeviceLine per device on `out`.
int RunResourceReservation(const ProgramOptions& options, std::ostream& out, std::ostream& err);

// Async-signal-safe: ends RunResourceReservation's wait.
void RequestStop();

}  // namespace kai::reservation
