#include "capture/sources/ze_source.h"

#include "capture/sources/ze_probe_specs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string_view>

namespace xtrace {
namespace {

// The names the capture asks its own driver about: every function drivers hand out by pointer
// (and the core ones probed in drivers too), none that only the loader's exports carry.
TEST(ZeSource, DriverFunctionNamesAreWhatDriversHandOut) {
  const auto names = ZeSource::DriverFunctionNames();
  auto has = [&](std::string_view n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  for (std::string_view n :
       {"zeCommandListAppendLaunchKernelWithArguments", "zeCommandListAppendLaunchKernelWithParameters",
        "zexCounterBasedEventCreate2", "zeEventCounterBasedCreate", "zeGraphCreateExp",
        "zeCommandListBeginGraphCaptureExp", "zeCommandListAppendGraphExp",
        "zeCommandListAppendHostFunction", "zexCommandListAppendHostFunction"})
    EXPECT_TRUE(has(n)) << n;
  for (std::string_view n : {"zeInit", "zeCommandListAppendLaunchKernel", "zeKernelCreate",
                             "zeCommandListHostSynchronize"})
    EXPECT_FALSE(has(n)) << n;
}

// The entry points of current stacks that a newer loader exports are probed at a loader's
// export (skipped where the loader lacks them: said with --verbose, and warned of only for
// those a driver hands out that are not probed in drivers); those drivers hand out by pointer
// in the driver file too.
TEST(ZeSource, NewerEntryPointsAreProbedAtTheLoadersThatHaveThem) {
  auto spec = [](std::string_view n) -> const ProbeSpec* {
    for (const ProbeSpec& s : ZeProbeSpecs())
      if (n == s.symbol) return &s;
    return nullptr;
  };
  for (std::string_view n :
       {"zeInitDrivers", "zeCommandListHostSynchronize", "zeCommandListImmediateAppendCommandListsExp",
        "zeCommandListAppendLaunchMultipleKernelsIndirect", "zeEventCounterBasedCreate",
        "zeCommandListAppendLaunchKernelWithArguments",
        "zeCommandListAppendLaunchKernelWithParameters"}) {
    const ProbeSpec* s = spec(n);
    ASSERT_NE(s, nullptr) << n;
    EXPECT_TRUE(s->in_loader) << n;
  }
  for (std::string_view n : {"zeEventCounterBasedCreate", "zeCommandListAppendLaunchKernelWithArguments",
                             "zeCommandListAppendLaunchKernelWithParameters"})
    EXPECT_TRUE(spec(n)->in_driver) << n;
  // Never exported by a loader: only in drivers, so no loader is said to lack them.
  for (std::string_view n : {"zexCounterBasedEventCreate2", "zeCommandListAppendGraphExp",
                             "zexCommandListAppendHostFunction"}) {
    ASSERT_NE(spec(n), nullptr) << n;
    EXPECT_FALSE(spec(n)->in_loader) << n;
  }
}

// Drivers by file name: Intel's GPU driver (and its build for older GPUs), its NPU driver, the
// loader's null driver and the simulated GPU; not the loader or its layers.
TEST(ZeSource, DriversAreKnownByTheirFileNames) {
  for (std::string_view p : {"/usr/lib/x86_64-linux-gnu/libze_intel_gpu.so.1",
                             "/usr/lib/x86_64-linux-gnu/libze_intel_gpu_legacy1.so.1",
                             "/usr/lib/x86_64-linux-gnu/libze_intel_vpu.so.1", "/opt/l0/libze_null.so.1",
                             "/xt/libxtrace_simze.so"})
    EXPECT_TRUE(ZeSource::IsDriverPath(p)) << p;
  for (std::string_view p : {"/usr/lib/x86_64-linux-gnu/libze_loader.so.1.20.6",
                             "/usr/lib/x86_64-linux-gnu/libze_tracing_layer.so.1",
                             "/usr/lib/x86_64-linux-gnu/libze_validation_layer.so.1"})
    EXPECT_FALSE(ZeSource::IsDriverPath(p)) << p;
  // The loader's layers keep copies of its dispatch: left out of a scan for tables taken.
  EXPECT_TRUE(ZeSource::IsLevelZerosOwnPath("/usr/lib/x86_64-linux-gnu/libze_tracing_layer.so.1.20.6"));
  EXPECT_TRUE(ZeSource::IsLevelZerosOwnPath("/usr/lib/x86_64-linux-gnu/libze_loader.so.1"));
  EXPECT_FALSE(ZeSource::IsLevelZerosOwnPath("/usr/lib/x86_64-linux-gnu/libze_intel_gpu.so.1"));
  EXPECT_TRUE(ZeSource::IsLoaderPath("/usr/lib/x86_64-linux-gnu/libze_loader.so.1"));
  EXPECT_FALSE(ZeSource::IsLoaderPath("/usr/lib/x86_64-linux-gnu/libze_intel_gpu.so.1"));
}

}  // namespace
}  // namespace xtrace
