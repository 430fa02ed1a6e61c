// Correlation ids of submitting calls (launch_correlation.h).
#include "export/launch_correlation.h"

namespace xtrace {
namespace {
uint64_t ThreadKey(uint32_t pid, uint32_t tid) { return (uint64_t{pid} << 32) | tid; }
}  // namespace

uint64_t LaunchCorrelation::NoteCall(uint32_t pid, uint32_t tid, uint64_t start_ns) {
  Ring& ring = threads_[ThreadKey(pid, tid)];
  const Call call{start_ns, next_id_++};
  if (ring.calls.size() < kRemembered) {
    ring.calls.push_back(call);
  } else {
    ring.calls[ring.next] = call;
    ring.next = (ring.next + 1) % kRemembered;
  }
  return call.id;
}

uint64_t LaunchCorrelation::Find(uint32_t pid, uint32_t tid, uint64_t start_ns) const {
  auto it = threads_.find(ThreadKey(pid, tid));
  if (it == threads_.end()) return 0;
  const Ring& ring = it->second;
  // Newest first: an operation usually completes soon after it was submitted.
  const size_t n = ring.calls.size();
  for (size_t back = 1; back <= n; ++back) {
    const Call& c = ring.calls[(ring.next + n - back) % n];
    if (c.start_ns == start_ns) return c.id;
  }
  return 0;
}

}  // namespace xtrace
