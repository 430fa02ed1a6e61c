// Ground truth: what really ran on the simulated GPU and when, one line per executed kernel or
// memory operation, so tests can check a tracer's reconstruction against the truth.
// Format (tab-separated, one record per line; documented in README.md):
//   kind name start_mono_ns end_mono_ns start_ticks end_ticks queue submission
//   pid device cmdlist submit_mono_ns submit_tid bytes
#pragma once

#include <cstdint>
#include <string_view>

#include "device_clock.h"

namespace simze {

struct GroundTruthRecord {
  std::string_view kind;  // kernel | copy | copy_region | fill | host_function
  std::string_view name;  // kernel name, or the API function for memory operations
  HostInstant start, end;
  uint64_t start_ticks, end_ticks;  // full 64-bit device ticks
  uintptr_t queue;                  // command queue handle, or the immediate command list
  uint64_t submission;              // per-process submission number (1, 2, ...)
  uint32_t device;                  // device index
  uintptr_t cmdlist;                // command list handle
  uint64_t submit_mono_ns;          // when the submitting API call issued its exec ioctl
  int submit_tid;                   // thread that submitted
  uint64_t bytes;                   // memory operations: bytes moved; kernels: 0
};

bool ground_truth_enabled();
// Thread- and process-safe: each record is one write(2) to an O_APPEND file, so it is in the
// file before the command's completion is signalled and survives a crash right after.
void ground_truth_write(const GroundTruthRecord& r);

}  // namespace simze
