// xtrace's own Level Zero: the devices as the loader enumerates them (name, timer rate, kernel
// timestamp width) and readings of their clocks against the host's, taken during a capture to
// fit each device's clock. The loader is opened with dlopen at run time, so xtrace runs (with
// estimated device times only) where Level Zero is absent.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace xtrace {

struct SampledDevice {
  std::string name;
  uint8_t uuid[16] = {};  // ze_device_uuid_t: how a traced process's device is matched to it
  uint64_t timer_hz = 0;
  uint32_t kernel_timestamp_bits = 0;
  // ze_command_queue_group_property_flags_t by ordinal; empty when the driver did not say.
  std::vector<uint32_t> queue_group_flags;
};

struct DeviceClockReading {
  uint32_t device = 0;
  uint64_t ticks = 0;
  uint64_t monotonic_raw_ns = 0;  // as Level Zero reports the instant
  uint64_t monotonic_ns = 0;      // the same instant on CLOCK_MONOTONIC
  uint64_t realtime_ns = 0;       // and on CLOCK_REALTIME
};

class DeviceClockSampler {
 public:
  // Loads libze_loader.so.1, initialises it and lists the GPUs of the first driver that has
  // any. An error says why there is nothing to sample (no loader, no driver, no GPU).
  // `before`, if given, is told the name of each Level Zero call before it is made.
  static Result<std::unique_ptr<DeviceClockSampler>> Open(
      const std::function<void(const char*)>& before = {});
  ~DeviceClockSampler();

  const std::vector<SampledDevice>& devices() const { return devices_; }

  // One reading per device, now.
  std::vector<DeviceClockReading> Read() const;

  // What every driver of this Level Zero hands out for `names` through
  // zeDriverGetExtensionFunctionAddress: each name it knows, with the function's address in
  // this process. Empty where the loader lacks that entry point.
  std::vector<std::pair<std::string, uint64_t>> ExtensionFunctions(
      std::span<const std::string_view> names) const;

 private:
  struct Api;
  DeviceClockSampler() = default;
  static std::vector<uint32_t> QueueGroupFlags(const Api& api, void* device);

  void* library_ = nullptr;
  std::unique_ptr<Api> api_;
  std::vector<void*> handles_;  // ze_device_handle_t, by index
  std::vector<void*> drivers_;  // ze_driver_handle_t, every driver the loader lists
  std::vector<SampledDevice> devices_;
};

}  // namespace xtrace
