// Loading and attaching the DRM ioctl and fence programs.
#include "capture/sources/drm_source.h"

#include <bpf/libbpf.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <string>

#include "capture/capture_options.h"
#include "capture/sources/drm_summary.h"
#include "correlate/correlator.h"
#include "drm_fence.skel.h"
#include "drm_ioctl.skel.h"

namespace xtrace {
namespace {

// A family of completion tracepoints that exist together (or not at all) in a kernel.
struct CompletionSource {
  const char* what;        // for messages
  const char* without_it;  // what the trace lacks when it is missing
  // The kernel module whose tracepoints they are (null: the kernel's own). They exist only
  // while it is loaded (or built in: /sys/module names both), and without it there is
  // nothing of that driver to complete, so their absence then is no loss and is said only
  // with --verbose; on a machine with that driver it is.
  const char* module;
  struct Tracepoint {
    const char* name;
    bpf_program* (*program)(const ::drm_fence*);
  };
  Tracepoint tracepoints[2];
};

const CompletionSource kCompletionSources[] = {
    {"dma_fence tracepoints (dma_fence_init, dma_fence_signaled)",
     "submissions have no measured completion",
     nullptr,
     {{"dma_fence_init", [](const ::drm_fence* s) { return s->progs.drm_dma_fence_init; }},
      {"dma_fence_signaled",
       [](const ::drm_fence* s) { return s->progs.drm_dma_fence_signaled; }}}},
    {"i915 request tracepoints (i915_request_add, i915_request_retire)",
     "i915 completions come from dma_fence alone",
     "i915",
     {{"i915_request_add", [](const ::drm_fence* s) { return s->progs.drm_i915_request_add; }},
      {"i915_request_retire",
       [](const ::drm_fence* s) { return s->progs.drm_i915_request_retire; }}}},
    {"xe hardware fence tracepoints (xe_hw_fence_create, xe_hw_fence_signal)",
     "xe completions come from dma_fence alone",
     "xe",
     {{"xe_hw_fence_create", [](const ::drm_fence* s) { return s->progs.drm_xe_hw_fence_create; }},
      {"xe_hw_fence_signal",
       [](const ::drm_fence* s) { return s->progs.drm_xe_hw_fence_signal; }}}},
};

// How a hook is named in messages.
const char* HookName(DrmHook hook) {
  switch (hook) {
    case DrmHook::kFentry: return "fentry/fexit on __x64_sys_ioctl";
    case DrmHook::kIoctlTracepoints: return "the ioctl trace events (syscalls:sys_enter_ioctl, sys_exit_ioctl)";
    case DrmHook::kSyscallTracepoints: return "the raw syscall tracepoints (sys_enter, sys_exit)";
    case DrmHook::kAuto: break;
  }
  return "?";
}

constexpr const char* kTracefs = "/sys/kernel/tracing";

// The ioctl trace events are found through tracefs (libbpf reads an event's id there, or
// under debugfs). A machine whose init does not mount it (a minimal VM, a container's own
// /sys) has the events all the same: mounted, they spare every other syscall on the machine
// the program the raw syscall tracepoints would run. Mounted as an init mounts it, and left
// mounted: another tool may be using it by the capture's end. Returns what was done, or why
// it could not be ("" when it was there already).
std::string MountTracefsIfMissing(bool* failed) {
  *failed = false;
  if (access("/sys/kernel/tracing/events", F_OK) == 0 ||
      access("/sys/kernel/debug/tracing/events", F_OK) == 0)
    return "";
  if (mount("tracefs", kTracefs, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME,
            nullptr) != 0) {
    *failed = true;
    return std::string("tracefs is not mounted at ") + kTracefs + " and mounting it failed (" +
           std::strerror(errno) + ")";
  }
  return std::string("mounted tracefs at ") + kTracefs +
         " (it was not mounted), where the ioctl trace events are found; it stays mounted";
}

}  // namespace

void DrmSource::IoctlSkeletonDeleter::operator()(::drm_ioctl* skel) const {
  drm_ioctl__destroy(skel);
}
void DrmSource::FenceSkeletonDeleter::operator()(::drm_fence* skel) const {
  drm_fence__destroy(skel);
}

DrmSource::~DrmSource() {
  links_.clear();  // links before the programs they refer to
  fence_skel_.reset();
  ioctl_skel_.reset();
}

Result<std::unique_ptr<ProbeSource>> DrmSource::Load(const SourceContext& ctx) {
  std::unique_ptr<DrmSource> self(new DrmSource(ctx));
  if (Status st = self->LoadIoctlProbes(); !st.ok()) return st;
  self->LoadCompletionProbes();
  return std::unique_ptr<ProbeSource>(std::move(self));
}

Status DrmSource::LoadIoctlProbes() {
  auto attached = [this](DrmHook hook) {
    if (ctx_.options.verbose) ctx_.say(std::string("DRM ioctls: attached to ") + HookName(hook));
  };
  if (ctx_.options.drm_hook != DrmHook::kAuto) {
    Status st = LoadIoctlObject(ctx_.options.drm_hook);
    if (st.ok()) attached(ctx_.options.drm_hook);
    return st;
  }
  // The cheapest hook for the rest of the machine first. Falling back past fentry is said under
  // -v only: on the trace events a syscall other than ioctl(2) runs no program. Falling back
  // to the raw tracepoints is always said: every syscall on the machine then runs one.
  std::string refused;
  for (DrmHook hook : {DrmHook::kFentry, DrmHook::kIoctlTracepoints, DrmHook::kSyscallTracepoints}) {
    Status st = LoadIoctlObject(hook);
    if (st.ok()) {
      if (!refused.empty() && (hook == DrmHook::kSyscallTracepoints || ctx_.options.verbose))
        ctx_.say("DRM ioctls: " + refused + "; using " + HookName(hook) + " instead" +
                 (hook == DrmHook::kSyscallTracepoints
                      ? ", which every syscall on the machine pays for while the capture runs"
                      : ""));
      attached(hook);
      return st;
    }
    if (hook == DrmHook::kSyscallTracepoints) return st;
    refused += (refused.empty() ? "" : "; ") + st.message();
  }
  return Status::Error("no DRM ioctl hook");  // not reached: the loop returns at its last hook
}

Status DrmSource::LoadIoctlObject(DrmHook hook) {
  std::string tracefs_missing;
  if (hook == DrmHook::kIoctlTracepoints) {
    bool failed = false;
    const std::string done = MountTracefsIfMissing(&failed);
    if (failed) tracefs_missing = " (" + done + ")";
    else if (!done.empty()) ctx_.say("DRM ioctls: " + done);
  }
  links_.clear();
  ioctl_skel_.reset(drm_ioctl__open());
  if (!ioctl_skel_) return Status::Error("opening DRM ioctl BPF object: " + BpfErrorText(errno));
  auto* skel = ioctl_skel_.get();
  bpf_program* const pairs[][2] = {
      {skel->progs.drm_ioctl_entry, skel->progs.drm_ioctl_exit},
      {skel->progs.drm_ioctl_tp_enter, skel->progs.drm_ioctl_tp_exit},
      {skel->progs.drm_sys_enter, skel->progs.drm_sys_exit},
  };
  const size_t chosen = hook == DrmHook::kFentry ? 0 : hook == DrmHook::kIoctlTracepoints ? 1 : 2;
  // Load only the pair in use: fentry programs need trampolines at load, the others a kernel
  // recent enough for their helpers.
  for (size_t i = 0; i < std::size(pairs); ++i)
    for (bpf_program* prog : pairs[i]) bpf_program__set_autoload(prog, i == chosen);
  // Every process on the machine reaches these programs: the filter is what keeps the capture
  // to its targets.
  skel->rodata->filter_by_pid = 1;
  skel->rodata->wakeup_bytes = ctx_.maps.wakeup_bytes();
  const char* what = HookName(hook);
  if (Status st = ctx_.maps.Share(skel->obj); !st.ok()) return st;
  if (int err = drm_ioctl__load(skel)) {
    ioctl_skel_.reset();
    return Status::Error(std::string("loading the DRM ioctl programs for ") + what + ": " +
                         BpfErrorText(err));
  }
  for (bpf_program* prog : pairs[chosen]) {
    // Attached where the section says: a trampoline, a trace event (perf event on the id
    // libbpf reads from tracefs) or a BTF tracepoint.
    bpf_link* link = bpf_program__attach(prog);
    if (!link) {
      const int err = errno;
      links_.clear();
      ioctl_skel_.reset();
      // libbpf reads a trace event's id from tracefs.
      const bool no_tracefs = hook == DrmHook::kIoctlTracepoints && err == ENOENT;
      return Status::Error(std::string("attaching the DRM ioctl programs to ") + what + ": " +
                           BpfErrorText(err) +
                           (no_tracefs ? (tracefs_missing.empty()
                                              ? " (is tracefs mounted at /sys/kernel/tracing?)"
                                              : tracefs_missing)
                                       : ""));
    }
    links_.emplace_back(link);
  }
  return Status::Ok();
}

void DrmSource::LoadCompletionProbes() {
  auto say = [this](const std::string& line) { ctx_.say("DRM completion: " + line); };
  fence_skel_.reset(drm_fence__open());
  if (!fence_skel_) {
    say("cannot open the fence BPF object (" + BpfErrorText(errno) +
        "); submissions have no measured completion");
    return;
  }
  auto* skel = fence_skel_.get();
  skel->rodata->wakeup_bytes = ctx_.maps.wakeup_bytes();
  Status st = ctx_.maps.Share(skel->obj);
  if (st.ok()) {
    if (int err =
            bpf_map__reuse_fd(skel->maps.drm_pending, bpf_map__fd(ioctl_skel_->maps.drm_pending)))
      st = Status::Error("sharing the pending-ioctl map: " + BpfErrorText(err));
  }
  if (st.ok()) {
    if (int err = drm_fence__load(skel))
      st = Status::Error("loading the fence BPF programs: " + BpfErrorText(err));
  }
  if (!st.ok()) {
    say(st.message() + "; submissions have no measured completion");
    fence_skel_.reset();
    return;
  }
  for (const CompletionSource& source : kCompletionSources) {
    std::vector<BpfLink> attached;
    std::string missing;
    for (const auto& tp : source.tracepoints) {
      bpf_link* link = bpf_program__attach_raw_tracepoint(tp.program(skel), tp.name);
      if (!link) {
        missing = std::string(tp.name) + ": " + BpfErrorText(errno);
        break;
      }
      attached.emplace_back(link);
    }
    // All or nothing: a creation probe without its signal probe would only fill the map.
    if (!missing.empty()) {
      const std::string module_dir = source.module ? std::string("/sys/module/") + source.module : "";
      if (module_dir.empty() || ::access(module_dir.c_str(), F_OK) == 0)
        say(std::string(source.what) + " not available (" + missing + "); " + source.without_it);
      else if (ctx_.options.verbose)
        say(std::string(source.what) + " not available (" + missing + "): no " + source.module +
            " driver on this machine (" + module_dir + ")");
      continue;
    }
    if (ctx_.options.verbose) say(std::string(source.what) + " attached");
    for (auto& link : attached) links_.push_back(std::move(link));
  }
}

SourceSummary DrmSource::Summary(const SourceSummaryInputs& in) const {
  return {.sentences = {}, .lines = DrmSummary(in.correlator.drm(), in.counters)};
}

}  // namespace xtrace
