// What the correlator learns about a process from outside the record stream (comm,
// command line, namespace pid). Thread names come from BPF records instead. An interface so tests can supply fixed answers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "correlate/drm_device.h"

namespace xtrace {

struct ProcessDetails {
  std::string comm;
  std::string command_line;
  uint32_t ns_pid = 0;  // innermost namespace pid; equals pid outside containers
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
};

// Reads /proc (through the init pid namespace: xtrace runs there or with host pid).
class ProcfsInspector final : public ProcessInspector {
 public:
  std::optional<ProcessDetails> Process(uint32_t pid) override;
  FdDevice Fd(uint32_t pid, uint32_t fd, const FdFileAtCall& at_call) override {
    return ResolveFdDevice("/proc", "/sys", pid, fd, at_call);
  }
};

}  // namespace xtrace
