// Tests for correlate/clock_model: fitting offset and drift, unwrapping 32-bit kernel
// timestamps, the two host clocks, and residuals.
#include "correlate/clock_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace xtrace {
namespace {

constexpr uint64_t kHz = 19'200'000;
// A device counter hours ahead of the host, running `ppm` fast: ticks at host time ns.
uint64_t Ticks(uint64_t ns, double ppm, uint64_t offset = 48ull << 32) {
  return offset + static_cast<uint64_t>(std::floor(ns * (kHz * (1 + ppm / 1e6)) / 1e9));
}

TEST(ClockModel, OneSampleUsesTheNominalRateAndFitsTheOffset) {
  ClockModel m(kHz);
  EXPECT_FALSE(m.ready());
  const uint64_t t0 = 5'000'000'000'000;
  m.AddSample(Ticks(t0, 0), t0);
  ASSERT_TRUE(m.ready());
  const uint64_t later = t0 + 250'000'000;
  EXPECT_NEAR(double(m.TicksToMonotonic(Ticks(later, 0))), double(later), 60);
  EXPECT_NEAR(double(m.MonotonicToTicks(later)), double(Ticks(later, 0)), 2);
}

TEST(ClockModel, FitsDriftOnceSamplesSpanLongEnough) {
  ClockModel m(kHz);
  const double ppm = 120;
  const uint64_t t0 = 7'000'000'000'000;
  for (int i = 0; i <= 5; ++i) m.AddSample(Ticks(t0 + i * 1'000'000'000ull, ppm), t0 + i * 1'000'000'000ull);
  // Interpolating between samples, and extrapolating a second on: within a tick.
  for (uint64_t at : {t0 + 2'500'000'000ull, t0 + 6'000'000'000ull})
    EXPECT_NEAR(double(m.TicksToMonotonic(Ticks(at, ppm))), double(at), 60) << at;
  const ClockFit fit = m.Fit(3, t0);
  EXPECT_EQ(fit.device, 3u);
  EXPECT_EQ(fit.samples, 6u);
  EXPECT_EQ(fit.nominal_hz, kHz);
  EXPECT_NEAR(fit.hz, kHz * (1 + ppm / 1e6), 1.0);
  EXPECT_LT(fit.residual_max_ns, 60.0);  // a tick is 52 ns
}

TEST(ClockModel, ResidualsShowNoisySamples) {
  ClockModel m(kHz);
  const uint64_t t0 = 1'000'000'000'000;
  for (int i = 0; i < 10; ++i) {
    const uint64_t t = t0 + i * 1'000'000'000ull;
    m.AddSample(Ticks(t, 0), t + (i % 2 ? 5'000 : 0));  // host readings 5 µs late, every other
  }
  const ClockFit fit = m.Fit(0, t0);
  EXPECT_GT(fit.residual_rms_ns, 1'000.0);
  EXPECT_LT(fit.residual_max_ns, 5'000.0);
}

TEST(ClockModel, UnwrapsKernelTimestampsAcrossTheWrap) {
  ClockModel m(kHz);
  // The 32-bit counter wraps 1 s after t0.
  const uint64_t offset = (48ull << 32) - kHz;
  const uint64_t t0 = 9'000'000'000'000;
  m.AddSample(Ticks(t0, 0, offset), t0);
  m.AddSample(Ticks(t0 + 3'000'000'000ull, 0, offset), t0 + 3'000'000'000ull);
  const uint64_t mask = 0xffffffff;
  for (uint64_t kernel_at : {t0 + 900'000'000ull, t0 + 1'100'000'000ull}) {
    const uint64_t full = Ticks(kernel_at, 0, offset);
    // Read 40 ms later, and 100 s later (well within one 223 s period).
    for (uint64_t delay : {40'000'000ull, 100'000'000'000ull}) {
      EXPECT_EQ(m.Unwrap(full & mask, 32, kernel_at + delay), full) << kernel_at << " " << delay;
    }
  }
  EXPECT_EQ(m.Unwrap(12345, 64, t0), 12345u);
}

TEST(ClockModel, UnknownRateNeedsTwoSamplesApart) {
  ClockModel m(0);
  const uint64_t t0 = 2'000'000'000'000;
  m.AddSample(Ticks(t0, 0), t0);
  EXPECT_FALSE(m.ready());
  m.AddSample(Ticks(t0 + 1'000'000'000, 0), t0 + 1'000'000'000);
  ASSERT_TRUE(m.ready());
  EXPECT_NEAR(double(m.TicksToMonotonic(Ticks(t0 + 1'500'000'000, 0))), double(t0 + 1'500'000'000), 60);
}

TEST(HostClockMap, InterpolatesAndExtrapolatesRawToMonotonic) {
  HostClockMap map;
  EXPECT_EQ(map.RawToMonotonic(100), 100u);
  // MONOTONIC runs 50 ppm faster than RAW and started 7 ms ahead.
  auto mono = [](uint64_t raw) { return raw + 7'000'000 + raw / 20'000; };
  for (uint64_t raw = 1'000'000'000'000; raw <= 1'010'000'000'000; raw += 1'000'000'000)
    map.AddReading(raw, mono(raw));
  for (uint64_t raw : {1'004'500'000'000ull, 1'000'000'000'000ull - 500'000'000, 1'012'000'000'000ull})
    EXPECT_NEAR(double(map.RawToMonotonic(raw)), double(mono(raw)), 2) << raw;
}

TEST(HostClockMap, ReadingsTooCloseTogetherDoNotSetTheSlope) {
  HostClockMap map;
  // Two readings 1.5 µs apart whose jitter would say MONOTONIC runs 0.03% fast.
  map.AddReading(1'000'000'000'000, 1'000'226'070'120);
  map.AddReading(1'000'000'001'542, 1'000'226'071'663);
  // 50 ms later the offset, not a slope from those two, holds.
  EXPECT_NEAR(double(map.RawToMonotonic(1'000'050'000'000)), 1'000'276'070'120.0, 5);
}

}  // namespace
}  // namespace xtrace
