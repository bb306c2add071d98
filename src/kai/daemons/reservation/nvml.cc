#include "kai/daemons/reservation/nvml.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <utility>

namespace kai::reservation {
namespace {

struct CodeName {
  nvml::Return rc;
  const char* name;
};

// nvmlReturn_t's values (NVML_ERROR_<name>).
constexpr CodeName kCodeNames[] = {
    {0, "SUCCESS"},
    {1, "UNINITIALIZED"},
    {2, "INVALID_ARGUMENT"},
    {3, "NOT_SUPPORTED"},
    {4, "NO_PERMISSION"},
    {5, "ALREADY_INITIALIZED"},
    {6, "NOT_FOUND"},
    {7, "INSUFFICIENT_SIZE"},
    {8, "INSUFFICIENT_POWER"},
    {9, "DRIVER_NOT_LOADED"},
    {10, "TIMEOUT"},
    {11, "IRQ_ISSUE"},
    {12, "LIBRARY_NOT_FOUND"},
    {13, "FUNCTION_NOT_FOUND"},
    {14, "CORRUPTED_INFOROM"},
    {15, "GPU_IS_LOST"},
    {16, "RESET_REQUIRED"},
    {17, "OPERATING_SYSTEM"},
    {18, "LIB_RM_VERSION_MISMATCH"},
    {19, "IN_USE"},
    {20, "MEMORY"},
    {21, "NO_DATA"},
    {22, "VGPU_ECC_NOT_SUPPORTED"},
    {23, "INSUFFICIENT_RESOURCES"},
    {24, "FREQ_NOT_SUPPORTED"},
    {25, "ARGUMENT_VERSION_MISMATCH"},
    {26, "DEPRECATED"},
    {27, "NOT_READY"},
    {28, "GPU_NOT_FOUND"},
    {29, "INVALID_STATE"},
    {999, "UNKNOWN"},
};

std::string DlError() {
  const char* e = dlerror();
  return e ? e : "no reason given";
}

template <class F>
bool Resolve(void* handle, const char* symbol, F& out, std::string& error) {
  dlerror();  // clears an earlier error, so that a null symbol is told from a failure
  void* p = dlsym(handle, symbol);
  if (!p) {
    error = std::string("missing symbol ") + symbol + ": " + DlError();
    return false;
  }
  out = reinterpret_cast<F>(p);
  return true;
}

bool ResolveAll(void* handle, NvmlLoader::Functions& f, std::string& error) {
  return Resolve(handle, "nvmlInit_v2", f.init, error) &&
         Resolve(handle, "nvmlShutdown", f.shutdown, error) &&
         Resolve(handle, "nvmlErrorString", f.error_string, error) &&
         Resolve(handle, "nvmlDeviceGetCount_v2", f.device_count, error) &&
         Resolve(handle, "nvmlDeviceGetHandleByIndex_v2", f.device_by_index, error) &&
         Resolve(handle, "nvmlDeviceGetUUID", f.device_uuid, error) &&
         Resolve(handle, "nvmlDeviceGetName", f.device_name, error) &&
         Resolve(handle, "nvmlDeviceGetMemoryInfo", f.device_memory, error);
}

// nvmlInit_v2 on construction (check ok()), nvmlShutdown on destruction when it succeeded.
class Session {
 public:
  explicit Session(const NvmlLoader& nvml) : nvml_(nvml), rc_(nvml.fn().init()) {}
  ~Session() {
    if (rc_ == nvml::kSuccess) nvml_.fn().shutdown();
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool ok() const { return rc_ == nvml::kSuccess; }
  Error InitError() const {
    return Error{"cannot initialise NVML: " + nvml_.Failure("nvmlInit_v2", rc_)};
  }

 private:
  const NvmlLoader& nvml_;
  nvml::Return rc_;
};

Result<unsigned> DeviceCount(const NvmlLoader& nvml) {
  unsigned count = 0;
  const nvml::Return rc = nvml.fn().device_count(&count);
  if (rc != nvml::kSuccess) {
    return Error{"cannot count GPU devices: " + nvml.Failure("nvmlDeviceGetCount_v2", rc)};
  }
  return count;
}

Result<nvml::Device> DeviceAt(const NvmlLoader& nvml, unsigned index) {
  nvml::Device d = nullptr;
  const nvml::Return rc = nvml.fn().device_by_index(index, &d);
  if (rc != nvml::kSuccess) {
    return Error{"GPU device " + std::to_string(index) +
                 ": cannot get its handle: " + nvml.Failure("nvmlDeviceGetHandleByIndex_v2", rc)};
  }
  return d;
}

// A string NVML writes into a buffer of `size` bytes (nvmlDeviceGetUUID, nvmlDeviceGetName).
template <unsigned size>
Result<std::string> DeviceString(const NvmlLoader& nvml,
                                 nvml::Return (*get)(nvml::Device, char*, unsigned), nvml::Device d,
                                 unsigned index, const char* call, const char* what) {
  char buf[size] = {};
  const nvml::Return rc = get(d, buf, size);
  if (rc != nvml::kSuccess) {
    return Error{"GPU device " + std::to_string(index) + ": cannot get its " + what + ": " +
                 nvml.Failure(call, rc)};
  }
  return std::string(buf, strnlen(buf, size));
}

Result<std::string> DeviceUuid(const NvmlLoader& nvml, nvml::Device d, unsigned index) {
  return DeviceString<nvml::kUuidBufferSize>(nvml, nvml.fn().device_uuid, d, index,
                                             "nvmlDeviceGetUUID", "UUID");
}

Result<GpuDevice> Describe(const NvmlLoader& nvml, unsigned index) {
  auto d = DeviceAt(nvml, index);
  if (!d) return d.error();
  auto uuid = DeviceUuid(nvml, *d, index);
  if (!uuid) return uuid.error();
  auto name = DeviceString<nvml::kNameBufferSize>(nvml, nvml.fn().device_name, *d, index,
                                                  "nvmlDeviceGetName", "name");
  if (!name) return name.error();
  nvml::Memory mem{};
  const nvml::Return rc = nvml.fn().device_memory(*d, &mem);
  if (rc != nvml::kSuccess) {
    return Error{"GPU device " + std::to_string(index) +
                 ": cannot get its memory: " + nvml.Failure("nvmlDeviceGetMemoryInfo", rc)};
  }
  return GpuDevice{index, std::move(*uuid), std::move(*name), mem.total};
}

}  // namespace

std::string ReturnCodeName(nvml::Return rc) {
  for (const CodeName& c : kCodeNames) {
    if (c.rc == rc) return std::to_string(rc) + " " + c.name;
  }
  return std::to_string(rc);
}

std::string NvmlLibraryName() {
  const char* v = std::getenv(kNvmlLibraryEnv);  // the process edge: front ends only
  return v && *v ? v : kDefaultNvmlLibrary;
}

void NvmlLoader::Closer::operator()(void* handle) const { dlclose(handle); }

NvmlLoader::NvmlLoader(std::string library, std::unique_ptr<void, Closer> handle, Functions fn)
    : library_(std::move(library)), handle_(std::move(handle)), fn_(fn) {}

Result<NvmlLoader> NvmlLoader::Open(const std::string& library) {
  std::unique_ptr<void, Closer> handle(dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!handle) {
    return Error{"cannot load the NVML library " + library + " (set " + kNvmlLibraryEnv +
                 " to its path): " + DlError()};
  }
  Functions fn;
  std::string error;
  if (!ResolveAll(handle.get(), fn, error)) {
    return Error{"the NVML library " + library + " is not usable: " + error};
  }
  return NvmlLoader(library, std::move(handle), fn);
}

std::string NvmlLoader::Failure(const char* call, nvml::Return rc) const {
  const char* text = fn_.error_string ? fn_.error_string(rc) : nullptr;
  std::string out = std::string(call) + " returned " + ReturnCodeName(rc);
  if (text && *text) out += std::string(" (") + text + ")";
  return out;
}

Result<std::vector<GpuDevice>> ListDevices(const NvmlLoader& nvml) {
  Session session(nvml);
  if (!session.ok()) return session.InitError();
  auto count = DeviceCount(nvml);
  if (!count) return count.error();
  if (*count == 0) return Error{"no GPU device visible (NVML counts 0 devices)"};
  std::vector<GpuDevice> out;
  for (unsigned i = 0; i < *count; ++i) {
    auto d = Describe(nvml, i);
    if (!d) return d.error();
    out.push_back(std::move(*d));
  }
  return out;
}

Result<std::string> TheOneGpuUuid(const NvmlLoader& nvml) {
  Session session(nvml);
  if (!session.ok()) return session.InitError();
  auto count = DeviceCount(nvml);
  if (!count) return count.error();
  if (*count == 0) return Error{"no GPU device visible: found 0 devices, 1 was expected"};
  if (*count != 1) {
    return Error{"found " + std::to_string(*count) + " devices, 1 was expected"};
  }
  auto d = DeviceAt(nvml, 0);
  if (!d) return d.error();
  return DeviceUuid(nvml, *d, 0);
}

std::string DeviceLine(const GpuDevice& d) {
  constexpr unsigned long long kMiB = 1024ULL * 1024ULL;
  return std::to_string(d.index) + "  " + d.uuid + "  " + d.name + "  " +
         std::to_string(d.memory_total_bytes / kMiB) + " MiB";
}

}  // namespace kai::reservation
