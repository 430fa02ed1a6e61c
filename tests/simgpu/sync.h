// The one place where device-visible state changes (events, fences, queue progress) and where
// host threads and queue workers wait for such changes, with Level Zero timeout semantics.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

namespace simze::sync {

// A single lock and condition variable for the whole device: waits are rare and short-lived
// compared with kernels, and one domain makes "wait for any of these" trivially correct.
std::mutex& mutex();
std::condition_variable& changed();

// Runs `update` under the lock, then wakes every waiter.
void publish(const std::function<void()>& update);

// Waits until `ready()` (evaluated under the lock) or the timeout passes.
// timeout_ns follows Level Zero: 0 = just test, UINT64_MAX = forever.
bool wait(uint64_t timeout_ns, const std::function<bool()>& ready);

}  // namespace simze::sync
