// The devices' clocks for the Level Zero source: xtrace's own Level Zero tells the correlator
// which devices there are, where their drivers keep the functions they hand out by pointer,
// and, every second and once at the end, each device's clock against the host's, from which
// the correlator fits the device times of the traced processes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "capture/sources/device_clock_sampler.h"
#include "capture/sources/driver_functions.h"

namespace xtrace {

class StringTable;
class ZeCorrelator;

class DeviceClocks {
 public:
  // Opens xtrace's own Level Zero, notes in `driver_functions` where its drivers keep
  // `driver_function_names`, gives `ze` the devices (their names interned in `strings`) and
  // a first reading. Null, said with `say`, when there is nothing to read (no loader, no
  // GPU): device times are estimated then. A driver that failed the trial of xtrace's own
  // Level Zero (own_level_zero_trial.h) is also a `note` (may be empty) for the log.
  static std::unique_ptr<DeviceClocks> Open(ZeCorrelator& ze, StringTable& strings,
                                            std::span<const std::string_view> driver_function_names,
                                            DriverFunctions& driver_functions,
                                            const std::function<void(const std::string&)>& say,
                                            const std::function<void(const std::string&)>& note);

  // A reading now, at `now_ns` (CLOCK_MONOTONIC).
  void Read(uint64_t now_ns);
  // A reading if the last is `kReadingIntervalNs` old at `now_ns`.
  void ReadIfDue(uint64_t now_ns) {
    if (now_ns - last_reading_ns_ >= kReadingIntervalNs) Read(now_ns);
  }

 private:
  // How often the device clocks are read against the host's.
  static constexpr uint64_t kReadingIntervalNs = 1'000'000'000;

  DeviceClocks(ZeCorrelator& ze, std::unique_ptr<DeviceClockSampler> sampler)
      : ze_(ze), sampler_(std::move(sampler)) {}

  ZeCorrelator& ze_;
  std::unique_ptr<DeviceClockSampler> sampler_;
  uint64_t last_reading_ns_ = 0;
};

}  // namespace xtrace
