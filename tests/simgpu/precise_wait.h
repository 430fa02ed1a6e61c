// Waiting until a CLOCK_MONOTONIC_RAW deadline with microsecond accuracy, so simulated kernel
// durations are real elapsed time rather than "at least this long, give or take a timer tick".
#pragma once

#include <atomic>
#include <cstdint>

namespace simze {

// Call once on a thread that will time things: drops its timer slack to the minimum so
// sleeps end when asked (the default slack of 50 µs would dominate short kernels).
void make_thread_timing_precise();

// Sleeps while the deadline is far, then spins on the clock for the last stretch.
// Returns early (false) if *abort becomes true, checked at least every few milliseconds.
bool wait_until_raw(uint64_t deadline_raw_ns, const std::atomic<bool>* abort = nullptr);

}  // namespace simze
