// ITT events of the model: labelled spans (tasks, regions, frames, PyTorch ranges) paired by
// the correlator, instant markers, and changes of a process's collection state.
#pragma once

#include <cstdint>

#include "model/string_table.h"

namespace xtrace {

enum class IttTaskKind : uint8_t {
  kTask,            // __itt_task_begin/end or a PyTorch range: nests on its thread
  kOverlappedTask,  // __itt_task_begin/end_overlapped: paired by id, may overlap others
  kRegion,          // __itt_region_begin/end: paired by id
  kFrame,           // __itt_frame_begin_v3/end_v3: paired by id (0 when none was given)
};

// A begin paired with its end. Times are CLOCK_MONOTONIC ns.
struct IttTask {
  uint32_t pid = 0;
  uint32_t tid = 0;      // the thread that began it
  uint32_t end_tid = 0;  // the thread that ended it (differs only for id-paired kinds)
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  StringId domain = kEmptyString;
  StringId name = kEmptyString;
  IttTaskKind kind = IttTaskKind::kTask;
  uint64_t id = 0;  // __itt_id.d1 for id-paired kinds
  bool name_truncated = false;   // the probe cut the name at XT_MAX_ITT_NAME; it ends in "…"
  // Unbalanced input, kept rather than dropped so the timeline shows it:
  bool unfinished = false;       // no end was seen: end_ns is when the capture, the
                                 // process's collection or the process itself ended
  bool begin_missing = false;    // an end with no begin (begun before the capture or a pause,
                                 // or on another thread): start_ns == end_ns, name unknown
  bool closed_by_outer = false;  // never ended itself: closed when an enclosing task of its
                                 // thread ended
};

// __itt_scope of a marker.
enum class IttMarkerScope : uint8_t { kUnknown, kGlobal, kProcess, kThread, kTask };

// __itt_marker or a PyTorch itt_mark: a point in time on a thread.
struct IttMarker {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t ts_ns = 0;
  StringId domain = kEmptyString;
  StringId name = kEmptyString;
  IttMarkerScope scope = IttMarkerScope::kThread;
  bool name_truncated = false;  // the probe cut the name at XT_MAX_ITT_NAME; it ends in "…"
};

enum class CollectionState : uint8_t { kCollecting, kPaused, kDetached };

// Why collection of a process changed.
enum class CollectionCause : uint8_t {
  kIttCall,      // the process called __itt_pause, __itt_resume or __itt_detach
  kStartPaused,  // the capture began paused (--start-paused)
};

// A process's collection started, paused, resumed or ended at ts_ns; every source's
// events of that process obey it.
struct CollectionChange {
  uint32_t pid = 0;
  uint32_t tid = 0;  // the calling thread (0 for kStartPaused)
  uint64_t ts_ns = 0;
  CollectionState state = CollectionState::kCollecting;
  CollectionCause cause = CollectionCause::kIttCall;
};

}  // namespace xtrace
