// TSC to CLOCK_MONOTONIC by xtrace's own readings (tsc_clock.h).
#include "capture/sources/tsc_clock.h"

#include <sched.h>
#include <time.h>
#include <x86intrin.h>

#include <cstdlib>
#include <thread>

#include "base/read_file.h"

namespace xtrace {
namespace {

// Readings kept: ten seconds at xtrace's drain period, more than any record waits.
constexpr size_t kMaxReadings = 1024;
// How far past the last reading a record may be (it was read before that reading: only the
// bracket's own width, with room for a record stamped on another CPU).
constexpr uint64_t kFutureSlackNs = 1'000'000;
// Per-CPU disagreement beyond which the TSC is not used.
constexpr double kCpuToleranceNs = 2000;

struct Bracketed {
  uint64_t tsc, ns;
};

// The tightest of a few (rdtsc, clock_gettime, rdtsc) brackets: a preempted one is wide.
Bracketed Read() {
  Bracketed best{};
  uint64_t width = UINT64_MAX;
  for (int i = 0; i < 16; ++i) {
    const uint64_t a = __rdtsc();
    const uint64_t ns = TscClock::MonotonicNs();
    const uint64_t b = __rdtsc();
    if (b - a < width) {
      width = b - a;
      best = {a + (b - a) / 2, ns};
    }
  }
  return best;
}

bool HasCpuFlags() {
  const std::string info = ReadWholeFile("/proc/cpuinfo").value_or("");
  return info.find(" constant_tsc") != std::string::npos &&
         info.find(" nonstop_tsc") != std::string::npos;
}

}  // namespace

uint64_t TscClock::ReadTsc() { return __rdtsc(); }

uint64_t TscClock::MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

uint32_t TscClock::ChooseClock(std::string* why) {
  if (!HasCpuFlags()) {
    *why = "the CPU has no invariant TSC (constant_tsc, nonstop_tsc)";
    return XT_ITT_CLOCK_MONOTONIC;
  }
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    *why = "cannot read this thread's CPUs";
    return XT_ITT_CLOCK_MONOTONIC;
  }
  // On a thread of its own, so xtrace's main thread keeps its affinity whatever happens.
  uint32_t choice = XT_ITT_CLOCK_TSC;
  std::thread check([&] {
    const Bracketed r0 = Read();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const Bracketed r1 = Read();
    if (r1.tsc <= r0.tsc) {
      *why = "the TSC did not advance";
      choice = XT_ITT_CLOCK_MONOTONIC;
      return;
    }
    const double slope = double(r1.ns - r0.ns) / double(r1.tsc - r0.tsc);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &allowed)) continue;
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      if (sched_setaffinity(0, sizeof(one), &one) != 0) continue;
      const Bracketed r = Read();
      const double predicted = double(r1.ns) + (double(r.tsc) - double(r1.tsc)) * slope;
      if (std::abs(double(r.ns) - predicted) > kCpuToleranceNs) {
        *why = "the TSC of CPU " + std::to_string(cpu) + " is " +
               std::to_string(int64_t(double(r.ns) - predicted)) + " ns off CPU 0's";
        choice = XT_ITT_CLOCK_MONOTONIC;
        return;
      }
    }
  });
  check.join();
  return choice;
}

TscClock::TscClock(uint32_t clock) : clock_(clock) {
  if (clock_ != XT_ITT_CLOCK_TSC) {
    Sample();
    return;
  }
  const Bracketed r0 = Read();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const Bracketed r1 = Read();
  readings_.push_back({r0.tsc, r0.ns});
  readings_.push_back({r1.tsc, r1.ns});
}

uint64_t TscClock::Now() const { return clock_ == XT_ITT_CLOCK_TSC ? ReadTsc() : MonotonicNs(); }

uint64_t TscClock::UnitsFor(uint64_t ns) const {
  if (clock_ != XT_ITT_CLOCK_TSC) return ns;
  const Reading& a = readings_.front();
  const Reading& b = readings_.back();
  return uint64_t(double(ns) * double(b.tsc - a.tsc) / double(b.ns - a.ns));
}

void TscClock::Sample() {
  last_pair_.valid = false;
  if (clock_ != XT_ITT_CLOCK_TSC) {
    const uint64_t now = MonotonicNs();
    if (readings_.empty()) readings_.push_back({now, now});
    else readings_.back() = {now, now};  // the identity needs only the range: first and last
    if (readings_.size() == 1) readings_.push_back({now, now});
    return;
  }
  const Bracketed r = Read();
  if (readings_.size() >= 2 && r.ns - readings_[readings_.size() - 2].ns < kMinSpacingNs) {
    readings_.back() = {r.tsc, r.ns};  // too close to the one before: replace the newest
    return;
  }
  readings_.push_back({r.tsc, r.ns});
  if (readings_.size() > kMaxReadings) readings_.pop_front();
}

std::optional<uint64_t> TscClock::ToMonotonic(uint64_t raw) const {
  if (readings_.size() < 2) return std::nullopt;
  const Reading& first = readings_.front();
  const Reading& last = readings_.back();
  if (clock_ != XT_ITT_CLOCK_TSC) {
    if (raw < first.ns || raw > last.ns + kFutureSlackNs) return std::nullopt;
    return raw;
  }
  if (raw < first.tsc) return std::nullopt;
  // The pair of readings around `raw` (or the last two, slightly extrapolated): the one used
  // last when it holds `raw` (the same pair the search finds: readings only grow in time).
  auto& pair = last_pair_;
  if (!pair.valid || raw < pair.a.tsc || (!pair.newest && raw >= pair.b.tsc)) {
    size_t hi = readings_.size() - 1;
    if (raw <= last.tsc) {
      size_t lo_i = 0;
      while (hi - lo_i > 1) {
        const size_t mid = (lo_i + hi) / 2;
        (readings_[mid].tsc <= raw ? lo_i : hi) = mid;
      }
    }
    pair.a = readings_[hi - 1];
    pair.b = readings_[hi];
    pair.newest = hi == readings_.size() - 1;
    pair.valid = true;
    pair.ns_per_unit = pair.b.tsc > pair.a.tsc
                           ? double(pair.b.ns - pair.a.ns) / double(pair.b.tsc - pair.a.tsc)
                           : 0;
  }
  const Reading& a = pair.a;
  if (pair.b.tsc <= a.tsc) return std::nullopt;
  const double ns = double(a.ns) + double(raw - a.tsc) * pair.ns_per_unit;
  if (ns > double(last.ns + kFutureSlackNs)) return std::nullopt;
  return uint64_t(ns);
}

}  // namespace xtrace
