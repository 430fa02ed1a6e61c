// The Level Zero part of correlation: the device handle table, the device timeline with its
// clock models, and allocation totals, fed with host calls by the Correlator and with device
// facts and clock readings by xtrace's own Level Zero (capture/sources/device_clock_sampler).
#pragma once

#include <cstdint>
#include <vector>

#include "correlate/device_memory.h"
#include "correlate/device_timeline.h"
#include "correlate/ze_devices.h"

namespace xtrace {

class ZeCorrelator {
 public:
  ZeCorrelator(StringTable& strings, EventSink& sink);

  void OnLaunch(const KernelLaunch& launch) { timeline_.OnLaunch(launch); }
  void OnCall(const ApiCall& call, const DecodedZeExecute* execute);
  void OnSubmissionFence(uint32_t pid, uint32_t tid, uint64_t ioctl_start_ns,
                         uint64_t signaled_ns) {
    timeline_.OnSubmissionFence(pid, tid, ioctl_start_ns, signaled_ns);
  }

  // xtrace's own view: its devices (in zeDeviceGet order) and clock readings.
  // `uuids`: each device's UUID, by number, to match the traced processes' devices by (empty:
  // unknown; they are matched by position).
  void OnDevices(const std::vector<DeviceInfo>& devices, std::vector<DeviceUuid> uuids = {});
  void OnClockReading(uint32_t device, uint64_t ticks, uint64_t monotonic_raw_ns,
                      uint64_t monotonic_ns, uint64_t realtime_ns);
  void OnHostClocks(uint64_t monotonic_raw_ns, uint64_t monotonic_ns);
  // After a round of clock readings: writes the clock fits and what waited for them.
  void AfterClockReadings(uint64_t now_ns);
  // Capture end: everything still held goes out.
  void Finish(uint64_t now_ns);

  const TimelineStats& timeline_stats() const { return timeline_.stats(); }
  const DeviceMemoryTracker& memory() const { return memory_; }

 private:
  EventSink& sink_;
  ZeDeviceTable devices_;
  DeviceTimeline timeline_;
  DeviceMemoryTracker memory_;
};

}  // namespace xtrace
