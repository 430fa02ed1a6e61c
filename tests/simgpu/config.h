// Simulator configuration: every XTRACE_SIMZE_* environment variable, read once.
// Tests configure the simulated GPU per process through the environment, like a real driver's knobs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace simze {

// Which kernel-driver exec ioctl stands in for a submission (see kmd_stub.h).
enum class DrmFlavor { kNone, kI915, kXe };

struct Config {
  std::string device_name = "xtrace simulated GPU (Xe-HPC)";
  uint32_t device_count = 1;
  // The devices zeDeviceGet lists, by device number, in this order (a subset or a reordering,
  // as a driver's affinity mask gives a process); empty: all, in number order. A device keeps
  // its UUID and its clock whatever position it is listed at.
  std::vector<uint32_t> device_order;
  uint64_t timer_hz = 19'200'000;
  // Nonzero by default so that nothing can mistake device ticks for host nanoseconds.
  int64_t clock_offset_ticks = 1'234'567'890'123;
  // Clock origin in CLOCK_MONOTONIC_RAW ns. 0 (boot) gives every process the same device
  // clock, as one physical GPU has; tests may pin it to a chosen instant instead.
  uint64_t clock_origin_raw_ns = 0;
  bool clock_origin_at_init = false;
  double drift_ppm = 0.0;
  uint64_t default_kernel_ns = 20'000;
  double copy_gbps = 20.0;  // simulated copy bandwidth, GB/s; 0 = as fast as memcpy
  DrmFlavor drm = DrmFlavor::kI915;
  std::string ground_truth_path;  // empty: no ground truth
  std::string kmd_log_path;       // empty: exec ioctls are not logged (kmd_log.h)
  // zeKernelGetName takes this long (a query a tracer runs in the process can be caught in
  // the middle: tests/integration/attach_query_integration_test.cc).
  uint64_t kernel_name_delay_ms = 0;
  // 1: zeKernelGetName holds the device-state lock (sync.h: the engine and every host wait
  // take it) through that delay, as a real driver's query may hold its own: a call undone in
  // the middle leaves it taken, and the process hangs at its next wait.
  uint64_t kernel_name_locked = 0;
  // 1: zeKernelGetName answers ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, as a driver without that
  // query may: a tracer that asks a process for its kernels' names learns nothing.
  uint64_t kernel_name_unsupported = 0;
  // 1: zeDriverGetExtensionFunctionAddress hands out zeCommandListHostSynchronize and
  // zeCommandListImmediateAppendCommandListsExp too (core functions Intel's driver leaves to
  // the loader), as a driver may for programs whose loader lacks them; 0: as Intel's.
  uint64_t hand_out_core = 0;
  // 1: Level Zero 1.9's object queries (zeCommandListIsImmediate, ...GetOrdinal, ...GetIndex,
  // ...GetDeviceHandle, zeEventGetEventPool, zeEventPoolGetFlags) return success and write
  // nothing, as Level Zero's own null driver does.
  uint64_t silent_queries = 0;
  // 1: zeInit (and zeInitDrivers) fails glibc's stack check, as a driver built for a newer
  // loader does in an older one's zeInit: "*** stack smashing detected ***", SIGABRT. Only the
  // process that loads the driver with this set dies.
  uint64_t crash_in_init = 0;
  // 1: zeInit (and zeInitDrivers) never returns, as a driver stuck in its start-up.
  uint64_t hang_in_init = 0;
};

// Parsed from the environment on first call; invalid values are reported on stderr and ignored.
const Config& config();

}  // namespace simze
