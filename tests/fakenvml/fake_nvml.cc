// A fake NVML for tests (the shared library kai_fake_nvml): the calls kai's NVML wrapper
// (src/kai/daemons/reservation/nvml.h) resolves, answering what environment variables script, read
// at nvmlInit_v2:
//
//   FAKE_NVML_DEVICES   uuid:name:MiB per device, ';'-separated
//                       (default: one device, GPU-fake-0000:Fake GPU:81920)
//   FAKE_NVML_COUNT     the device count reported (default: the number of devices)
//   FAKE_NVML_INIT_RC, FAKE_NVML_COUNT_RC, FAKE_NVML_HANDLE_RC, FAKE_NVML_UUID_RC,
//   FAKE_NVML_NAME_RC, FAKE_NVML_MEMORY_RC
//                       the nvmlReturn_t of that call (default 0, success)
//   FAKE_NVML_LOG       a file each call appends its name to, one line each
//
// Calls before nvmlInit_v2 (or after nvmlShutdown) answer 1, UNINITIALIZED, as NVML does.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct FakeDevice {
  std::string uuid, name;
  unsigned long long mib = 0;
};

struct State {
  bool initialized = false;
  std::vector<FakeDevice> devices;
  unsigned count = 0;
};

State& TheState() {
  static State s;
  return s;
}

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

void Log(const char* call) {
  const char* path = std::getenv("FAKE_NVML_LOG");
  if (!path || !*path) return;
  if (FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s\n", call);
    std::fclose(f);
  }
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

std::vector<FakeDevice> ParseDevices(const char* spec) {
  std::vector<FakeDevice> out;
  for (const std::string& entry : Split(spec ? spec : "GPU-fake-0000:Fake GPU:81920", ';')) {
    if (entry.empty()) continue;
    const std::vector<std::string> f = Split(entry, ':');
    FakeDevice d;
    d.uuid = f[0];
    if (f.size() > 1) d.name = f[1];
    if (f.size() > 2) d.mib = std::strtoull(f[2].c_str(), nullptr, 10);
    out.push_back(d);
  }
  return out;
}

// Copies `s` into NVML's out buffer; 7 (INSUFFICIENT_SIZE) when it does not fit.
int CopyOut(const std::string& s, char* buf, unsigned length) {
  if (!buf) return 2;
  if (s.size() + 1 > length) return 7;
  std::memcpy(buf, s.c_str(), s.size() + 1);
  return 0;
}

// The device a handle points at, or null when the handle is not one of ours.
const FakeDevice* DeviceOf(void* handle) {
  const State& s = TheState();
  for (const FakeDevice& d : s.devices) {
    if (handle == &d) return &d;
  }
  return nullptr;
}

// The scripted answer of a device call: UNINITIALIZED, INVALID_ARGUMENT or the call's *_RC.
int DeviceCallRc(const char* call, const char* rc_env, void* handle) {
  Log(call);
  if (!TheState().initialized) return 1;
  if (!DeviceOf(handle)) return 2;
  return EnvInt(rc_env, 0);
}

}  // namespace

extern "C" {

int nvmlInit_v2() {
  Log("nvmlInit_v2");
  const int rc = EnvInt("FAKE_NVML_INIT_RC", 0);
  if (rc != 0) return rc;
  State& s = TheState();
  s.devices = ParseDevices(std::getenv("FAKE_NVML_DEVICES"));
  s.count = static_cast<unsigned>(EnvInt("FAKE_NVML_COUNT", static_cast<int>(s.devices.size())));
  s.initialized = true;
  return 0;
}

int nvmlShutdown() {
  Log("nvmlShutdown");
  State& s = TheState();
  if (!s.initialized) return 1;
  s.initialized = false;
  return 0;
}

const char* nvmlErrorString(int rc) {
  switch (rc) {
    case 0:
      return "Success";
    case 1:
      return "Uninitialized";
    case 2:
      return "Invalid Argument";
    case 3:
      return "Not Supported";
    case 4:
      return "Insufficient Permissions";
    case 6:
      return "Not Found";
    case 7:
      return "Insufficient Size";
    case 9:
      return "Driver Not Loaded";
    case 18:
      return "RM has detected an NVML/RM version mismatch.";
    default:
      return "Unknown Error";
  }
}

int nvmlDeviceGetCount_v2(unsigned* count) {
  Log("nvmlDeviceGetCount_v2");
  const State& s = TheState();
  if (!s.initialized) return 1;
  if (!count) return 2;
  const int rc = EnvInt("FAKE_NVML_COUNT_RC", 0);
  if (rc == 0) *count = s.count;
  return rc;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  Log("nvmlDeviceGetHandleByIndex_v2");
  State& s = TheState();
  if (!s.initialized) return 1;
  if (!device || index >= s.devices.size()) return 2;
  const int rc = EnvInt("FAKE_NVML_HANDLE_RC", 0);
  if (rc == 0) *device = &s.devices[index];
  return rc;
}

int nvmlDeviceGetUUID(void* device, char* uuid, unsigned length) {
  const int rc = DeviceCallRc("nvmlDeviceGetUUID", "FAKE_NVML_UUID_RC", device);
  return rc != 0 ? rc : CopyOut(DeviceOf(device)->uuid, uuid, length);
}

int nvmlDeviceGetName(void* device, char* name, unsigned length) {
  const int rc = DeviceCallRc("nvmlDeviceGetName", "FAKE_NVML_NAME_RC", device);
  return rc != 0 ? rc : CopyOut(DeviceOf(device)->name, name, length);
}

struct FakeMemory {
  unsigned long long total, free, used;
};

int nvmlDeviceGetMemoryInfo(void* device, FakeMemory* memory) {
  const int rc = DeviceCallRc("nvmlDeviceGetMemoryInfo", "FAKE_NVML_MEMORY_RC", device);
  if (rc != 0) return rc;
  if (!memory) return 2;
  const unsigned long long total = DeviceOf(device)->mib * 1024ULL * 1024ULL;
  *memory = FakeMemory{total, total, 0};
  return 0;
}

}  // extern "C"
