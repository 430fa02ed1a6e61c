// The event model: what capture and correlation produce, what the log stores and what the
// exporters read. Times are CLOCK_MONOTONIC nanoseconds; names are StringIds into the
// StringTable that travels with the events.
#pragma once

#include <cstdint>
#include <variant>

#include "model/drm_event.h"
#include "model/itt_event.h"
#include "model/python_event.h"
#include "model/string_table.h"
#include "model/ze_events.h"

namespace xtrace {

// A traced process, emitted once when it is first seen (and again if its name changes).
struct ProcessInfo {
  uint32_t pid = 0;     // as the collector's pid namespace numbers it (include/xtrace/records.h)
  uint32_t ns_pid = 0;  // as its own pid namespace sees it (equal to pid outside containers)
  StringId comm = kEmptyString;
  StringId command_line = kEmptyString;  // arguments joined with spaces
  StringId cgroup = kEmptyString;        // cgroup v2 path, e.g. "/kubepods/.../<id>"
  StringId container_id = kEmptyString;  // 64 hex digits, when it runs in a container
  // Its rank in a distributed job, from its environment (correlate/process_rank.h); -1: none
  // or not read.
  int32_t rank = -1;
  // The number of ranks of its job, likewise; -1: none or not read.
  int32_t world_size = -1;
  // Nonzero: the process exec'd into this identity at this CLOCK_MONOTONIC time, and the
  // ProcessInfo before it for the same pid is who it was until then. 0: the process as first
  // seen.
  uint64_t exec_ns = 0;
};

// A thread's name, emitted once when the thread is first seen.
struct ThreadInfo {
  uint32_t pid = 0;
  uint32_t tid = 0;
  StringId name = kEmptyString;
};

// zeKernelCreate, or a kernel made before the attach whose name xtrace asked the process for
// (`learned`: the span is the hold it took, not a call of the process's; module unknown).
struct KernelCreate {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t module = 0;
  uint64_t kernel = 0;  // output handle, 0 if the call failed
  StringId name = kEmptyString;
  int32_t result = 0;  // ze_result_t
  bool name_truncated = false;
  bool learned = false;
};

// zeCommandListAppendLaunchKernel (or its cooperative or indirect variant), with the kernel's
// name resolved by the correlator.
struct KernelLaunch {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t command_list = 0;
  uint64_t kernel = 0;
  uint64_t signal_event = 0;
  uint32_t group_count[3] = {0, 0, 0};
  uint32_t num_wait_events = 0;
  int32_t result = 0;
  // The kernel's name if its zeKernelCreate was seen; otherwise "kernel@0x<handle>" and
  // name_known is false (the kernel was created before capture began).
  StringId kernel_name = kEmptyString;
  bool name_known = false;
  bool group_count_unreadable = false;
  uint8_t launch_kind = 0;  // enum xt_launch_kind (plain, cooperative, indirect, 1.14 ones)
};

// Records the capture lost (a ring was full) between two looks at its counters: where on the
// timeline drops happened, how many of each source, and how many of them the traced programs'
// own ITT rings lost (the BPF ring buffer lost the rest). The two rings have different remedies
// (model/drop_remedy.h).
struct RecordsDropped {
  uint64_t start_ns = 0;  // the previous look, which had found no new drop
  uint64_t end_ns = 0;    // the look that found these
  uint64_t level_zero = 0;
  uint64_t itt = 0;
  uint64_t drm = 0;
  uint64_t other = 0;     // thread names, process lifecycle
  uint64_t itt_rings = 0; // of `itt`: lost in the programs' own ITT rings (--itt-ring-size)
  uint64_t total() const { return level_zero + itt + drm + other; }
  // Adds the counts of `w` (not its times): a sum over windows.
  void AddCounts(const RecordsDropped& w) {
    level_zero += w.level_zero;
    itt += w.itt;
    drm += w.drm;
    other += w.other;
    itt_rings += w.itt_rings;
  }
};

// Why xtrace held a traced process or thread (XtraceHold).
enum class HoldCause : uint8_t {
  kUnknown = 0,        // written by a newer xtrace
  kAttachQueries = 1,  // a thread asked about objects made before the attach (ze_query.h)
  kExec = 2,           // the process exec'd: held until its new files were probed
  kLibraryLoad = 3,    // its dynamic linker mapped new objects: likewise
  kTableGetter = 4,    // it took a Level Zero function table (zeGet*ProcAddrTable)
  kLevelZeroInit = 5,  // its zeInit filled the loader's dispatch with the driver's functions
};

// A hold xtrace took and released: the time it stopped thread `tid` of `pid`, whatever the
// hold learned. Every thread of the process was stopped from start_ns to process_end_ns too:
// the whole hold at an exec, a library load or a table getter (`tid` is then the thread whose
// call made xtrace hold it), and at a query hold until the held thread was seized and the rest
// of the process continued (capture/holds/remote_call.h).
struct XtraceHold {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t process_end_ns = 0;  // in [start_ns, end_ns]
  HoldCause cause = HoldCause::kUnknown;
  uint32_t learned = 0;  // objects made before the attach it learned (query holds)
  uint32_t failed = 0;   // objects it asked about without an answer
  bool whole_process() const { return process_end_ns >= end_ns; }
};

using Event = std::variant<ProcessInfo, ThreadInfo, KernelCreate, KernelLaunch, IttTask, IttMarker,
                           CollectionChange, DrmFile, DrmIoctl, DrmFenceSignal, ApiCall,
                           DeviceInfo, ClockSample, ClockFit, DeviceQueue, DeviceOp, MemoryUsage,
                           RecordsDropped, UnfinishedCall, PythonStack, XtraceHold>;

}  // namespace xtrace
