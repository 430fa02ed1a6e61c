// Python frames' source; see python_source.h.
#include "capture/sources/python_source.h"

#include <bpf/libbpf.h>

#include "capture/capture_options.h"
#include "capture/sources/python_process.h"
#include "capture/sources/tsc_clock.h"
#include "correlate/correlator.h"
#include "python/python_frames.h"

namespace xtrace {

PythonSource::PythonSource(const SourceContext& ctx) : ctx_(ctx) { ctx_.python = &interpreters_; }

std::unique_ptr<PythonSource> PythonSource::Load(const SourceContext& ctx) {
  // Python frames ride on the other sources' probes, which the DRM-only view has none of.
  if (!ctx.options.wants_python_frames() || ctx.options.drm == DrmCapture::kOnly) return nullptr;
  std::unique_ptr<PythonSource> self(new PythonSource(ctx));
  // The frame walk's loops are bpf_loop callbacks; where the kernel has none (before Linux
  // 5.17), BPF reads no frames. Said per Python process, where it matters.
  self->kernel_walks_ = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_loop, nullptr) == 1;
  return self;
}

void PythonSource::Begin(const SourceStart& start) {
  start.correlator.SetPython(interpreters_, memory_);
}

bool PythonSource::ProbesLibrary(const MappedLibrary& lib) { return IsCPythonBinary(lib.path); }

Result<std::vector<ProbeLink>> PythonSource::AttachToLibrary(const MappedLibrary& lib, int pid) {
  if (pid < 0) return std::vector<ProbeLink>{};  // per process only (attaches_per_process)
  const auto p = static_cast<uint32_t>(pid);
  const std::string who = "pid " + std::to_string(pid) + ": ";
  if (!kernel_walks_) {
    ctx_.say(who + "no Python frames: this kernel has no bpf_loop helper (Linux 5.17 and "
                   "later have it), which xtrace walks a Python stack with");
    return std::vector<ProbeLink>{};
  }
  // An interpreter linked against libpython is read there (that library is probed too);
  // the executable itself holds nothing of CPython, and saying so would read as a failure.
  if (const std::string libpython = CPythonLibraryOf(lib); !libpython.empty()) {
    if (ctx_.options.verbose)
      ctx_.say(who + lib.path + " runs CPython from " + libpython + ": its frames are read there");
    return std::vector<ProbeLink>{};
  }
  const uint64_t inspected_ns = TscClock::MonotonicNs();
  auto found = InspectCPython(p, lib);
  if (!found.ok()) {
    ctx_.say(who + "no Python frames: " + found.status().message());
    return std::vector<ProbeLink>{};
  }
  const xt_py_layout layout = BpfLayout(*found->interpreter.layout, found->interpreter.runtime,
                                        XT_PY_MAX_FRAMES, ++generation_);
  ctx_.python->Set(p, found->interpreter);
  if (Status st = ctx_.maps.SetPythonLayout(p, layout); !st.ok()) {
    ctx_.python->Forget(p);
    ctx_.say(who + "no Python frames: " + st.message());
    return std::vector<ProbeLink>{};
  }
  set_[p] = inspected_ns;
  if (ctx_.options.verbose)
    ctx_.say(who + "CPython " + VersionText(found->major, found->minor) + " (" + lib.path +
             ", offsets from " + found->interpreter.layout->source +
             "): Python frames on its traced calls");
  return std::vector<ProbeLink>{};
}

void PythonSource::Forget(uint32_t pid) {
  if (!set_.erase(pid)) return;
  ctx_.maps.ForgetPython(pid);
  ctx_.python->Forget(pid);
}

void PythonSource::OnProcessExit(uint32_t pid) { Forget(pid); }

void PythonSource::OnProcessExec(uint32_t pid, uint64_t exec_ns) {
  auto it = set_.find(pid);
  if (it != set_.end() && it->second > exec_ns) return;  // inspected after the exec
  Forget(pid);
}

SourceSummary PythonSource::Summary(const SourceSummaryInputs& in) const {
  const PythonFrameResolver* python = in.correlator.python();
  if (!python) return {};
  return {.sentences = PythonFramesSummary(python->stats(), in.python_frames.frames,
                                           in.python_frames.shared),
          .lines = {}};
}

}  // namespace xtrace
