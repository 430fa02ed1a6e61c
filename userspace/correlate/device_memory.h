// Level Zero allocations of the traced processes: each zeMemAlloc* until its zeMemFree, with
// running totals per device (device and shared memory, all processes together) and per
// process (host memory), reported as MemoryUsage events whenever a total changes.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>

#include "correlate/pid_handle.h"
#include "correlate/ze_devices.h"
#include "model/event.h"

namespace xtrace {

class EventSink;

class DeviceMemoryTracker {
 public:
  DeviceMemoryTracker(EventSink& sink, const ZeDeviceTable& devices)
      : sink_(sink), devices_(devices) {}

  void OnCall(const ApiCall& call);

  size_t live_allocations() const { return allocations_.size(); }
  // Frees of pointers allocated before the capture began (their size is unknown).
  uint64_t unknown_frees() const { return unknown_frees_; }

 private:
  enum class Kind : uint8_t { kDevice, kShared, kHost };
  struct Allocation {
    uint64_t size;
    Kind kind;
    uint32_t device;
  };
  struct Totals {
    uint64_t device_bytes = 0, shared_bytes = 0, host_bytes = 0;
  };
  void Report(uint64_t time_ns, uint32_t pid, const Allocation& a);
  // The running total `a` counts toward.
  uint64_t& TotalOf(uint32_t pid, const Allocation& a);
  void Allocated(uint32_t pid, uint64_t time_ns, uint64_t ptr, const Allocation& a);
  // Forgets the allocation at `ptr`; false if the capture never saw it made.
  bool Freed(uint32_t pid, uint64_t time_ns, uint64_t ptr);

  EventSink& sink_;
  const ZeDeviceTable& devices_;
  std::unordered_map<PidHandle, Allocation, PidHandleHash> allocations_;
  std::map<uint32_t, Totals> per_device_;  // device and shared memory
  std::map<uint32_t, Totals> per_process_;  // host memory
  uint64_t unknown_frees_ = 0;
};

}  // namespace xtrace
