// Sleep-then-spin waiting. nanosleep cannot sleep on CLOCK_MONOTONIC_RAW, so sleeps are relative
// and short of the deadline; the spin re-reads RAW and absorbs wake-up latency and clock slew.
#include "precise_wait.h"

#include <sys/prctl.h>
#include <time.h>

#include <algorithm>

#include "device_clock.h"

namespace simze {
namespace {

// Wake-ups after nanosleep land up to ~100 µs late on a loaded VM; spinning through that last
// stretch costs little CPU and makes the end time exact.
constexpr uint64_t kSpinMarginNs = 200'000;
// Bounded sleeps so an abort request (queue destroyed, process exiting) is noticed quickly.
constexpr uint64_t kMaxSleepNs = 5'000'000;

}  // namespace

void make_thread_timing_precise() { prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); }

bool wait_until_raw(uint64_t deadline_raw_ns, const std::atomic<bool>* abort) {
  for (;;) {
    if (abort != nullptr && abort->load(std::memory_order_relaxed)) return false;
    uint64_t now = raw_now_ns();
    if (now >= deadline_raw_ns) return true;
    uint64_t remaining = deadline_raw_ns - now;
    if (remaining > kSpinMarginNs) {
      uint64_t sleep_ns = std::min(remaining - kSpinMarginNs, kMaxSleepNs);
      timespec ts{static_cast<time_t>(sleep_ns / 1'000'000'000),
                  static_cast<long>(sleep_ns % 1'000'000'000)};
      nanosleep(&ts, nullptr);
    } else {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();  // be kind to the sibling hyperthread while spinning
#endif
    }
  }
}

}  // namespace simze
