// How tests drive the workloads: SIGUSR1 asks for one more round, SIGTERM/SIGINT ask for a
// clean exit. Signals are blocked and collected synchronously, so no work runs in a handler.
#pragma once

#include <chrono>
#include <optional>

namespace xtrace::workloads {

enum class ControlSignal {
  kTimeout,  // nothing arrived in time
  kRound,    // SIGUSR1
  kStop,     // SIGTERM or SIGINT
};

// Blocks SIGUSR1, SIGTERM and SIGINT in the calling thread. Call first thing in main():
// threads started later (ours and the driver's) inherit the mask, so the signals stay
// pending until the main thread collects them instead of killing an arbitrary thread.
void block_control_signals();

// Waits for a control signal; std::nullopt waits forever, a zero timeout only polls.
ControlSignal wait_control_signal(std::optional<std::chrono::nanoseconds> timeout);

}  // namespace xtrace::workloads
