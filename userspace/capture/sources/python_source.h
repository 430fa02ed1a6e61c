// Python frames as a probe source: it attaches nothing of its own, but when a traced process
// maps a CPython interpreter (python3.N, libpython3.N.so) it checks the interpreter
// (capture/sources/python_process.h) and tells BPF where that process's frames are
// (CaptureMaps::SetPythonLayout), so that the Level Zero and ITT probes add the calling
// thread's Python frames to the calls that matter (bpf/python_frames.bpf.h). What it learned
// goes into the interpreter registry this source owns: the ITT source asks it which
// processes are Python ones (with --python-frames their ITT calls stay on the probe site,
// where frames are read), and the correlator, lent it at Begin, resolves their frames from it.
// A process whose interpreter cannot be read gets no frames and one line saying why.
#pragma once

#include <map>
#include <memory>

#include "capture/sources/probe_source.h"
#include "python/python_frames.h"

namespace xtrace {

class PythonSource final : public ProbeSource {
 public:
  // Null unless the options ask for Python frames (and more than the DRM view).
  static std::unique_ptr<PythonSource> Load(const SourceContext& ctx);

  // The processes whose interpreter was read, for other sources (SourceContext::python).
  PythonInterpreters& interpreters() { return interpreters_; }

  std::string_view name() const override { return "Python frames"; }
  bool needs_library() const override { return true; }
  bool ProbesLibrary(const MappedLibrary& lib) override;
  Result<std::vector<ProbeLink>> AttachToLibrary(const MappedLibrary& lib, int pid) override;
  bool attaches_per_process() const override { return true; }
  bool says_where_attached() const override { return true; }
  // Lends the correlator the registry and the target memory reader to resolve frames with.
  void Begin(const SourceStart& start) override;
  void OnProcessExit(uint32_t pid) override;
  // Forgets the process's layout unless it was taken from the image after the exec: the
  // exec may be reported after the new image's interpreter was already found.
  void OnProcessExec(uint32_t pid, uint64_t exec_ns) override;
  size_t link_count() const override { return 0; }
  // What frames were resolved, lost and read again (python_frames.h).
  SourceSummary Summary(const SourceSummaryInputs& in) const override;

 private:
  explicit PythonSource(const SourceContext& ctx);
  void Forget(uint32_t pid);

  SourceContext ctx_;
  // Owned here, read by the correlator: the source outlives it (the capture destroys its
  // correlator before its sources).
  PythonInterpreters interpreters_;
  ProcessVmMemory memory_;
  uint32_t generation_ = 0;  // xt_py_layout.generation: one per layout set
  // Whether the kernel has bpf_loop, without which BPF reads no frames (python_frames.bpf.h).
  bool kernel_walks_ = true;
  // Processes whose layout BPF has -> when their interpreter was inspected (CLOCK_MONOTONIC).
  std::map<uint32_t, uint64_t> set_;
};

}  // namespace xtrace
