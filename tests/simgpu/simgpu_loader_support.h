// What the simulated driver's loader tests share: the driver configuration of the main test
// process (set in main, before any zeInit), ground truth of the current test, and timestamp
// helpers. The tests are split by concern: discovery, clocks, timestamps, the KMD and the
// re-executed scenarios in simgpu_loader_test.cc (which holds main), kernels, executions,
// memory and synchronization in simgpu_execution_test.cc.
#pragma once

#include <gtest/gtest.h>
#include <level_zero/ze_api.h>

#include <cstdint>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "test_ze.h"

namespace simgpu_test {

// Driver configuration of the main test process (set in main, before any zeInit).
constexpr uint64_t kHz = 19'200'000;
constexpr int64_t kOffsetTicks = 3LL * 3600 * 19'200'000;  // three hours of ticks
constexpr uint64_t kDefaultKernelNs = 300'000;
constexpr double kCopyGbps = 10.0;
constexpr const char* kDeviceName = "simgpu loader test <Xe-HPC>, device";
constexpr uint64_t kMask32 = 0xffff'ffffULL;
constexpr uint64_t kPerDeviceOffset = 1'000'000'000'000ULL;  // documented in README.md
// Upper bound on how late a single command may end on a saturated machine (a preempted worker
// thread). Accuracy is checked separately on the median, so this only catches gross errors.
constexpr uint64_t kSchedulingSlackNs = 50'000'000;

inline std::string g_truth_path;
inline uint64_t g_test_start_mono = 0;  // CLOCK_MONOTONIC when the current test started

// Handles of destroyed objects may be reused by later ones, so ground truth is looked up only
// among records of the current test.
class TestStartClock : public testing::EmptyTestEventListener {
  void OnTestStart(const testing::TestInfo&) override {
    g_test_start_mono = simgpu_test::clock_ns(CLOCK_MONOTONIC);
  }
};

inline uint64_t ticks_to_ns(uint64_t ticks) { return ticks * 1'000'000'000ULL / kHz; }

inline std::vector<Truth> truth_where(const std::function<bool(const Truth&)>& pred,
                               const std::string& path = g_truth_path) {
  std::vector<Truth> out;
  for (Truth& t : read_ground_truth(path)) {
    if (pred(t)) out.push_back(std::move(t));
  }
  return out;
}

inline std::vector<Truth> truth_for_list(ze_command_list_handle_t list) {
  return truth_where([&](const Truth& t) {
    return t.cmdlist == handle_value(list) && t.submit_mono >= g_test_start_mono;
  });
}

inline ze_kernel_timestamp_result_t kernel_ts(ze_event_handle_t e) {
  ze_kernel_timestamp_result_t r{};
  ZE_CHECK(zeEventQueryKernelTimestamp(e, &r));
  return r;
}

inline uint64_t masked_duration(const ze_kernel_timestamp_result_t& r) {
  return (r.global.kernelEnd - r.global.kernelStart) & kMask32;
}

inline ze_device_properties_t device_properties(ze_structure_type_t stype, ze_device_handle_t dev) {
  ze_device_properties_t p{};
  p.stype = stype;
  ZE_CHECK(zeDeviceGetProperties(dev, &p));
  return p;
}

}  // namespace simgpu_test
