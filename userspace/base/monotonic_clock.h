// CLOCK_MONOTONIC in nanoseconds: the clock every record's timestamps are taken on (BPF's
// bpf_ktime_get_ns), and so the clock the capture's own deadlines and periods use.
#pragma once

#include <time.h>

#include <cstdint>

namespace xtrace {

inline uint64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

}  // namespace xtrace
