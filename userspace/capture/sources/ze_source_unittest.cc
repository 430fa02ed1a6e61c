#include "capture/sources/ze_source.h"

#include "capture/sources/ze_probe_specs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/read_file.h"

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

// The slots xtrace asks a driver's getters for are where Level Zero's own headers put them:
// trixie's (1.20.6, from Debian's level-zero-dev in the tree scripts/trixie-rootfs.sh builds)
// are read for each table's fields, in order. A slot newer than those headers is not checked.
TEST(ZeSource, DriverTableSlotsAreWhereLevelZerosHeadersPutThem) {
  const char* env = std::getenv("XTRACE_TRIXIE_ROOT");
  const std::string header = std::string(env && *env ? env : "/var/cache/xtrace/trixie") +
                             "/usr/include/level_zero/ze_ddi.h";
  const auto text = ReadWholeFile(header);
  if (!text) GTEST_SKIP() << header << " is not there (scripts/trixie-rootfs.sh builds it)";
  size_t checked = 0;
  for (const DriverTableSlot& slot : ZeDriverTableSlots()) {
    // zeGetCommandListExpProcAddrTable: the struct _ze_command_list_exp_dditable_t, whose
    // fields drop the object's name (zeCommandListImmediateAppendCommandListsExp:
    // pfnImmediateAppendCommandListsExp; the Global table's objects have none).
    std::string_view table = slot.getter.substr(5, slot.getter.size() - 5 - 13);
    std::string snake;
    for (char c : table) {
      if (std::isupper(static_cast<unsigned char>(c)) && !snake.empty()) snake += '_';
      snake += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    std::string_view object = table == "Global" ? "" : table;
    if (object.ends_with("Exp")) object.remove_suffix(3);
    ASSERT_TRUE(slot.function.starts_with("ze" + std::string(object))) << slot.function;
    const std::string field =
        "pfn" + std::string(slot.function.substr(2 + object.size())) + ";";
    const size_t start = text->find("typedef struct _ze_" + snake + "_dditable_t\n{");
    ASSERT_NE(start, std::string::npos) << snake;
    const size_t end = text->find('}', start);
    size_t index = 0;
    bool found = false;
    for (size_t at = text->find("pfn", start); at < end; at = text->find("pfn", at + 1)) {
      if (text->compare(at, field.size(), field) == 0) {
        found = true;
        break;
      }
      index += text->compare(at - 1, 1, " ") == 0;  // a field, not a type named ...pfn...
    }
    if (!found) continue;  // newer than these headers
    EXPECT_EQ(index, slot.index) << slot.function << " in " << slot.getter;
    ++checked;
  }
  // 1.20.6's headers have at least zeInitDrivers, zeCommandListHostSynchronize and
  // zeCommandListImmediateAppendCommandListsExp.
  EXPECT_GE(checked, 3u);
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
