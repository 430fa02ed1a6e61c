// Clock fitting by least squares over a sliding window of samples; see clock_model.h.
#include "correlate/clock_model.h"

#include <algorithm>
#include <cmath>

namespace xtrace {
namespace {

// Samples kept per device (one a second from xtrace, plus the target's own): a minute of
// history follows drift as it changes without letting old samples pull the line.
constexpr size_t kWindow = 64;
// Below this span the slope is not fitted: two samples 10 ms apart with 100 ns of jitter
// would give a rate off by 10 ppm, worse than the device's own figure.
constexpr uint64_t kMinSpanForRateNs = 500'000'000;
// HostClockMap readings kept (one a second), and how far apart they must be: a slope taken
// between readings microseconds apart (one per device, back to back) turns their nanoseconds
// of jitter into a rate error that extrapolation multiplies.
constexpr size_t kHostReadings = 4096;
constexpr uint64_t kMinReadingSpacingNs = 500'000'000;

int64_t Diff(uint64_t a, uint64_t b) { return static_cast<int64_t>(a - b); }

}  // namespace

ClockModel::ClockModel(uint64_t nominal_hz)
    : nominal_hz_(nominal_hz), ns_per_tick_(nominal_hz ? 1e9L / nominal_hz : 0) {}

void ClockModel::AddSample(uint64_t ticks, uint64_t monotonic_ns) {
  samples_.push_back({ticks, monotonic_ns});
  if (samples_.size() > kWindow) samples_.pop_front();
  newest_ns_ = std::max(newest_ns_, monotonic_ns);
  Refit();
}

void ClockModel::Refit() {
  // Centre on the newest sample so the sums stay small and exact in long double.
  const Sample ref = samples_.back();
  ref_ticks_ = ref.ticks;
  ref_ns_ = ref.ns;
  const size_t n = samples_.size();
  long double sx = 0, sy = 0, sxx = 0, sxy = 0;
  uint64_t oldest_ns = ref.ns;
  for (const Sample& s : samples_) {
    const long double x = Diff(s.ticks, ref.ticks);
    const long double y = Diff(s.ns, ref.ns);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
    oldest_ns = std::min(oldest_ns, s.ns);
  }
  const long double var = sxx - sx * sx / n;
  if (n >= 2 && ref.ns - oldest_ns >= kMinSpanForRateNs && var > 0) {
    ns_per_tick_ = (sxy - sx * sy / n) / var;
  } else {
    ns_per_tick_ = nominal_hz_ ? 1e9L / nominal_hz_ : 0;
  }
  if (ns_per_tick_ <= 0) return;  // no rate yet: not ready
  intercept_ns_ = (sy - ns_per_tick_ * sx) / n;
  long double sum_sq = 0, worst = 0;
  for (const Sample& s : samples_) {
    const long double predicted = intercept_ns_ + Diff(s.ticks, ref.ticks) * ns_per_tick_;
    const long double r = Diff(s.ns, ref.ns) - predicted;
    sum_sq += r * r;
    worst = std::max(worst, std::fabs(r));
  }
  residual_rms_ns_ = static_cast<double>(std::sqrt(sum_sq / n));
  residual_max_ns_ = static_cast<double>(worst);
}

uint64_t ClockModel::TicksToMonotonic(uint64_t ticks) const {
  const long double ns = intercept_ns_ + Diff(ticks, ref_ticks_) * ns_per_tick_;
  return ref_ns_ + static_cast<uint64_t>(static_cast<int64_t>(std::llround(ns)));
}

uint64_t ClockModel::MonotonicToTicks(uint64_t monotonic_ns) const {
  const long double ticks = (Diff(monotonic_ns, ref_ns_) - intercept_ns_) / ns_per_tick_;
  return ref_ticks_ + static_cast<uint64_t>(static_cast<int64_t>(std::llround(ticks)));
}

uint64_t ClockModel::Unwrap(uint64_t timestamp, uint32_t valid_bits, uint64_t not_after_ns) const {
  if (valid_bits == 0 || valid_bits >= 64) return timestamp;
  const uint64_t mask = (uint64_t{1} << valid_bits) - 1;
  // A margin of 0.1 s past the read covers the model's error without risking a whole period.
  const uint64_t latest =
      MonotonicToTicks(not_after_ns) + static_cast<uint64_t>(1e8L / ns_per_tick_);
  return latest - ((latest - timestamp) & mask);
}

ClockFit ClockModel::Fit(uint32_t device, uint64_t now_ns) const {
  ClockFit f;
  f.device = device;
  f.time_ns = now_ns;
  f.hz = ns_per_tick_ > 0 ? static_cast<double>(1e9L / ns_per_tick_) : 0;
  f.nominal_hz = nominal_hz_;
  f.ref_ticks = ref_ticks_;
  f.ref_ns = TicksToMonotonic(ref_ticks_);
  f.residual_rms_ns = residual_rms_ns_;
  f.residual_max_ns = residual_max_ns_;
  f.samples = static_cast<uint32_t>(samples_.size());
  return f;
}

void HostClockMap::AddReading(uint64_t monotonic_raw_ns, uint64_t monotonic_ns) {
  if (!readings_.empty() && monotonic_raw_ns < readings_.back().raw + kMinReadingSpacingNs) return;
  readings_.push_back({monotonic_raw_ns, monotonic_ns});
  if (readings_.size() > kHostReadings) readings_.pop_front();
}

uint64_t HostClockMap::RawToMonotonic(uint64_t raw) const {
  if (readings_.empty()) return raw;
  if (readings_.size() == 1) return raw + (readings_[0].mono - readings_[0].raw);
  // The two readings around `raw` (or the two nearest at either end).
  auto hi = std::lower_bound(readings_.begin(), readings_.end(), raw,
                             [](const Reading& r, uint64_t v) { return r.raw < v; });
  if (hi == readings_.begin()) ++hi;
  if (hi == readings_.end()) --hi;
  const Reading& a = *(hi - 1);
  const Reading& b = *hi;
  const long double slope = static_cast<long double>(Diff(b.mono, a.mono)) / Diff(b.raw, a.raw);
  return a.mono + static_cast<uint64_t>(static_cast<int64_t>(std::llround(Diff(raw, a.raw) * slope)));
}

}  // namespace xtrace
