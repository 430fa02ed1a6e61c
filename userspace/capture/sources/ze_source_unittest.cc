#include "capture/sources/ze_source.h"

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

}  // namespace
}  // namespace xtrace
