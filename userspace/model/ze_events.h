// Level Zero events beyond kernel creation and launch: every other recorded API call, and
// (from correlation) what ran on the device, device clocks and memory in use.
#pragma once

#include <cstdint>
#include <vector>

#include "model/string_table.h"

namespace xtrace {

// A Level Zero call other than zeKernelCreate and the kernel launches: which function (enum
// xt_ze_fn, described in model/ze_api.h, which also names the six arguments), its result and
// its arguments as ze_api.h's table gives them their meaning.
struct ApiCall {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint16_t fn = 0;
  int32_t result = 0;  // ze_result_t
  uint64_t arg[6] = {0, 0, 0, 0, 0, 0};
  bool args_unreadable = false;  // a pointer argument could not be read
  bool truncated = false;        // a list argument was longer than the probe copies
  // Not a call of the process's: an object it made before the attach, as xtrace learned it by
  // asking the process (capture/sources/ze_query.h), written as the creation it stands for (the span
  // is the hold; what the queries could not say is 0).
  bool learned = false;
};

// A recorded call that never returned: its thread exited inside it (pthread_exit or a raw exit
// from a handler, the process killed by a signal, or the process exiting from another
// thread), or was still inside it when the capture stopped. It lasted at least from start_ns
// to end_ns, the thread's exit or the stop; its result and outputs are not known.
struct UnfinishedCall {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;                  // when the thread exited
  StringId function = kEmptyString;     // "zeEventHostSynchronize"
  int32_t signal = 0;                   // the signal that killed the thread; 0: it exited
  bool capture_ended = false;           // still inside the call when the capture stopped
};

// Device indices are positions in zeDeviceGet's list (the collector's and, matched by
// position, the target's). This one means the device was not known (e.g. the command list was
// created before the capture began).
inline constexpr uint32_t kUnknownDevice = 0xffffffff;

// A GPU as xtrace's own Level Zero sees it.
struct DeviceInfo {
  uint32_t device = 0;
  StringId name = kEmptyString;
  uint64_t timer_hz = 0;               // device timestamp ticks per second
  uint32_t kernel_timestamp_bits = 0;  // valid bits of kernel timestamps (they wrap)
  // Each command queue group's ze_command_queue_group_property_flags_t, by ordinal: what
  // kind of engine a queue created on that ordinal runs on. Empty: not known.
  std::vector<uint32_t> queue_group_flags = {};
};

// One reading of a device clock against the host: zeDeviceGetGlobalTimestamps, by xtrace
// itself (pid 0) or by a traced process. Level Zero's host time is CLOCK_MONOTONIC_RAW;
// monotonic_ns is the same instant on CLOCK_MONOTONIC.
struct ClockSample {
  uint32_t device = 0;
  uint32_t pid = 0;
  uint64_t device_ticks = 0;
  uint64_t monotonic_raw_ns = 0;
  uint64_t monotonic_ns = 0;
  uint64_t realtime_ns = 0;  // xtrace's readings: the same instant on CLOCK_REALTIME
};

// The device-to-host clock mapping as fitted at time_ns: host = ref_ns + (ticks - ref_ticks)
// * 1e9 / hz, and how far the samples it was fitted to lie from it.
struct ClockFit {
  uint32_t device = 0;
  uint64_t time_ns = 0;
  double hz = 0;             // fitted tick rate
  uint64_t nominal_hz = 0;   // the rate the device reports
  uint64_t ref_ticks = 0;
  uint64_t ref_ns = 0;
  double residual_rms_ns = 0;
  double residual_max_ns = 0;
  uint32_t samples = 0;
};

// A device engine a traced process submits to: a command queue, or an immediate command list
// (which is its own queue). Emitted before the first operation on it; `track` numbers the
// engines of one device from 1.
struct DeviceQueue {
  uint32_t pid = 0;
  uint32_t device = kUnknownDevice;
  uint64_t handle = 0;
  bool immediate = false;
  uint32_t ordinal = 0;  // command queue group
  uint32_t index = 0;    // queue within the group
  uint32_t track = 0;
  // Made before the attach and never described (its loader cannot be asked): `ordinal` and
  // `index` mean nothing.
  bool engine_unknown = false;
};

// What a device operation is.
// kHostFunction: zeCommandListAppendHostFunction's call, run by the host when the list
// reaches it, drawn on the list's timeline because the list waits for it.
enum class DeviceOpKind : uint8_t { kKernel = 0, kCopy = 1, kFill = 2, kHostFunction = 3 };

// What an append recorded: the part of a device operation that every execution of it shares.
struct AppendedCommand {
  DeviceOpKind kind = DeviceOpKind::kKernel;
  StringId name = kEmptyString;  // kernel name, or the append function for memory operations
  uint64_t kernel = 0;
  uint32_t group_count[3] = {0, 0, 0};
  uint64_t bytes = 0;       // memory operations
  uint64_t signal_event = 0;
  uint32_t append_tid = 0;  // the append that recorded it
  uint64_t append_ns = 0;   // the append's start
};

// One operation run on a device: a kernel or memory operation, once per execution (a regular
// command list executed n times yields n of each of its operations), with what its append
// recorded.
struct DeviceOp : AppendedCommand {
  uint32_t pid = 0;
  uint32_t device = kUnknownDevice;
  uint64_t queue = 0;         // the DeviceQueue handle it ran on
  uint32_t track = 0;         // that DeviceQueue's track
  uint64_t command_list = 0;
  uint64_t id = 0;            // unique in the capture, from 1
  // CLOCK_MONOTONIC. Measured: the kernel timestamps the process read, mapped through the
  // device's clock fit. Estimated: the host-side bounds (submitted at or after start, seen
  // complete at or before end), which contain the true interval.
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  bool measured = false;
  bool completion_seen = true;  // false: no host call saw it complete; end_ns is a guess
  uint64_t start_ticks = 0;   // measured: device ticks, unwrapped to 64 bits
  uint64_t end_ticks = 0;
  // The host calls around it besides the append: the call that submitted it (the append
  // itself on an immediate list, else zeCommandQueueExecuteCommandLists) and the call that
  // saw it complete (a host synchronize, status query or timestamp read).
  uint32_t submit_tid = 0;
  uint64_t submit_ns = 0;   // the submitting call's start
  uint32_t sync_tid = 0;
  uint64_t sync_ns = 0;     // the observing call's end (0: none)
  uint64_t execution = 0;   // regular lists: which execution of the list (from 1); else 0
};

// Memory allocated through Level Zero and not yet freed, after a change: per device (device
// and shared allocations, every traced process together), or per process for host memory
// (device == kUnknownDevice).
struct MemoryUsage {
  uint64_t time_ns = 0;
  uint32_t pid = 0;     // host memory: the process; device memory: 0 (all processes)
  uint32_t device = kUnknownDevice;
  uint64_t device_bytes = 0;
  uint64_t shared_bytes = 0;
  uint64_t host_bytes = 0;
};

}  // namespace xtrace
