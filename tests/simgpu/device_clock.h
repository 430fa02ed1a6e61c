// The simulated GPU's timestamp counter, derived from CLOCK_MONOTONIC_RAW (the host clock
// Intel's driver pairs GPU timestamps with), plus host clock sampling helpers.
#pragma once

#include <cstdint>

namespace simze {

uint64_t raw_now_ns();   // CLOCK_MONOTONIC_RAW
uint64_t mono_now_ns();  // CLOCK_MONOTONIC (what BPF's bpf_ktime_get_ns reads)

// One instant seen on both host clocks. The MONOTONIC value is the midpoint of two reads that
// bracket the RAW read, so ground truth in CLOCK_MONOTONIC is as close as the clocks allow.
struct HostInstant {
  uint64_t raw_ns;
  uint64_t mono_ns;
};
HostInstant sample_host();

// ticks = offset + (raw_ns - origin) * hz * (1 + drift_ppm / 1e6) / 1e9, modulo 2^64.
class DeviceClock {
 public:
  // Kernel timestamps keep only this many low bits (kernelTimestampValidBits), like Intel's.
  static constexpr uint32_t kKernelValidBits = 32;
  static constexpr uint64_t kKernelMask = (uint64_t{1} << kKernelValidBits) - 1;
  static constexpr uint32_t kGlobalValidBits = 64;

  DeviceClock(uint64_t hz, int64_t offset_ticks, uint64_t origin_raw_ns, double drift_ppm);

  uint64_t ticks_at(uint64_t raw_ns) const;
  uint64_t now() const { return ticks_at(raw_now_ns()); }
  uint64_t hz() const { return hz_; }  // nominal rate, what the device reports

 private:
  uint64_t hz_;
  int64_t offset_;
  uint64_t origin_;
  __int128 rate_;  // effective ticks per second, scaled by 1e9 (drift resolved to 1e-9)
};

}  // namespace simze
