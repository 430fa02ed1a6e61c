// Synchronous collection of the workloads' control signals (see control_signals.h).
#include "control_signals.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace xtrace::workloads {
namespace {

sigset_t control_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

void block_control_signals() {
  sigset_t set = control_set();
  if (pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) {
    std::perror("pthread_sigmask");
    std::exit(1);
  }
}

ControlSignal wait_control_signal(std::optional<std::chrono::nanoseconds> timeout) {
  sigset_t set = control_set();
  for (;;) {
    int sig;
    if (timeout) {
      auto ns = timeout->count() < 0 ? 0 : timeout->count();
      timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
      sig = sigtimedwait(&set, nullptr, &ts);
    } else {
      sig = sigwaitinfo(&set, nullptr);
    }
    if (sig == SIGUSR1) return ControlSignal::kRound;
    if (sig == SIGTERM || sig == SIGINT) return ControlSignal::kStop;
    if (sig < 0 && errno == EAGAIN) return ControlSignal::kTimeout;
    // EINTR (e.g. SIGSTOP/SIGCONT from a debugger or tracer): wait again. The full timeout
    // restarts, which only lengthens a wait and never shortens it.
    if (sig < 0 && errno != EINTR) {
      std::perror("sigwait");
      std::exit(1);
    }
  }
}

}  // namespace xtrace::workloads
