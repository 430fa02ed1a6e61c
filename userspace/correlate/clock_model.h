// Maps between clocks: a device's timestamp ticks and host CLOCK_MONOTONIC (ClockModel, one
// per device), and CLOCK_MONOTONIC_RAW to CLOCK_MONOTONIC (HostClockMap), from samples taken
// during the capture. Level Zero pairs device ticks with CLOCK_MONOTONIC_RAW; BPF stamps
// CLOCK_MONOTONIC; the two drift apart by NTP's frequency corrections.
#pragma once

#include <cstdint>
#include <deque>

#include "model/ze_events.h"

namespace xtrace {

// A device clock as a line through its recent samples: ticks -> CLOCK_MONOTONIC ns. The slope
// starts at the rate the device reports and is fitted once the samples span long enough to
// measure drift; the offset (hours apart, as GPU counters start anywhere) is fitted from the
// first sample on.
class ClockModel {
 public:
  // nominal_hz 0: unknown; the model is then ready only once samples span enough to fit it.
  explicit ClockModel(uint64_t nominal_hz);

  // A simultaneous reading of the device counter (64 bits) and CLOCK_MONOTONIC.
  void AddSample(uint64_t ticks, uint64_t monotonic_ns);

  bool ready() const { return !samples_.empty() && ns_per_tick_ > 0; }
  uint64_t TicksToMonotonic(uint64_t ticks) const;
  uint64_t MonotonicToTicks(uint64_t monotonic_ns) const;
  // CLOCK_MONOTONIC of the newest sample (0 before any): mappings of earlier instants are
  // interpolations, later ones extrapolations.
  uint64_t newest_sample_ns() const { return newest_ns_; }

  // Full 64-bit ticks for a kernel timestamp with `valid_bits` bits, known to have been taken
  // at or before host time `not_after_ns` (when the host read it), and no more than one wrap
  // period earlier.
  uint64_t Unwrap(uint64_t timestamp, uint32_t valid_bits, uint64_t not_after_ns) const;

  // The current fit and its residuals, as the log records it.
  ClockFit Fit(uint32_t device, uint64_t now_ns) const;

 private:
  struct Sample {
    uint64_t ticks;
    uint64_t ns;
  };
  void Refit();

  uint64_t nominal_hz_;
  std::deque<Sample> samples_;  // the most recent kWindow, oldest first
  uint64_t newest_ns_ = 0;
  // host_ns = ref_ns_ + (ticks - ref_ticks_) * ns_per_tick_ + intercept_ns_
  uint64_t ref_ticks_ = 0;
  uint64_t ref_ns_ = 0;
  long double ns_per_tick_ = 0;
  long double intercept_ns_ = 0;
  double residual_rms_ns_ = 0;
  double residual_max_ns_ = 0;
};

// CLOCK_MONOTONIC_RAW -> CLOCK_MONOTONIC by interpolating between readings of both.
class HostClockMap {
 public:
  void AddReading(uint64_t monotonic_raw_ns, uint64_t monotonic_ns);
  bool ready() const { return !readings_.empty(); }
  uint64_t RawToMonotonic(uint64_t monotonic_raw_ns) const;

 private:
  struct Reading {
    uint64_t raw;
    uint64_t mono;
  };
  std::deque<Reading> readings_;  // increasing raw; bounded
};

}  // namespace xtrace
