// The NVML wrapper against the fake NVML (tests/fakenvml, KAI_FAKE_NVML), whose answers the
// FAKE_NVML_* variables script; and `kai resource-reservation --print` through the built binary.
#include "kai/daemons/reservation/nvml.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "kai/testing/log_record.h"
#include "kai/testing/scoped_env.h"

namespace kai::reservation {
namespace {

constexpr unsigned long long kMiB = 1024ULL * 1024ULL;

const char* const kFakeVariables[] = {
    "FAKE_NVML_DEVICES",   "FAKE_NVML_COUNT",   "FAKE_NVML_INIT_RC", "FAKE_NVML_COUNT_RC",
    "FAKE_NVML_HANDLE_RC", "FAKE_NVML_UUID_RC", "FAKE_NVML_NAME_RC", "FAKE_NVML_MEMORY_RC",
    "FAKE_NVML_LOG",       "KAI_NVML_LIBRARY",
};

// Every FAKE_NVML_* variable unset for the test, whatever the outer environment holds.
class Nvml : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kFakeVariables) env_.Unset(v);
  }

  NvmlLoader Open() {
    auto nvml = NvmlLoader::Open(KAI_FAKE_NVML);
    EXPECT_TRUE(nvml.ok()) << (nvml ? "" : nvml.error().message);
    return std::move(*nvml);
  }

  std::string OneUuidError() {
    auto uuid = TheOneGpuUuid(Open());
    EXPECT_FALSE(uuid.ok()) << "got " << (uuid ? *uuid : "");
    return uuid ? "" : uuid.error().message;
  }

  testutil::ScopedEnv env_;
};

TEST_F(Nvml, ListsEveryDeviceWithUuidNameAndMemory) {
  env_.Set("FAKE_NVML_DEVICES", "GPU-aaaa:NVIDIA H200:143771;GPU-bbbb:NVIDIA A100-SXM4-80GB:81920");
  auto devices = ListDevices(Open());
  ASSERT_TRUE(devices.ok()) << devices.error().message;
  ASSERT_EQ(devices->size(), 2u);
  EXPECT_EQ((*devices)[0].index, 0u);
  EXPECT_EQ((*devices)[0].uuid, "GPU-aaaa");
  EXPECT_EQ((*devices)[0].name, "NVIDIA H200");
  EXPECT_EQ((*devices)[0].memory_total_bytes, 143771 * kMiB);
  EXPECT_EQ((*devices)[1].index, 1u);
  EXPECT_EQ((*devices)[1].uuid, "GPU-bbbb");
  EXPECT_EQ((*devices)[1].name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(DeviceLine((*devices)[0]), "0  GPU-aaaa  NVIDIA H200  143771 MiB");
}

TEST_F(Nvml, TheOneVisibleDeviceGivesItsUuid) {
  env_.Set("FAKE_NVML_DEVICES", "GPU-5d7d0c4e-1111-2222-3333-444455556666:NVIDIA H200:143771");
  auto uuid = TheOneGpuUuid(Open());
  ASSERT_TRUE(uuid.ok()) << uuid.error().message;
  EXPECT_EQ(*uuid, "GPU-5d7d0c4e-1111-2222-3333-444455556666");
}

TEST_F(Nvml, NoDeviceVisibleIsAnError) {
  env_.Set("FAKE_NVML_DEVICES", "");
  EXPECT_EQ(OneUuidError(), "no GPU device visible: found 0 devices, 1 was expected");
  auto devices = ListDevices(Open());
  ASSERT_FALSE(devices.ok());
  EXPECT_NE(devices.error().message.find("no GPU device visible"), std::string::npos)
      << devices.error().message;
}

TEST_F(Nvml, TwoVisibleDevicesAreNotTheOneExpected) {
  env_.Set("FAKE_NVML_DEVICES", "GPU-aaaa:A:1;GPU-bbbb:B:1");
  EXPECT_EQ(OneUuidError(), "found 2 devices, 1 was expected");
}

TEST_F(Nvml, InitErrorNamesTheCodeAndNvmlText) {
  env_.Set("FAKE_NVML_INIT_RC", "9");
  EXPECT_EQ(OneUuidError(),
            "cannot initialise NVML: nvmlInit_v2 returned 9 DRIVER_NOT_LOADED (Driver Not Loaded)");
  env_.Set("FAKE_NVML_INIT_RC", "18");
  EXPECT_NE(OneUuidError().find("nvmlInit_v2 returned 18 LIB_RM_VERSION_MISMATCH ("),
            std::string::npos);
}

TEST_F(Nvml, CountErrorIsNamed) {
  env_.Set("FAKE_NVML_COUNT_RC", "4");
  EXPECT_EQ(OneUuidError(),
            "cannot count GPU devices: nvmlDeviceGetCount_v2 returned 4 NO_PERMISSION "
            "(Insufficient Permissions)");
}

TEST_F(Nvml, UuidErrorNamesTheDevice) {
  env_.Set("FAKE_NVML_UUID_RC", "3");
  EXPECT_EQ(OneUuidError(),
            "GPU device 0: cannot get its UUID: nvmlDeviceGetUUID returned 3 NOT_SUPPORTED "
            "(Not Supported)");
}

TEST_F(Nvml, MemoryErrorNamesTheDevice) {
  env_.Set("FAKE_NVML_DEVICES", "GPU-aaaa:A:1;GPU-bbbb:B:1");
  env_.Set("FAKE_NVML_MEMORY_RC", "999");
  auto devices = ListDevices(Open());
  ASSERT_FALSE(devices.ok());
  EXPECT_EQ(devices.error().message,
            "GPU device 0: cannot get its memory: nvmlDeviceGetMemoryInfo returned 999 UNKNOWN "
            "(Unknown Error)");
}

// nvmlShutdown follows every nvmlInit_v2 that succeeded, also when a later call fails; a failed
// nvmlInit_v2 is not shut down.
TEST_F(Nvml, ShutdownFollowsEverySuccessfulInit) {
  const std::string log =
      (std::filesystem::temp_directory_path() / ("kai-fake-nvml-" + std::to_string(::getpid())))
          .string();
  std::filesystem::remove(log);
  env_.Set("FAKE_NVML_LOG", log);
  env_.Set("FAKE_NVML_UUID_RC", "3");
  EXPECT_FALSE(TheOneGpuUuid(Open()).ok());
  env_.Set("FAKE_NVML_INIT_RC", "9");
  EXPECT_FALSE(ListDevices(Open()).ok());
  std::ifstream in(log);
  std::stringstream calls;
  calls << in.rdbuf();
  std::filesystem::remove(log);
  EXPECT_EQ(calls.str(),
            "nvmlInit_v2\nnvmlDeviceGetCount_v2\nnvmlDeviceGetHandleByIndex_v2\n"
            "nvmlDeviceGetUUID\nnvmlShutdown\nnvmlInit_v2\n");
}

TEST_F(Nvml, MissingLibraryNamesWhatWasTried) {
  auto nvml = NvmlLoader::Open("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(nvml.ok());
  const std::string& m = nvml.error().message;
  EXPECT_NE(m.find("cannot load the NVML library /nonexistent/libnvidia-ml.so.1"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("KAI_NVML_LIBRARY"), std::string::npos) << m;
  EXPECT_NE(m.find("No such file"), std::string::npos) << m;  // dlerror()'s reason
}

TEST_F(Nvml, MissingSymbolIsNamed) {
  auto nvml = NvmlLoader::Open("libm.so.6");  // a real library with no NVML in it
  ASSERT_FALSE(nvml.ok());
  EXPECT_NE(nvml.error().message.find(
                "the NVML library libm.so.6 is not usable: missing symbol nvmlInit_v2"),
            std::string::npos)
      << nvml.error().message;
}

TEST_F(Nvml, LibraryNameComesFromTheEnvironment) {
  EXPECT_EQ(NvmlLibraryName(), "libnvidia-ml.so.1");
  env_.Set("KAI_NVML_LIBRARY", "");
  EXPECT_EQ(NvmlLibraryName(), "libnvidia-ml.so.1");
  env_.Set("KAI_NVML_LIBRARY", "/opt/fake/libnvml.so");
  EXPECT_EQ(NvmlLibraryName(), "/opt/fake/libnvml.so");
}

TEST(NvmlReturnCode, CommonCodesHaveNames) {
  EXPECT_EQ(ReturnCodeName(1), "1 UNINITIALIZED");
  EXPECT_EQ(ReturnCodeName(2), "2 INVALID_ARGUMENT");
  EXPECT_EQ(ReturnCodeName(6), "6 NOT_FOUND");
  EXPECT_EQ(ReturnCodeName(7), "7 INSUFFICIENT_SIZE");
  EXPECT_EQ(ReturnCodeName(12), "12 LIBRARY_NOT_FOUND");
  EXPECT_EQ(ReturnCodeName(18), "18 LIB_RM_VERSION_MISMATCH");
  EXPECT_EQ(ReturnCodeName(999), "999 UNKNOWN");
  EXPECT_EQ(ReturnCodeName(4242), "4242");
}

// ---- `kai resource-reservation --print` through the binary ----

struct Ran {
  int exit_code = -1;
  std::string output;
};

// Runs the kai binary with `args`; `streams` is a redirection such as "2>&1" or "2>/dev/null".
Ran RunKai(const std::string& args, const std::string& streams) {
  const std::string command = std::string("'") + KAI_BINARY + "' " + args + " " + streams;
  Ran ran;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return ran;
  std::array<char, 4096> buf;
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;)
    ran.output.append(buf.data(), n);
  const int status = ::pclose(p);
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return ran;
}

class NvmlPrint : public Nvml {
 protected:
  void SetUp() override {
    Nvml::SetUp();
    env_.Set("KAI_NVML_LIBRARY", KAI_FAKE_NVML);
  }
};

TEST_F(NvmlPrint, PrintsOneLinePerDevice) {
  env_.Set("FAKE_NVML_DEVICES", "GPU-aaaa:NVIDIA H200:143771;GPU-bbbb:NVIDIA H200:143771");
  const Ran ran = RunKai("resource-reservation --print", "2>/dev/null");
  EXPECT_EQ(ran.exit_code, 0);
  EXPECT_EQ(ran.output,
            "0  GPU-aaaa  NVIDIA H200  143771 MiB\n1  GPU-bbbb  NVIDIA H200  143771 MiB\n");
}

TEST_F(NvmlPrint, FailureIsOneKaiLine) {
  env_.Set("FAKE_NVML_INIT_RC", "9");
  const Ran ran = RunKai("resource-reservation --print", "2>&1");
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_EQ(testutil::WithoutTime(ran.output),
            "ERROR\tresource-reservation\tcannot initialise NVML: nvmlInit_v2 returned 9 "
            "DRIVER_NOT_LOADED (Driver Not Loaded)\n");
}

TEST_F(NvmlPrint, MissingLibraryIsOneKaiLine) {
  env_.Set("KAI_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
  const Ran ran = RunKai("resource-reservation --print", "2>&1");
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_TRUE(testutil::WithoutTime(ran.output)
                  .starts_with("ERROR\tresource-reservation\tcannot load the NVML library "
                               "/nonexistent/libnvidia-ml.so.1"))
      << ran.output;
  EXPECT_EQ(std::count(ran.output.begin(), ran.output.end(), '\n'), 1) << ran.output;
}

}  // namespace
}  // namespace kai::reservation
