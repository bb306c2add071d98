#include "kai/daemons/reservation/reservation.h"

#include <algorithm>
#include <atomic>
#include <ostream>
#include <thread>

#include "kai/core/k8s/doc.h"
#include "kai/core/k8s/json_body.h"
#include "kai/core/k8s/keys.h"
#include "kai/daemons/reservation/nvml.h"

namespace kai::reservation {
namespace {

using std::chrono::milliseconds;
namespace res = k8s::resources;

std::atomic<bool> g_stop{false};

constexpr milliseconds kStopPoll{100};

std::string Key(const PodRef& pod) { return pod.ns + "/" + pod.name; }

void Log(const ReserveOptions& o, const std::string& line) {
  if (o.log) o.log(line);
}

bool Stopped(const ReserveOptions& o) { return o.stopped && o.stopped(); }

void Sleep(const ReserveOptions& o, milliseconds d) {
  if (o.sleep) {
    o.sleep(d);
  } else {
    std::this_thread::sleep_for(d);
  }
}

// Tries `attempt` up to o.attempts times, the delay doubling between tries, until it succeeds or
// a signal came. The last failure is returned.
template <class T, class F>
Result<T> WithRetries(const ReserveOptions& o, const std::string& what, F&& attempt) {
  const int attempts = std::max(1, o.attempts);
  milliseconds delay = o.retry_delay;
  for (int i = 1;; ++i) {
    Result<T> r = attempt();
    if (r || i >= attempts || Stopped(o)) return r;
    Log(o, what + " failed (try " + std::to_string(i) + " of " + std::to_string(attempts) +
               "), again in " + std::to_string(delay.count()) + " ms: " + r.error().message);
    Sleep(o, delay);
    delay *= 2;
  }
}

// Whether the pod (its JSON as the API server answers it) carries the reservation annotation.
Result<bool> HasReservation(std::string_view body) {
  auto d = doc::ParseJson(body);
  if (!d) return Error{"the answer is not JSON: " + d.error().message};
  const std::vector<doc::Node> roots = d->Roots();
  if (roots.empty() || !roots[0].IsMap()) return Error{"the answer is not a JSON object"};
  return roots[0]["metadata"]["annotations"][keys::kReservedGpuAnnotation].IsDefined();
}

Result<bool> ReadReserved(const k8s::ApiClient& client, const std::string& path) {
  const k8s::HttpResponse r = client.Get(path);
  if (!r.ok()) return Error{k8s::Describe({"GET", path}, r)};
  auto has = HasReservation(r.body);
  if (!has) return Error{"GET " + path + ": " + has.error().message};
  return has;
}

Result<bool> PatchReserved(const k8s::ApiClient& client, const std::string& path,
                           const std::string& uuid) {
  const k8s::HttpResponse r = client.Patch(path, ReservationPatch(uuid), k8s::PatchType::kMerge);
  if (!r.ok()) return Error{k8s::Describe({"PATCH", path}, r)};
  return true;
}

// Sleeps `d` in short slices, returning early once a signal came.
void SleepUnlessStopped(milliseconds d) {
  while (d > milliseconds(0) && !g_stop) {
    const milliseconds slice = std::min(d, kStopPoll);
    std::this_thread::sleep_for(slice);
    d -= slice;
  }
}

void WaitForStop() {
  while (!g_stop) std::this_thread::sleep_for(kStopPoll);
}

Result<std::string> NvmlGpuUuid() {
  auto nvml = NvmlLoader::Open(NvmlLibraryName());
  if (!nvml) return nvml.error();
  return TheOneGpuUuid(*nvml);
}

int PrintDevices(std::ostream& out, std::ostream& err) {
  auto nvml = NvmlLoader::Open(NvmlLibraryName());
  if (!nvml) {
    err << "kai: error: " << nvml.error().message << "\n";
    return 1;
  }
  auto devices = ListDevices(*nvml);
  if (!devices) {
    err << "kai: error: " << devices.error().message << "\n";
    return 1;
  }
  for (const GpuDevice& d : *devices) out << DeviceLine(d) << "\n";
  return 0;
}

Result<Reserved> ReserveFromProcess(const ProgramOptions& o, std::ostream& err) {
  const k8s::EnvLookup env = k8s::ProcessEnv();
  auto pod = CurrentPod(env);
  if (!pod) return pod.error();
  auto config = k8s::ResolveConfig(o.kubeconfig, o.context, env);
  if (!config) return config.error();
  config->qps = o.qps;
  config->burst = o.burst;
  const k8s::ApiClient client(*config);
  ReserveOptions ro;
  ro.sleep = SleepUnlessStopped;
  ro.stopped = [] { return g_stop.load(); };
  ro.log = [&err](const std::string& line) { err << "kai resource-reservation: " << line << "\n"; };
  return ReserveGpu(client, *pod, NvmlGpuUuid, ro);
}

}  // namespace

Result<PodRef> CurrentPod(const k8s::EnvLookup& env) {
  const auto ns = env("POD_NAMESPACE");
  if (!ns || ns->empty()) {
    return Error{"POD_NAMESPACE is not set (the pod's namespace, from the downward API)"};
  }
  const auto name = env("POD_NAME");
  if (!name || name->empty()) {
    return Error{"POD_NAME is not set (the pod's name, from the downward API)"};
  }
  return PodRef{*ns, *name};
}

std::string ReservationPatch(std::string_view uuid) {
  k8s::MetaPatch p;
  p.annotations.emplace_back(std::string(keys::kReservedGpuAnnotation), std::string(uuid));
  return k8s::MetadataMergePatch(p);
}

Result<Reserved> ReserveGpu(const k8s::ApiClient& client, const PodRef& pod, const UuidSource& uuid,
                            const ReserveOptions& options) {
  const std::string path = k8s::ObjectPath(res::kPod, pod.ns, pod.name);
  auto annotated = WithRetries<bool>(options, "reading pod " + Key(pod),
                                     [&] { return ReadReserved(client, path); });
  if (!annotated) return Error{"cannot read pod " + Key(pod) + ": " + annotated.error().message};
  if (*annotated) {
    Log(options, "pod " + Key(pod) + " already carries " +
                     std::string(keys::kReservedGpuAnnotation) + "; NVML is not asked again");
    return Reserved::kAlreadyAnnotated;
  }
  auto gpu = uuid();
  if (!gpu) return gpu.error();
  Log(options, "pod " + Key(pod) + " holds GPU " + *gpu);
  auto patched = WithRetries<bool>(options, "annotating pod " + Key(pod),
                                   [&] { return PatchReserved(client, path, *gpu); });
  if (!patched) {
    return Error{"cannot annotate pod " + Key(pod) + " with " +
                 std::string(keys::kReservedGpuAnnotation) + "=" + *gpu + ": " +
                 patched.error().message};
  }
  Log(options,
      "pod " + Key(pod) + " annotated " + std::string(keys::kReservedGpuAnnotation) + "=" + *gpu);
  return Reserved::kPatched;
}

int RunResourceReservation(const ProgramOptions& options, std::ostream& out, std::ostream& err) {
  if (options.print) return PrintDevices(out, err);
  auto reserved = ReserveFromProcess(options, err);
  if (!reserved && !g_stop) {
    err << "kai: error: " << reserved.error().message << "\n";
    return 1;
  }
  WaitForStop();
  return 0;
}

void RequestStop() { g_stop = true; }

}  // namespace kai::reservation
