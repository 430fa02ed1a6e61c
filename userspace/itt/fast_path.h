// The collector's side of the ITT fast path (include/xtrace/itt_ring.h): while xtrace has
// attached, each ITT call appends one record to its thread's ring in the process's own
// memory instead of calling the probe site, so it costs a TSC read and a few stores instead
// of a uprobe trap. While nobody is attached the only cost is one load and a branch.
#pragma once

#include <cstdint>

#include "xtrace/itt_ring.h"

// The control block xtrace finds by symbol (exported, see exports.map).
extern "C" __attribute__((visibility("protected"))) xt_itt_control xtrace_itt_control;

namespace xtrace::itt {

// One ITT call as the fast path records it.
struct FastEvent {
  uint32_t op;  // enum xt_itt_op
  const void* domain = nullptr;
  const void* name = nullptr;
  uint64_t id_d1 = 0, id_d2 = 0;
  uint64_t extra = 0;
  bool has_extra = false;
  const char* text = nullptr;  // copied into the record (thread names)
};

// True while xtrace is attached: the call should go to Append.
inline bool FastPathAttached() {
  return __atomic_load_n(&xtrace_itt_control.generation, __ATOMIC_RELAXED) != 0;
}

// Records `e` in the calling thread's ring. False when the fast path let go instead (the
// heartbeat went stale: xtrace is gone or stalled), in which case the caller reports the
// call through the probe site, as when nobody is attached. A full ring counts the record as
// dropped and still returns true.
bool Append(const FastEvent& e);

}  // namespace xtrace::itt
