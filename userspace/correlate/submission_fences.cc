// Fence signals to submitting calls; see submission_fences.h.
#include "correlate/submission_fences.h"

namespace xtrace {
namespace {

uint64_t ThreadKey(uint32_t pid, uint32_t tid) { return (uint64_t{pid} << 32) | tid; }

}  // namespace

std::vector<SubmissionFences::Bound> SubmissionFences::OnSubmittingCall(
    uint32_t pid, uint32_t tid, uint64_t start_ns, uint64_t end_ns, uint64_t first_id,
    uint64_t last_id) {
  Thread& thread = threads_[ThreadKey(pid, tid)];
  thread.calls.push_back(Call{start_ns, end_ns, first_id, last_id});
  if (thread.calls.size() > kMaxPerThread) thread.calls.pop_front();
  // A call's record arrives when it returns: a signal seen earlier whose ioctl began inside
  // it belongs to it; one whose ioctl began before it ran outside any submitting call.
  std::vector<Bound> bounds;
  std::deque<EarlySignal> still_early;
  for (const EarlySignal& s : thread.early) {
    if (s.ioctl_start_ns > end_ns)
      still_early.push_back(s);
    else if (s.ioctl_start_ns >= start_ns)
      bounds.push_back(Bound{first_id, last_id, s.signaled_ns});
  }
  thread.early.swap(still_early);
  return bounds;
}

std::optional<SubmissionFences::Bound> SubmissionFences::OnSignal(uint32_t pid, uint32_t tid,
                                                                  uint64_t ioctl_start_ns,
                                                                  uint64_t signaled_ns) {
  Thread& thread = threads_[ThreadKey(pid, tid)];
  for (auto it = thread.calls.rbegin(); it != thread.calls.rend(); ++it)
    if (ioctl_start_ns >= it->start_ns && ioctl_start_ns <= it->end_ns)
      return Bound{it->first_id, it->last_id, signaled_ns};
  if (thread.calls.empty() || ioctl_start_ns > thread.calls.back().end_ns) {
    thread.early.push_back(EarlySignal{ioctl_start_ns, signaled_ns});
    if (thread.early.size() > kMaxPerThread) thread.early.pop_front();
  }
  return std::nullopt;
}

}  // namespace xtrace
