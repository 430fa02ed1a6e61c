// Matches the signals of fences made by DRM submission ioctls to the host API calls that
// issued those ioctls, so the device timeline can bound the end of the work a call submitted
// by the time its fence signalled (the work was done by then).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

namespace xtrace {

class SubmissionFences {
 public:
  // Device operations (ids first..last) whose end a fence signal bounds.
  struct Bound {
    uint64_t first_id = 0;
    uint64_t last_id = 0;
    uint64_t signaled_ns = 0;
  };
  // Calls remembered per thread, and signals waiting for the call that issued their ioctl.
  static constexpr size_t kMaxPerThread = 64;

  // A host call on pid/tid spanning [start_ns, end_ns] submitted operations first..last.
  // Returns the bounds of signals that arrived before the call's record did.
  std::vector<Bound> OnSubmittingCall(uint32_t pid, uint32_t tid, uint64_t start_ns,
                                      uint64_t end_ns, uint64_t first_id, uint64_t last_id);
  // A fence made by a submission ioctl that began at ioctl_start_ns on pid/tid signalled.
  std::optional<Bound> OnSignal(uint32_t pid, uint32_t tid, uint64_t ioctl_start_ns,
                                uint64_t signaled_ns);

 private:
  struct Call {
    uint64_t start_ns, end_ns, first_id, last_id;
  };
  struct EarlySignal {
    uint64_t ioctl_start_ns, signaled_ns;
  };
  struct Thread {
    std::deque<Call> calls;          // oldest first
    std::deque<EarlySignal> early;  // ioctl after every call seen so far on the thread
  };
  std::unordered_map<uint64_t, Thread> threads_;
};

}  // namespace xtrace
