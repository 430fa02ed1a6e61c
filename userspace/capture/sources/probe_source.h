// A probe source: one family of BPF probes (Level Zero loader, ITT, DRM ioctls, ...) that the
// capture loop drives without knowing what it probes. Each source owns its BPF object and
// writes into the shared maps; adding a source means adding a class and one line in
// probe_sources.cc, not editing the capture loop.
//
// How a source fits in (the contract):
// - Load: open the BPF object, point it at the shared maps (CaptureMaps::Share), set
//   `filter_by_pid = 1` so its probes follow the capture scope (bpf/scope.bpf.h xt_traced:
//   explicit pids, children, --comm, --cgroup, --system, the sidecar's pid namespace), load.
//   Tracepoint-based probes (raw_tp, tp_btf) attach here, once, for the whole capture: such a
//   source needs no library (needs_library() is false) and covers every process in scope.
// - Probes on a shared library, the one way a source attaches per process: implement
//   ProbesLibrary + AttachToLibrary. The capture (capture/attach_planner.h) decides where they
//   go and owns the links: once per distinct library file (device + inode) with pid -1 when it
//   discovers processes (--system, --comm, --cgroup, --container, children), where the kernel
//   itself puts the probes into every process that maps that file, now or later, and
//   `traced_pids`/the scope decide in BPF whose calls are recorded; or once per process and
//   file for explicit `attach --pid` targets, and always for a source whose probes depend on
//   the process (attaches_per_process()), where a process with no probe attached pays
//   nothing. Links are dropped when no traced process maps the file any more. A library
//   inside a container is another inode: it is reached through /proc/PID/root.
// - Records: the record type ranges in records.h say which source a record belongs to in the
//   per-process summary (capture/output/record_families.cc). Every decoded record goes to the
//   correlator, then to each source (OnRecord), which may tell the capture what the record
//   means for its process (RecordEffect: it detached itself). The capture's loop
//   (capture/record_router.h) knows no source by name.
// - Its part of the log and of the closing summary: a source that needs the correlator (its
//   devices, its clocks) is given it once the log is open (Begin), before anything is
//   attached; at the end, after the last records were read, it has its last word (Finish)
//   and says its part of the summary (Summary).
// - Holds of its own: a source whose programs hold a thread to do something in it (the Level
//   Zero source asks a process about objects made before the attach) says which
//   (holds_served), is given each such record before any later one is read (OnHold), and
//   ends the hold itself; it gets the capture's holds and their guardian at Begin.
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
#include "decode/hold_record_decoder.h"
#include "decode/py_stack_chains.h"
#include "decode/record_decoder.h"

namespace xtrace {

struct CaptureOptions;
class PythonInterpreters;
class Correlator;
class ProcessHolds;
class StringTable;

// What a source is given when it loads.
struct SourceContext {
  CaptureMaps& maps;
  const CaptureOptions& options;
  std::function<void(const std::string&)> say;  // one progress line on stderr (unless quiet)
  // The Python source's interpreter registry (null without Python frames), which
  // LoadProbeSources hands the other sources.
  PythonInterpreters* python = nullptr;
  // A fact about what the capture cannot trace, said once: the capture's closing summary and
  // each log's summary repeat it (a sentence without its final period).
  std::function<void(const std::string&)> note = {};
};

// What a source is given once the capture's log is open, before anything is attached.
struct SourceStart {
  Correlator& correlator;
  StringTable& strings;  // the log's: names written into it
  ProcessHolds* holds = nullptr;  // the capture's holds and their guardian; null: none
};

// What a record tells the capture about its process beyond what the log shows.
struct RecordEffect {
  bool process_detached = false;  // it ended its own capture: its probes go, it is not scanned
};

// What the closing summary is said from.
struct SourceSummaryInputs {
  const Correlator& correlator;
  const Counters& counters;  // the BPF counters at the end
  PyStackChains::FrameCounts python_frames = {};  // the router's (RecordRouter::Summary)
};

// A source's part of the closing summary (either may be empty).
struct SourceSummary {
  std::string sentences;  // each starting with a space: they join the summary's paragraph
  std::string lines;      // each starting "\nxtrace: ": lines of their own after it
  // What the holds it served came to (sentences, each starting with a space): they follow
  // the capture's own sentence about holds.
  std::string hold_sentences = {};
};

class ProbeSource {
 public:
  virtual ~ProbeSource() = default;

  // Short name for messages ("Level Zero"; "DRM ioctls": "tracing the DRM ioctls of pid 7").
  virtual std::string_view name() const = 0;

  // Whether a process is traced by this source only once it maps one of the libraries the
  // source probes (Level Zero, ITT); false for one whose probes, attached at load, already
  // cover every process in scope (DRM's syscall hooks).
  virtual bool needs_library() const = 0;

  // What a process must load for this source to trace it, for "pid N has not loaded ..."
  // messages, e.g. "Level Zero (libze_loader.so*)". Empty for sources that need no library.
  virtual std::string_view waits_for() const { return {}; }

  // --- Library probes attached by the capture (see the contract above) ---

  // Whether this source probes `lib`, a file a process maps (its path as the process sees
  // it, host_path to open it).
  virtual bool ProbesLibrary(const MappedLibrary& lib) {
    (void)lib;
    return false;
  }

  // Attaches this source's probes to `lib` (open it by lib.host_path) for process `pid`, or for
  // every process that maps it when pid is -1. Returns the links, which the capture owns (none:
  // nothing to probe there for this process); an error when nothing could be attached (a probe
  // that fails alone is reported with `say`). Not retried while the process maps the file.
  virtual Result<std::vector<ProbeLink>> AttachToLibrary(const MappedLibrary& lib, int pid) {
    (void)lib;
    (void)pid;
    return std::vector<ProbeLink>{};
  }

  // Whether what this source probes in a library depends on the process (so its links are
  // always attached per process, never per file for every process).
  virtual bool attaches_per_process() const { return false; }

  // Whether AttachToLibrary says itself which process it attached to; otherwise the capture
  // says "attached to pid N (library)".
  virtual bool says_where_attached() const { return false; }
  // Whether "attached to pid N (library)" names `lib` (a source that probes a second file
  // beside its main library names the main one).
  virtual bool NamesAttachment(const MappedLibrary& lib) const {
    (void)lib;
    return true;
  }

  // The libraries `record` attaches to for its command `pid` before it execs, so that the
  // command's first calls are captured (each is then used like a mapped file).
  virtual std::vector<MappedLibrary> LibrariesBeforeExec(uint32_t pid) {
    (void)pid;
    return {};
  }

  // The soname whose host copy a --system capture probes from the start, so that processes
  // that start later are traced from their first call (e.g. "libze_loader.so.1"); empty if none.
  virtual std::string_view host_soname() const { return {}; }

  // The capture has just looked at `pid`'s memory map (a scan: at attach, after an exec or a
  // library load, or when a probe asked, e.g. after zeInit) and attached what was new; a
  // source may probe what only the process's memory says (pointers it holds) now, for `pid`
  // alone if `per_process`, else for every process that maps the file. Its links are its own
  // (counted in link_count()). A held process is continued after this returns.
  virtual void ProcessScanned(uint32_t pid, bool per_process) {
    (void)pid;
    (void)per_process;
  }

  // Called on every turn of the capture's loop, at `now_ns` (CLOCK_MONOTONIC), for the
  // source's periodic work: links of its own for every process (see ProcessScanned) that no
  // traced process has used for `idle_grace_ns` go, as the capture's library links do; state
  // in the traced processes that must be looked at again is (each source keeps its own period).
  virtual void Tick(uint64_t now_ns, uint64_t idle_grace_ns) {
    (void)now_ns;
    (void)idle_grace_ns;
  }

  // `pid` was running before the capture found it (at the start, or a job's step found later;
  // never a child the capture saw start): what it made until then was made out of sight.
  virtual void FoundRunning(uint32_t pid) { (void)pid; }

  // The process is gone (or detached): forget what was kept about it.
  virtual void OnProcessExit(uint32_t pid) { (void)pid; }

  // The process replaced its image (exec) at `exec_ns` (CLOCK_MONOTONIC): what was kept about
  // its memory before then is gone with it; probes attached to it for files stay with the
  // process. (Its record may arrive after the new image was already looked at.)
  virtual void OnProcessExec(uint32_t pid, uint64_t exec_ns) {
    (void)pid;
    (void)exec_ns;
  }

  // Links this source holds itself (for leak checks and verbose output); links returned by
  // AttachToLibrary are counted by the capture.
  virtual size_t link_count() const = 0;

  // --- The source's part of the log and of the summary (see the contract above) ---

  // Whether this source records the host API calls that the kernel driver's work is
  // attributed to (and that queries in a held process can name).
  virtual bool records_api_calls() const { return false; }

  // The log is open and the correlator made: called once, before anything is attached.
  virtual void Begin(const SourceStart& start) { (void)start; }

  // The kinds of holds (XT_HOLD_* of include/xtrace/hold.h) this source's programs take and
  // it serves, once begun: they are taken only while the capture holds processes.
  virtual uint32_t holds_served() const { return 0; }

  // A thread held (a record of hold_record_decoder.h), before any later record is read:
  // whether it is one of this source's holds, which it then serves and ends, continuing the
  // thread.
  virtual bool OnHold(const DecodedHold& hold) {
    (void)hold;
    return false;
  }

  // Every decoded record of the capture, after the correlator took it (one of this source's
  // or not: a source looks only at its own).
  virtual RecordEffect OnRecord(const DecodedRecord& record) {
    (void)record;
    return {};
  }

  // The last records were read, before the correlator finishes, at `now_ns` (CLOCK_MONOTONIC).
  virtual void Finish(uint64_t now_ns) { (void)now_ns; }

  // This source's part of the closing summary.
  virtual SourceSummary Summary(const SourceSummaryInputs& in) const {
    (void)in;
    return {};
  }
};

// Every source this build knows, loaded; a source that cannot load on this kernel says why
// in one line and is left out. Fails only if none loads.
Result<std::vector<std::unique_ptr<ProbeSource>>> LoadProbeSources(const SourceContext& ctx);

}  // namespace xtrace
