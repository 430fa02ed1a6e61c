// LaunchCorrelation: the integer `correlation` that ties a host call which may submit device
// work to the device operations it submitted, as PyTorch's profiler (Kineto) writes it and
// Holistic Trace Analysis joins on (docs/kineto-json.md).
//
// The host call is written first, before any of its operations is known, so every call that
// can submit (a launch or memory append, zeCommandQueueExecuteCommandLists) takes the next id
// when it is written; a device operation later finds the id of its submitting call by that
// call's (pid, tid, start). One counter for the whole trace makes ids unique across processes.
// Memory stays flat: each thread remembers only its last kRemembered calls, so an operation
// submitted more than that many submitting calls earlier on its thread gets no id (0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace xtrace {

class LaunchCorrelation {
 public:
  static constexpr size_t kRemembered = 4096;

  // A new id (from 1) for the call that started at `start_ns` on (pid, tid).
  uint64_t NoteCall(uint32_t pid, uint32_t tid, uint64_t start_ns);
  // The id of that call, or 0 if it was never noted or is no longer remembered.
  uint64_t Find(uint32_t pid, uint32_t tid, uint64_t start_ns) const;
  // Where the next new id starts: each log of a merged trace numbers its calls in a range of
  // its own, so no two logs' calls share an id.
  void StartIdsAt(uint64_t first) { next_id_ = first; }

 private:
  struct Call {
    uint64_t start_ns;
    uint64_t id;
  };
  struct Ring {
    std::vector<Call> calls;
    size_t next = 0;  // where the next call goes once the ring is full
  };
  std::unordered_map<uint64_t, Ring> threads_;  // (pid << 32 | tid) -> its recent calls
  uint64_t next_id_ = 1;
};

}  // namespace xtrace
