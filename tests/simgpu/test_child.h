// Test helpers: run a scenario in a fresh copy of the test binary (its own environment, so its
// own simulated-driver configuration), optionally under ptrace to record the syscalls of its
// main thread: exec ioctls with their argument structs, and marker syscalls the scenario makes
// between API calls. This observes what a syscall tracer (eBPF raw_tp/sys_enter) would see.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace simgpu_test {

// A scenario calls this between API calls; a tracing parent sees it as a marker.
void syscall_marker(long id);

struct TracedCall {
  enum Kind { kIoctl, kMarker } kind = kIoctl;
  long marker = 0;              // kMarker
  unsigned long cmd = 0;        // kIoctl: request number
  int fd = -1;                  // kIoctl
  std::string fd_target;        // readlink of /proc/<pid>/fd/<fd> at the time of the call
  std::vector<uint8_t> arg;     // first 64 bytes at the argument pointer (empty if unreadable)
  std::vector<uint8_t> i915_objects;  // i915: the exec object array buffers_ptr points at
};

struct ChildResult {
  int exit_code = -1;  // 128+signal if killed
  std::string output;  // stdout and stderr
  std::vector<TracedCall> calls;
};

using EnvOverrides = std::vector<std::pair<std::string, std::string>>;

// Re-executes /proc/self/exe with `--simgpu-child <scenario>` and the environment of this
// process plus `env`. With trace, the child's main thread is ptrace'd from exec to exit.
ChildResult run_child(const std::string& scenario, const EnvOverrides& env, bool trace);

inline constexpr const char* kChildFlag = "--simgpu-child";

}  // namespace simgpu_test
