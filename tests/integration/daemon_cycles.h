// Start/stop cycles of a running `xtrace daemon` driven by `xtrace ctl`, with what the daemon
// held before and after: the leak check of the daemon's integration test and the figures of
// the benchmark's daemon section.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "process_resources.h"

namespace xtrace::testing {

struct CycleFigures {
  int cycles = 0;       // completed
  double seconds = 0;   // for all of them
  ProcessResources before, after;        // the daemon's, idle, settled
  BpfObjectCounts system_before, system_after;
  std::string error;    // the first ctl that failed, with its output; empty if none did
};

// Runs `cycles` cycles of `xtrace ctl start START_ARGS...` then `xtrace ctl stop` against the
// daemon (pid `daemon_pid`) listening on `socket`, after `warm_up` cycles that are not
// measured (the allocator's arenas and the kernel's caches settle in the first few). Every
// `progress_every` cycles (0: never) a line on stderr says what the daemon holds then, so a
// long run that is cut short still shows its trend.
CycleFigures RunStartStopCycles(const std::string& xtrace, const std::string& socket,
                                uint32_t daemon_pid, const std::vector<std::string>& start_args,
                                int cycles, int progress_every = 0, int warm_up = 3);

// The daemon's resources once transient descriptors are gone (a ctl client that just exited
// leaves the daemon its end of the connection until the event loop sees the hang-up): the
// least descriptor count of a few samples over half a second.
ProcessResources SettledResources(uint32_t pid);

// Several lines of figures: cycles, time per cycle, before -> after.
std::string Describe(const CycleFigures& f);

}  // namespace xtrace::testing
