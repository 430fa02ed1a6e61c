// Turns decoded records into model events: names kernels from their creation, introduces
// processes and threads the first time they appear, and keeps the counts the summary reports.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "correlate/drm_correlator.h"
#include "correlate/itt_correlator.h"
#include "correlate/event_sink.h"
#include "correlate/process_identities.h"
#include "correlate/process_inspector.h"
#include "correlate/pid_handle.h"
#include "correlate/ze_correlator.h"
#include "decode/record_decoder.h"
#include "model/event.h"
#include "model/string_table.h"
#include "python/python_frames.h"

namespace xtrace {

struct CorrelatorStats {
  uint64_t records = 0;
  uint64_t kernel_creates = 0;
  uint64_t kernel_names_kept_paused = 0;  // creations while paused: named, not shown
  uint64_t kernels_learned = 0;    // made before the attach, named by asking the process
  uint64_t objects_learned = 0;    // other such objects (learned creation calls)
  uint64_t launches = 0;
  uint64_t launches_unnamed = 0;   // launches of kernels created before capture began
  uint64_t kernels_unnamed = 0;    // distinct such kernels
  uint64_t failed_calls = 0;       // calls that returned an error code
  uint64_t api_calls = 0;          // Level Zero calls other than kernel creation and launches
  uint64_t unfinished_calls = 0;   // calls whose thread exited inside them
  uint64_t calls_at_stop = 0;      // calls still in progress when the capture stopped
  uint64_t peak_kernel_handles = 0;  // most kernels known by handle at once (destroyed ones leave)
  uint64_t processes = 0;
  uint64_t threads = 0;
};

class Correlator {
 public:
  Correlator(StringTable& strings, EventSink& sink, ProcessInspector& inspector,
             ProcessIdentities::Clock now = &ProcessIdentities::MonotonicNow);

  void OnRecord(const DecodedRecord& record);

  // Announces a process before any record of it (e.g. when a probe attaches), so its name is
  // read while it is still alive. `fallback_comm` names it if it is already gone.
  void NoteProcess(uint32_t pid, std::string_view fallback_comm = {});

  // `pid` exec'd into `identity` at `ts_ns` (its exec record): the log says so if it knows
  // the process; `introduce` introduces it now if not (see ProcessIdentities::Execed).
  void ProcessExeced(uint32_t pid, uint64_t ts_ns, const ProcessDetails& identity,
                     bool introduce) {
    if (identities_.Execed(pid, ts_ns, identity, introduce)) ++stats_.processes;
    if (python_) python_->ForgetProcess(pid);
  }

  // The capture begins `pid` paused (--start-paused): recorded as a collection change.
  void NoteStartPaused(uint32_t pid, uint64_t ts_ns) { itt_.NoteStartPaused(pid, ts_ns); }

  // A kernel made before the attach, named by asking the process (capture/sources/ze_query.h) while
  // thread `tid` was held from `start_ns` to `end_ns`: logged as a creation marked learned,
  // and its launches are named from now on as if its creation had been seen.
  void LearnKernel(uint32_t pid, uint32_t tid, uint64_t start_ns, uint64_t end_ns, uint64_t kernel,
                   std::string_view name, bool truncated);
  // Another object made before the attach (a list, queue, event, pool or a list's device),
  // learned the same way and written as the creation it stands for (`call.learned`): logged,
  // and the device timeline takes it as it takes creations.
  void LearnCall(const ApiCall& call);
  // A hold xtrace took and released (model/event.h XtraceHold): logged after what it learned.
  // A whole-process hold of a process the log does not know (a program that never used a
  // traced library, held as it exec'd) is none of the log's business and is not written.
  void NoteHold(const XtraceHold& hold);

  // The capture ended at `end_ns`: spans still open are emitted as unfinished, and events
  // still waiting for what may follow them are written.
  void Finish(uint64_t end_ns) {
    ze_.Finish(end_ns);
    itt_.Finish(end_ns);
    drm_.Flush();
  }

  // `pid` exited (seen at `ts_ns`): its spans still open end there, as unfinished, and the
  // pid is introduced afresh if a later process reuses it (it names the new one).
  void ProcessEnded(uint32_t pid, uint64_t ts_ns);

  // Python frames (DecodedPyStack records) are resolved through `interpreters`, reading code
  // objects with `memory`; without this they are dropped.
  void SetPython(const PythonInterpreters& interpreters, ProcessMemory& memory) {
    python_ = std::make_unique<PythonFrameResolver>(interpreters, memory, strings_);
  }
  // Null when SetPython was not called.
  const PythonFrameResolver* python() const { return python_.get(); }

  const CorrelatorStats& stats() const { return stats_; }
  const IttStats& itt_stats() const { return itt_.stats(); }

  // Whether any record of `pid` has been seen (or the process was announced) since the
  // process with that pid started.
  bool SawProcess(uint32_t pid) const { return identities_.Known(pid); }
  // The processes and threads the log knows, as it said them (what a new file starts with).
  const ProcessIdentities& identities() const { return identities_; }

  // The kernel-driver (DRM) part: its settings, counts and per-device summary.
  DrmCorrelator& drm() { return drm_; }
  const DrmCorrelator& drm() const { return drm_; }

  // The device side: fed device facts and clock readings by the capture, read for its summary.
  ZeCorrelator& ze() { return ze_; }

 private:
  void SeeThread(uint32_t pid, uint32_t tid);
  void OnKernelCreate(const DecodedKernelCreate& r);
  void OnLaunchKernel(const DecodedLaunchKernel& r);
  void OnThreadName(const DecodedThreadName& r);
  void OnApiCall(const ApiCall& call, const DecodedZeExecute* execute);
  void OnCallUnfinished(const DecodedCallUnfinished& r);
  void OnDrmFence(const DecodedDrmFence& r);
  void OnPyStack(const DecodedPyStack& r);

  static constexpr int32_t kZeResultNotReady = 1;  // ZE_RESULT_NOT_READY

  StringTable& strings_;
  EventSink& sink_;
  ProcessIdentities identities_;  // the processes and threads the log knows, and their names
  // The thread SeeThread saw last (pid << 32 | tid; ~0: none), so a run of one thread's
  // records (most of them, at millions a second) looks nothing up. Cleared when a process is
  // forgotten, the only way a known thread stops being known.
  uint64_t last_thread_seen_ = ~uint64_t{0};
  std::unordered_map<PidHandle, StringId, PidHandleHash> kernel_names_;
  std::unordered_set<PidHandle, PidHandleHash> unnamed_kernels_;
  CorrelatorStats stats_;
  IttCorrelator itt_;
  DrmCorrelator drm_;
  ZeCorrelator ze_;
  std::unique_ptr<PythonFrameResolver> python_;
};

}  // namespace xtrace
