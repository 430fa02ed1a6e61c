// A probe source: one family of BPF probes (Level Zero loader, ITT, DRM ioctls, ...) that the
// capture loop drives without knowing what it probes. Each source owns its BPF object and
// writes into the shared maps; adding a source means adding a class and one line in
// probe_sources.cc, not editing the capture loop.
//
// How a source fits in (the contract):
// - Load: open the BPF object, point it at the shared maps (CaptureMaps::Share), set
//   `filter_by_pid = 1` so its probes follow the capture scope (common.bpf.h xt_traced:
//   explicit pids, children, --comm, --cgroup, --system, the sidecar's pid namespace), load.
//   Tracepoint-based probes (raw_tp, tp_btf) attach here, once, for the whole capture.
// - Probes on a shared library: implement ProbesLibrary + AttachToLibrary. The capture decides
//   where they go and owns the links: once per distinct library file (device + inode) with
//   pid -1 when it discovers processes (--system, --comm, --cgroup, --container, children),
//   where the kernel itself puts the probes into every process that maps that file, now or
//   later, and `traced_pids`/the scope decide in BPF whose calls are recorded; or once per
//   process and file for explicit `attach --pid` targets, where a process with no probe
//   attached pays nothing. Links are dropped when no traced process maps the file any more.
//   A library inside a container is another inode: it is reached through /proc/PID/root.
// - The older per-process hooks (BeforeExec, OnProcessMaps, OnProcessExit) still work: a
//   source that manages its own links per process implements those instead, and is called for
//   every traced process, discovered ones included.
// - Records: the record type ranges in records.h say which source a record belongs to in the
//   per-process summary (capture/record_families.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "capture/bpf_link.h"
#include "capture/capture_maps.h"
#include "capture/proc_maps.h"

namespace xtrace {

struct CaptureOptions;

// What a source is given when it loads.
struct SourceContext {
  CaptureMaps& maps;
  const CaptureOptions& options;
  std::function<void(const std::string&)> say;  // one progress line on stderr (unless quiet)
};

class ProbeSource {
 public:
  virtual ~ProbeSource() = default;

  // Short name for messages ("Level Zero").
  virtual std::string_view name() const = 0;

  // What a process must load for this source to trace it, for "pid N has not loaded ..."
  // messages, e.g. "Level Zero (libze_loader.so*)". Empty for sources that need nothing.
  virtual std::string_view waits_for() const = 0;

  // --- Library probes attached by the capture (see the contract above) ---

  // Whether this source probes a mapped file with this base name (e.g. "libze_loader.so.1").
  virtual bool ProbesLibrary(std::string_view basename) const {
    (void)basename;
    return false;
  }

  // Attaches this source's probes to `lib` (open it by lib.host_path) for process `pid`, or for
  // every process that maps it when pid is -1. Returns the links, which the capture owns; an
  // error when nothing could be attached (a probe that fails alone is reported with `say`).
  virtual Result<std::vector<ProbeLink>> AttachToLibrary(const MappedLibrary& lib, int pid) {
    (void)lib;
    (void)pid;
    return std::vector<ProbeLink>{};
  }

  // The soname `record` attaches to before its command execs, so that the command's first
  // calls are captured (e.g. "libze_loader.so.1"); empty if none.
  virtual std::string_view exec_soname() const { return {}; }

  // --- Per-process hooks for sources that keep their own links ---

  // The command of `record` is held before exec: attach where its libraries will be, so its
  // first calls are captured. Returns true if something was attached.
  virtual bool BeforeExec(uint32_t pid) {
    (void)pid;
    return false;
  }

  // Called on every scan of a traced process's memory map with every file it maps; attaches
  // whatever is new (idempotent). Returns true while the process has a probe of this source.
  virtual bool OnProcessMaps(uint32_t pid, const std::vector<MappedLibrary>& files) {
    (void)pid;
    (void)files;
    return false;
  }

  // The process is gone: release what was attached for it alone.
  virtual void OnProcessExit(uint32_t pid) { (void)pid; }

  // Links this source holds itself (for leak checks and verbose output); links returned by
  // AttachToLibrary are counted by the capture.
  virtual size_t link_count() const = 0;
};

// Every source this build knows, loaded; a source that cannot load on this kernel says why
// in one line and is left out. Fails only if none loads.
Result<std::vector<std::unique_ptr<ProbeSource>>> LoadProbeSources(const SourceContext& ctx);

}  // namespace xtrace
