// Steps integration tests of running captures share: waiting for xtrace to attach, stopping
// it, ending signal-driven workloads, and looking at a process's loader from outside (where
// it is mapped from, and how many uprobe breakpoints its text holds).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "base/status.h"
#include "subprocess.h"

namespace xtrace::testing {

// Waits until xtrace has said it attached to every pid in `pids` (in any order).
bool WaitAttached(Subprocess& xtrace, const std::vector<uint32_t>& pids,
                  std::chrono::milliseconds timeout);

// Ends a capture with SIGINT; true if it exited with status 0.
bool StopCapture(Subprocess& xtrace);

// One attach of a capture to a target that is waiting to start: `xtrace_argv` (an attach of
// `pid`) runs until it says it attached, the target is sent "go" on its stdin, and once the
// target printed "done" (within `done_timeout`) and lingered a second for the capture to read
// its last records, the capture is stopped with SIGINT and the target's exit is awaited.
// Returns xtrace's stderr, or an error naming the step that failed and what was said.
Result<std::string> AttachRunToDoneAndStop(Subprocess& target, uint32_t pid,
                                           const std::vector<std::string>& xtrace_argv,
                                           std::chrono::milliseconds done_timeout);

// The state letter of /proc/PID/stat ('T' stopped, 'S' sleeping, ...); 0 once it is gone.
char ProcessState(pid_t pid);
// Waits up to `timeout` for `pid` to be in state `want`.
bool WaitState(pid_t pid, char want, std::chrono::milliseconds timeout);

// Ends workloads that wait for signals: SIGTERM, then their exit.
void EndWorkloads(std::initializer_list<Subprocess*> workloads);

// The path of the Level Zero loader `pid` maps, as its own mount namespace names it.
std::string LoaderPathOf(uint32_t pid);

// How many uprobe breakpoints sit in the text of the loader `pid` maps: int3 bytes in its
// memory where the file (read through /proc/PID/root, so a container's own copy) has another
// byte. A process holds one exactly where a probe applies to it, and pays a trap on every call
// through it.
Result<size_t> LoaderBreakpoints(uint32_t pid);

// LoaderBreakpoints until it is 0 or `timeout` passed: the breakpoints left then. A probe goes
// when the kernel releases its link, which need not be done when xtrace's close returns.
Result<size_t> WaitForNoLoaderBreakpoints(uint32_t pid, std::chrono::milliseconds timeout);

}  // namespace xtrace::testing
