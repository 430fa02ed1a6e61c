// Follows processes for a capture: loads the process-lifecycle BPF programs (exec, fork and
// exit tracepoints, and the dynamic linker hook that reports library loads), and tells the
// capture which pid namespace it runs in.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "capture/bpf/bpf_link.h"
#include "capture/bpf/capture_maps.h"
#include "capture/discovery/proc_maps.h"

struct process_lifecycle;  // generated skeleton (build/bpf/process_lifecycle.skel.h)

namespace xtrace {

// The pid namespace the collector runs in.
struct CollectorPidNamespace {
  uint32_t level = 0;  // 0: the initial namespace (a host, or a node agent with hostPID)
  uint64_t inum = 0;
};

class ProcessWatcher {
 public:
  static Result<std::unique_ptr<ProcessWatcher>> Load(CaptureMaps& maps);
  ~ProcessWatcher();

  // Runs a probe in the collector's own context to find its pid namespace.
  Result<CollectorPidNamespace> FindOwnPidNamespace();

  // Attaches the exec/fork/exit tracepoints. Without them (an old or locked-down kernel)
  // only processes found by scanning /proc are traced; the error says which failed.
  Status AttachLifecycle();
  size_t lifecycle_link_count() const { return links_.size(); }
  // Attaches the program that continues a parent whose stop only echoed its child's hold
  // (bpf/process_lifecycle.bpf.c, hold_parents). Wanted whenever processes are held.
  Status AttachHoldParents();

  // Whether a mapped file is a dynamic linker ("ld-linux-x86-64.so.2", "ld-musl-x86_64.so.1").
  static bool IsDynamicLinker(std::string_view basename);
  // Hooks the linker's _dl_debug_state in `ldso` for `pid` (-1: every process mapping it).
  Result<std::vector<ProbeLink>> HookDynamicLinker(const MappedLibrary& ldso, int pid);
  // The hook's cookie for the linker at `ldso_path`: the distance from _dl_debug_state to
  // _r_debug, through which the program reads whether the list of objects is consistent; 0
  // when the file lacks either symbol (the program then treats every call as consistent).
  static uint64_t LinkMapStateCookie(const std::string& ldso_path);

 private:
  ProcessWatcher() = default;
  Status LoadPrograms(CaptureMaps& maps, bool multi);

  struct SkeletonDeleter {
    void operator()(::process_lifecycle* skel) const;
  };
  std::unique_ptr<::process_lifecycle, SkeletonDeleter> skel_;
  std::vector<BpfLink> links_;
  bool multi_ = false;  // the linker hook is a uprobe_multi program
};

}  // namespace xtrace
