// xtrace's own Level Zero (device_clock_sampler.h) runs a driver's code inside xtrace: a driver
// that crashes or hangs in its start-up would take the capture with it (one built for a newer
// loader smashes the stack of bookworm's zeInit, and the process aborts). So the same start-up
// is tried first in a child process, xtrace itself run again with a hidden command, bounded in
// time: only when the child came through is Level Zero started in xtrace's own process. The
// child's death or hang leaves the capture without what xtrace's own Level Zero gives (device
// clock readings, the devices and their engines, where drivers keep the functions they hand
// out), and says so in one line that names the driver, the call and what happened.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace xtrace {

// The hidden command the child runs: `xtrace __try-own-level-zero`, its report on fd 3.
inline constexpr std::string_view kOwnLevelZeroTrialCommand = "__try-own-level-zero";

// How long the child may take: a driver's start-up takes well under a second even on nodes
// with many GPUs; a child still running then is taken to hang.
inline constexpr uint64_t kOwnLevelZeroTrialBoundNs = 10'000'000'000;

// Starts the trial in the background, once per xtrace process (its verdict stands for the
// process's life, as the loader's zeInit does): called early, it runs while the capture loads
// its programs. Does nothing when it has started already.
void StartOwnLevelZeroTrial();

// Waits for the trial (starting it if nobody did) and returns its verdict: empty when xtrace's
// own Level Zero may be started, else the line that says why not and what the capture loses.
std::optional<std::string> OwnLevelZeroTrialFailure();

// The hidden command's body, in the child: the start-up xtrace's own Level Zero makes (the
// driver and device enumeration, the functions the drivers hand out, one clock reading),
// naming each call on fd 3 before it is made, "done" after the last. A fatal signal writes
// the child's memory map there before it kills the child, for the parent to name the driver.
int RunOwnLevelZeroTrial();

// How the child ended, and what it wrote (`report`: its fd 3; `err`: the end of its stderr;
// `maps`: its memory map when it died or was killed), made into the verdict's line; empty for
// a child that came through. Apart for its unit test.
struct TrialEnd {
  bool timed_out = false;
  int signal = 0;       // the signal that killed it, 0 if it exited
  int exit_status = 0;  // when it exited
  std::string report;
  std::string err;
  std::string maps;
  std::string alt_drivers;  // ZE_ENABLE_ALT_DRIVERS, to name a driver the map does not show
};
std::optional<std::string> TrialVerdict(const TrialEnd& end);

}  // namespace xtrace
