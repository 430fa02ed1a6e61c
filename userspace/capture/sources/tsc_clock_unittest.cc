// Tests of TscClock (tsc_clock.cc): TSC readings map onto CLOCK_MONOTONIC as closely as a
// clock_gettime between two rdtsc can tell, and times outside the readings are refused.
#include "capture/sources/tsc_clock.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <thread>
#include <vector>

namespace xtrace {
namespace {

TEST(TscClock, ChoosesAClockAndSaysWhyNotTheTsc) {
  std::string why;
  const uint32_t clock = TscClock::ChooseClock(&why);
  EXPECT_TRUE(clock == XT_ITT_CLOCK_TSC || clock == XT_ITT_CLOCK_MONOTONIC);
  EXPECT_EQ(why.empty(), clock == XT_ITT_CLOCK_TSC) << why;
}

TEST(TscClock, TscTimesMapOntoMonotonicBetweenReadings) {
  TscClock clock(XT_ITT_CLOCK_TSC);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // The tightest of a few (rdtsc, clock_gettime, rdtsc) brackets: the machine is shared.
  uint64_t tsc = 0, mono = 0, width = UINT64_MAX;
  for (int i = 0; i < 64; ++i) {
    const uint64_t a = TscClock::ReadTsc(), m = TscClock::MonotonicNs(), b = TscClock::ReadTsc();
    if (b - a < width) width = b - a, tsc = a + (b - a) / 2, mono = m;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  clock.Sample();
  const auto mapped = clock.ToMonotonic(tsc);
  ASSERT_TRUE(mapped);
  // On this machine kind the two clocks stay within ~10 ns of a line over seconds.
  EXPECT_LT(std::llabs(static_cast<long long>(*mapped) - static_cast<long long>(mono)), 200);
  EXPECT_FALSE(clock.ToMonotonic(1));  // before the first reading: not this capture's
  EXPECT_FALSE(clock.ToMonotonic(TscClock::ReadTsc() + clock.UnitsFor(1'000'000'000)));
  // A lease of a second is about a second of TSC ticks.
  const double ns_per_tick = double(*clock.ToMonotonic(tsc + clock.UnitsFor(10'000'000)) - *mapped) / 1e7;
  EXPECT_NEAR(ns_per_tick, 1.0, 0.01);
}

TEST(TscClock, MonotonicTimesPassThroughWithinTheReadings) {
  TscClock clock(XT_ITT_CLOCK_MONOTONIC);
  const uint64_t t = TscClock::MonotonicNs();
  clock.Sample();
  EXPECT_EQ(clock.ToMonotonic(t), t);
  EXPECT_FALSE(clock.ToMonotonic(t - 1'000'000'000));
  EXPECT_EQ(clock.UnitsFor(5), 5u);
}


// ToMonotonic keeps the pair of readings it used last: in whatever order times are asked
// for, each maps as the search over every reading maps it (the same pair, the same value).
TEST(TscClock, TimesMapTheSameInAnyOrder) {
  TscClock clock(XT_ITT_CLOCK_TSC);
  const uint64_t from = TscClock::ReadTsc();
  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(12));
    clock.Sample();
  }
  const uint64_t to = TscClock::ReadTsc();
  std::vector<uint64_t> raws;
  for (uint64_t i = 0; i <= 200; ++i) raws.push_back(from + (to - from) * i / 200);
  std::vector<std::optional<uint64_t>> ascending;
  for (uint64_t raw : raws) ascending.push_back(clock.ToMonotonic(raw));
  for (size_t i = raws.size(); i-- > 0;) EXPECT_EQ(clock.ToMonotonic(raws[i]), ascending[i]) << i;
  for (size_t i = 0; i < raws.size(); ++i) {
    const size_t j = i % 2 ? raws.size() - 1 - i / 2 : i / 2;  // outermost first, inward
    EXPECT_EQ(clock.ToMonotonic(raws[j]), ascending[j]) << j;
  }
  for (size_t i = 1; i < ascending.size(); ++i) {
    ASSERT_TRUE(ascending[i - 1] && ascending[i]) << i;  // all within the readings
    EXPECT_LE(*ascending[i - 1], *ascending[i]) << i;
  }
}

}  // namespace
}  // namespace xtrace
