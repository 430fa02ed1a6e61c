// What a command list records: one Command per append, executed later by a queue worker.
// Commands hold raw pointers to events and memory, as GPU commands hold addresses; the API
// contract keeps those alive until execution completes.
#pragma once

#include <level_zero/ze_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "module_format.h"

namespace simze {

struct Event;

struct LaunchKernel {
  std::shared_ptr<const KernelSpec> kernel;  // shared: survives zeKernelDestroy after append
  ze_group_count_t groups{};
  const ze_group_count_t* indirect_groups = nullptr;  // read when executed (device memory)
  bool cooperative = false;
};

// zeCommandListAppendLaunchMultipleKernelsIndirect: count and arguments read when executed.
struct LaunchMultipleKernels {
  std::vector<std::shared_ptr<const KernelSpec>> kernels;
  const uint32_t* count = nullptr;
  const ze_group_count_t* arguments = nullptr;
};

struct MemoryCopy {
  void* dst;
  const void* src;
  size_t size;
  const char* api;  // which append produced it, for ground truth
};

struct MemoryCopyRegion {
  void* dst;
  ze_copy_region_t dst_region;
  uint32_t dst_pitch, dst_slice_pitch;
  const void* src;
  ze_copy_region_t src_region;
  uint32_t src_pitch, src_slice_pitch;
};

struct MemoryFill {
  void* dst;
  std::vector<uint8_t> pattern;  // copied at append time, as the spec allows the caller to reuse it
  size_t size;
};

struct Barrier {};  // in-order execution makes barriers pure wait/signal points

struct SignalEvent {};  // the command's own signal event is the one to signal
struct ResetEvent {
  Event* event;
};
struct WriteGlobalTimestamp {
  uint64_t* dst;
};
struct QueryKernelTimestamps {
  std::vector<Event*> events;
  void* dst;
  std::vector<size_t> offsets;  // empty: results packed back to back
};

// zeCommandListAppendHostFunction: the engine calls function(user_data) when it reaches it,
// and goes on once it returns.
struct HostFunction {
  void (*function)(void*);
  void* user_data;
};

using CommandBody = std::variant<LaunchKernel, LaunchMultipleKernels, MemoryCopy, MemoryCopyRegion,
                                 MemoryFill, Barrier, SignalEvent, ResetEvent, WriteGlobalTimestamp,
                                 QueryKernelTimestamps, HostFunction>;

struct Command {
  CommandBody body;
  std::vector<Event*> waits;  // all must be signalled before the command starts
  Event* signal = nullptr;    // signalled (with start/end timestamps) when it completes
};

// An immutable snapshot of a closed command list: a queue may execute it while the
// application resets and re-records the list.
struct Recording {
  std::vector<Command> commands;
  uintptr_t list_handle = 0;
};

}  // namespace simze
