#pragma once
// NVML (NVIDIA's management library, libnvidia-ml), loaded at run time with dlopen: kai builds
// and runs without any NVIDIA header or library, and only `kai resource-reservation` ever opens
// it. The few C types and calls used are declared here, as NVML's ABI defines them.
#include <memory>
#include <string>
#include <vector>

#include "kai/core/util/result.h"

namespace kai::reservation {

// The library opened when KAI_NVML_LIBRARY is not set (the name the NVIDIA container toolkit
// mounts into a GPU container).
inline constexpr const char* kDefaultNvmlLibrary = "libnvidia-ml.so.1";
// Names another library (a path or a name), e.g. the tests' fake NVML.
inline constexpr const char* kNvmlLibraryEnv = "KAI_NVML_LIBRARY";

// NVML's ABI, as far as kai calls it.
namespace nvml {
using Return = int;  // nvmlReturn_t
struct DeviceSt;
using Device = DeviceSt*;  // nvmlDevice_t, opaque
struct Memory {            // nvmlMemory_t (v1)
  unsigned long long total, free, used;
};
inline constexpr Return kSuccess = 0;
// NVML_DEVICE_UUID_V2_BUFFER_SIZE and NVML_DEVICE_NAME_V2_BUFFER_SIZE.
inline constexpr unsigned kUuidBufferSize = 96;
inline constexpr unsigned kNameBufferSize = 96;
}  // namespace nvml

// "9 DRIVER_NOT_LOADED", or just "42" for a code without a name here.
std::string ReturnCodeName(nvml::Return rc);

// KAI_NVML_LIBRARY when set and not empty, else libnvidia-ml.so.1.
std::string NvmlLibraryName();

// An opened NVML library with every function kai calls resolved; dlclose on destruction.
class NvmlLoader {
 public:
  struct Functions {
    nvml::Return (*init)() = nullptr;
    nvml::Return (*shutdown)() = nullptr;
    const char* (*error_string)(nvml::Return) = nullptr;
    nvml::Return (*device_count)(unsigned*) = nullptr;
    nvml::Return (*device_by_index)(unsigned, nvml::Device*) = nullptr;
    nvml::Return (*device_uuid)(nvml::Device, char*, unsigned) = nullptr;
    nvml::Return (*device_name)(nvml::Device, char*, unsigned) = nullptr;
    nvml::Return (*device_memory)(nvml::Device, nvml::Memory*) = nullptr;
  };

  // Opens `library` (a path, or a name the dynamic linker searches for). The error names the
  // library and what dlopen or dlsym said.
  static Result<NvmlLoader> Open(const std::string& library);

  const Functions& fn() const { return fn_; }
  const std::string& library() const { return library_; }
  // "nvmlInit_v2 returned 9 DRIVER_NOT_LOADED (Driver Not Loaded)".
  std::string Failure(const char* call, nvml::Return rc) const;

 private:
  struct Closer {
    void operator()(void* handle) const;
  };
  NvmlLoader(std::string library, std::unique_ptr<void, Closer> handle, Functions fn);

  std::string library_;
  std::unique_ptr<void, Closer> handle_;
  Functions fn_;
};

struct GpuDevice {
  unsigned index = 0;
  std::string uuid;  // GPU-xxxxxxxx-..., or MIG-... for a MIG device
  std::string name;  // "NVIDIA H200"
  unsigned long long memory_total_bytes = 0;
};

// Every device NVML sees (between nvmlInit_v2 and nvmlShutdown). No device is an error.
Result<std::vector<GpuDevice>> ListDevices(const NvmlLoader& nvml);

// The UUID of the one device visible to this container (the one the device plugin gave it);
// an error unless exactly one is visible.
Result<std::string> TheOneGpuUuid(const NvmlLoader& nvml);

// "0  GPU-5d7d...  NVIDIA H200  143771 MiB".
std::string DeviceLine(const GpuDevice& d);

}  // namespace kai::reservation
