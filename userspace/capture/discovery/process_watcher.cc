// Loading and attaching the process-lifecycle BPF programs.
#include "capture/discovery/process_watcher.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <string_view>

#include "capture/discovery/elf_function_offsets.h"
#include "capture/discovery/elf_symbols.h"
#include "capture/bpf/uprobe_multi.h"
#include "process_lifecycle.skel.h"

namespace xtrace {

void ProcessWatcher::SkeletonDeleter::operator()(::process_lifecycle* skel) const {
  process_lifecycle__destroy(skel);
}

ProcessWatcher::~ProcessWatcher() {
  links_.clear();  // before the programs they run
  skel_.reset();
}

// The linker hook as a uprobe_multi program when the kernel has them (6.6+). Not only for the
// cheaper detach: a perf-event uprobe on every process that maps a file (pid -1) is refused
// with EACCES to a collector in a pid namespace of its own without CAP_SYS_ADMIN (a pod
// sidecar given CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE, checked on kernel 6.18), and a
// uprobe_multi link for every process is not.
Status ProcessWatcher::LoadPrograms(CaptureMaps& maps, bool multi) {
  skel_.reset(process_lifecycle__open());
  if (!skel_) return Status::Error("opening the process BPF object: " + BpfErrorText(errno));
  auto* skel = skel_.get();
  skel->rodata->filter_by_pid = 1;
  skel->rodata->wakeup_bytes = maps.wakeup_bytes();
  if (Status st = maps.Share(skel->obj); !st.ok()) return st;
  if (multi) PrepareUprobeMulti(skel->progs.xt_dl_debug_state);
  if (int err = process_lifecycle__load(skel)) {
    skel_.reset();
    return Status::Error("loading the process BPF programs: " + BpfErrorText(err));
  }
  multi_ = multi;
  return Status::Ok();
}

Result<std::unique_ptr<ProcessWatcher>> ProcessWatcher::Load(CaptureMaps& maps) {
  std::unique_ptr<ProcessWatcher> self(new ProcessWatcher());
  if (self->LoadPrograms(maps, true).ok()) return self;
  if (Status single = self->LoadPrograms(maps, false); !single.ok()) return single;
  return self;
}

Result<CollectorPidNamespace> ProcessWatcher::FindOwnPidNamespace() {
  LIBBPF_OPTS(bpf_test_run_opts, run);
  if (int err = bpf_prog_test_run_opts(bpf_program__fd(skel_->progs.xt_whoami), &run))
    return Status::Error("finding xtrace's own pid namespace: " + BpfErrorText(err));
  if (skel_->bss->self_pidns_inum == 0)
    return Status::Error("finding xtrace's own pid namespace: the probe did not run");
  return CollectorPidNamespace{skel_->bss->self_pidns_level, skel_->bss->self_pidns_inum};
}

Status ProcessWatcher::AttachLifecycle() {
  const std::pair<const char*, bpf_program*> programs[] = {
      {"sched_process_exec", skel_->progs.xt_process_exec},
      {"sched_process_fork", skel_->progs.xt_process_fork},
      {"sched_process_exit", skel_->progs.xt_process_exit},
  };
  for (const auto& [tracepoint, prog] : programs) {
    bpf_link* link = bpf_program__attach_raw_tracepoint(prog, tracepoint);
    if (!link) {
      const int err = errno;
      links_.clear();
      return Status::Error("attaching to the " + std::string(tracepoint) +
                           " tracepoint: " + BpfErrorText(err));
    }
    links_.emplace_back(link);
  }
  // The last look at an execing process's old memory (the ITT fast path's rings); the
  // tracepoint exists since Linux 6.10. Without it, records an exec takes along are still
  // counted when the process's fast path ends, only less exactly (said then).
  if (bpf_link* link =
          bpf_program__attach_raw_tracepoint(skel_->progs.xt_process_prepare_exec, "sched_prepare_exec"))
    links_.emplace_back(link);
  return Status::Ok();
}

Status ProcessWatcher::AttachHoldParents() {
  bpf_link* link = bpf_program__attach_trace(skel_->progs.xt_signal_generate);
  if (!link)
    return Status::Error("attaching to the signal_generate tracepoint: " + BpfErrorText(errno));
  links_.emplace_back(link);
  return Status::Ok();
}

bool ProcessWatcher::IsDynamicLinker(std::string_view basename) {
  return basename.rfind("ld-linux", 0) == 0 || basename.rfind("ld-musl", 0) == 0;
}

uint64_t ProcessWatcher::LinkMapStateCookie(const std::string& ldso_path) {
  constexpr std::string_view kSymbols[] = {"_dl_debug_state", "_r_debug"};
  auto values = ElfExportValues(ldso_path, kSymbols);
  if (!values.ok() || !(*values)[0] || !(*values)[1]) return 0;
  return *(*values)[1] - *(*values)[0];
}

Result<std::vector<ProbeLink>> ProcessWatcher::HookDynamicLinker(const MappedLibrary& ldso,
                                                                 int pid) {
  // The program finds r_debug.r_state from its own address: the linker's load base differs
  // from process to process, the distance within the file does not.
  const uint64_t cookie = LinkMapStateCookie(ldso.host_path);
  std::vector<ProbeLink> links;
  if (multi_) {
    constexpr std::string_view kHook[] = {"_dl_debug_state"};
    auto offsets = FindFunctionOffsets(ldso.host_path, kHook);
    if (!offsets.ok()) return offsets.status().WithContext(ldso.path);
    auto it = offsets->find(kHook[0]);
    if (it == offsets->end()) return Status::Error(ldso.path + ": defines no _dl_debug_state");
    const uint64_t offset = it->second;
    // uprobe_multi names "every process" pid 0.
    auto link = AttachUprobeMulti(skel_->progs.xt_dl_debug_state, pid < 0 ? 0 : pid,
                                  ldso.host_path, std::span(&offset, 1), std::span(&cookie, 1),
                                  false);
    if (!link.ok()) return link.status().WithContext(ldso.path + ": _dl_debug_state");
    links.emplace_back(std::move(*link));
    return links;
  }
  auto link = AttachUprobe(skel_->progs.xt_dl_debug_state, pid, ldso.host_path,
                           "_dl_debug_state", false, cookie);
  if (!link.ok()) return link.status().WithContext(ldso.path);
  links.emplace_back(std::move(*link));
  return links;
}

}  // namespace xtrace
