// For unit tests of code that must stay right whatever runs between two of its steps: a
// thread of real-time priority on the same CPU as the code under test wakes every 20-200 µs
// and runs an action, preempting that code wherever it stands, between two of its system
// calls as often as anywhere else. (Two threads on two CPUs rarely meet inside a window of a
// microsecond; a thread that preempts lands in it a fair share of the time, as a loaded
// machine's scheduler does.)
#pragma once

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>

namespace xtrace::testing {

// Calls `step` over and over for `duration` on one CPU while a SCHED_FIFO thread on that CPU
// calls `act` every 20-200 µs (`*acts` counts them). "" when done, or why it could not be
// (setting the affinity or the real-time policy needs CAP_SYS_NICE).
inline std::string RunPreempted(const std::function<void()>& step, const std::function<void()>& act,
                                std::chrono::milliseconds duration, uint64_t* acts = nullptr) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  std::atomic<int> state{0};  // 0 starting, 1 running, 2 done
  std::string why, why_stepper;
  uint64_t count = 0;
  std::thread preempter([&] {
    sched_param rt{};
    rt.sched_priority = 1;
    if (int e = pthread_setaffinity_np(pthread_self(), sizeof(one), &one); e != 0) {
      why = std::string("pthread_setaffinity_np: ") + std::strerror(e);
    } else if (int e2 = pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt); e2 != 0) {
      why = std::string("pthread_setschedparam(SCHED_FIFO): ") + std::strerror(e2);
    }
    if (!why.empty()) {
      state.store(2);
      return;
    }
    std::minstd_rand rng(20);
    state.store(1);
    while (state.load() == 1) {
      const timespec pause{0, 20'000 + static_cast<long>(rng() % 180'000)};
      nanosleep(&pause, nullptr);
      if (state.load() != 1) break;
      act();
      ++count;
    }
  });
  std::thread stepper([&] {
    if (int e = pthread_setaffinity_np(pthread_self(), sizeof(one), &one); e != 0) {
      why_stepper = std::string("pthread_setaffinity_np: ") + std::strerror(e);
      state.store(2);
      return;
    }
    while (state.load() == 0) std::this_thread::yield();
    const auto end = std::chrono::steady_clock::now() + duration;
    while (state.load() == 1 && std::chrono::steady_clock::now() < end) step();
    state.store(2);
  });
  stepper.join();
  preempter.join();
  if (acts) *acts = count;
  return why.empty() ? why_stepper : why;
}

}  // namespace xtrace::testing
