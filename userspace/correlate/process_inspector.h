// What the correlator learns about a process from outside the record stream (comm,
// command line, namespace pid, cgroup and container). Thread names come from BPF records
// instead. An interface so tests (and the capture, which knows processes it saw start) can
// supply the answers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "correlate/drm_device.h"

namespace xtrace {

struct ProcessDetails {
  std::string comm;
  std::string command_line;
  uint32_t ns_pid = 0;  // innermost namespace pid; equals pid outside containers
  std::string cgroup_path;   // cgroup v2 path ("/system.slice/..."); empty if unknown
  std::string container_id;  // from the cgroup path; empty outside containers
};

class ProcessInspector {
 public:
  virtual ~ProcessInspector() = default;
  // nullopt when the process is gone (the caller falls back to what it knows).
  virtual std::optional<ProcessDetails> Process(uint32_t pid) = 0;
  // What file descriptor `fd` of `pid` is (for DRM ioctls), given what the probe saw of it
  // at the call; kind kUnknown when it cannot be told.
  virtual FdDevice Fd(uint32_t pid, uint32_t fd, const FdFileAtCall& at_call) {
    (void)pid;
    (void)fd;
    (void)at_call;
    return {};
  }
  // The log now names `pid` `comm` (its introduction, or an exec after it): the capture's
  // process table keeps it as the name to give the process by, also once it is gone.
  virtual void Named(uint32_t pid, std::string_view comm) {
    (void)pid;
    (void)comm;
  }
};

// Reads /proc (xtrace's own pid namespace: the initial one, or a pod's for a sidecar).
class ProcfsInspector final : public ProcessInspector {
 public:
  std::optional<ProcessDetails> Process(uint32_t pid) override;
  FdDevice Fd(uint32_t pid, uint32_t fd, const FdFileAtCall& at_call) override {
    return ResolveFdDevice("/proc", "/sys", pid, fd, at_call);
  }
};

// The cgroup v2 path in the text of /proc/PID/cgroup (its "0::" line), or "" if it has none.
std::string CgroupPathFromProcFile(std::string_view proc_cgroup_text);

}  // namespace xtrace
