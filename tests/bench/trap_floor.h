// The trap floor: empty programs (trap_floor.bpf.c) attached to one function of one process
// at a chosen offset, or to the syscall tracepoints; detached when this goes away.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "capture/bpf/bpf_link.h"

struct trap_floor;  // generated skeleton

namespace xtrace::bench {

class TrapFloor {
 public:
  // Attaches to `symbol` + `offset` in `library` for process `pid`; the return program too
  // when `with_return` (the capture pairs entry and return, so its floor has both). Attached
  // the way the Level Zero source attaches: one uprobe_multi link per program where the
  // kernel has them (6.6+), perf-event uprobes otherwise.
  static Result<std::unique_ptr<TrapFloor>> Attach(int pid, const std::string& library,
                                                   const std::string& symbol, uint64_t offset,
                                                   bool with_return);
  // Empty programs on the raw sys_enter and sys_exit tracepoints (every syscall on the
  // machine runs them while attached), the floor of the DRM ioctl source.
  static Result<std::unique_ptr<TrapFloor>> AttachSyscalls();
  // Empty programs on the syscalls:sys_enter_ioctl and sys_exit_ioctl trace events (only
  // ioctl(2) runs them; other syscalls take the kernel's traced-syscall path), the floor of
  // the DRM source where fentry is refused.
  static Result<std::unique_ptr<TrapFloor>> AttachIoctlEvents();
  ~TrapFloor();

  // The empty programs' own ids, for run-time statistics.
  std::vector<uint32_t> program_ids() const;

 private:
  TrapFloor() = default;
  static Result<std::unique_ptr<TrapFloor>> AttachTracepoints(bool ioctl_events);
  Status AttachEach(int pid, const std::string& library, const std::string& symbol,
                    uint64_t offset, bool with_return);
  struct SkeletonDeleter {
    void operator()(::trap_floor* skel) const;
  };
  std::unique_ptr<::trap_floor, SkeletonDeleter> skel_;
  std::vector<BpfLink> links_;
  std::vector<UniqueFd> multi_links_;
};

}  // namespace xtrace::bench
