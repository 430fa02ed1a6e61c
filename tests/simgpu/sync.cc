// Shared lock/condition variable for device-visible state (see sync.h).
#include "sync.h"

#include <chrono>

namespace simze::sync {

std::mutex& mutex() {
  static std::mutex* const m = new std::mutex;  // never destroyed: workers may outlive statics
  return *m;
}

std::condition_variable& changed() {
  static std::condition_variable* const cv = new std::condition_variable;
  return *cv;
}

void publish(const std::function<void()>& update) {
  {
    std::lock_guard lock(mutex());
    update();
  }
  changed().notify_all();
}

bool wait(uint64_t timeout_ns, const std::function<bool()>& ready) {
  std::unique_lock lock(mutex());
  if (ready()) return true;
  if (timeout_ns == 0) return false;
  // Anything beyond a century is "forever" (and would overflow steady_clock arithmetic).
  if (timeout_ns >= (uint64_t{1} << 62)) {
    changed().wait(lock, ready);
    return true;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
  return changed().wait_until(lock, deadline, ready);
}

}  // namespace simze::sync
