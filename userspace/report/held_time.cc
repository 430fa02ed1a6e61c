// The times xtrace held traced threads (held_time.h).
#include "report/held_time.h"

#include <algorithm>

namespace xtrace::report {

bool HeldTime::Note(const Event& event) {
  if (const auto* call = std::get_if<ApiCall>(&event); call && call->learned) {
    Add(call->pid, call->tid, call->start_ns, call->end_ns);
    return true;
  }
  if (const auto* create = std::get_if<KernelCreate>(&event); create && create->learned) {
    Add(create->pid, create->tid, create->start_ns, create->end_ns);
    return true;
  }
  return false;
}

void HeldTime::Add(uint32_t pid, uint32_t tid, uint64_t start_ns, uint64_t end_ns) {
  if (end_ns <= start_ns) return;
  auto& spans = threads_[(uint64_t{pid} << 32) | tid];
  // The first span that starts after this one; usually none (this hold is the thread's
  // latest) or this hold's own earlier record just before it.
  size_t at = spans.size();
  while (at > 0 && spans[at - 1].first > start_ns) --at;
  // The spans it overlaps are merged with it: the other records of the same hold.
  uint64_t lo = start_ns, hi = end_ns;
  size_t from = at, to = at;
  if (at > 0 && spans[at - 1].second > start_ns) {
    from = at - 1;
    lo = spans[from].first;
    hi = std::max(hi, spans[from].second);
  }
  while (to < spans.size() && spans[to].first < hi) hi = std::max(hi, spans[to++].second);
  uint64_t before = 0;
  for (size_t i = from; i < to; ++i) before += spans[i].second - spans[i].first;
  if (from == to) ++holds_;
  total_ns_ += (hi - lo) - before;
  spans.erase(spans.begin() + static_cast<ptrdiff_t>(from), spans.begin() + static_cast<ptrdiff_t>(to));
  spans.insert(spans.begin() + static_cast<ptrdiff_t>(from), {lo, hi});
  if (spans.size() > kPerThread) spans.erase(spans.begin());
}

uint64_t HeldTime::Within(uint32_t pid, uint32_t tid, uint64_t start_ns, uint64_t end_ns) const {
  // Most logs have no holds: every call pays one test.
  if (threads_.empty() || end_ns <= start_ns) return 0;
  auto it = threads_.find((uint64_t{pid} << 32) | tid);
  if (it == threads_.end()) return 0;
  uint64_t held = 0;
  // Spans never overlap, so their ends are in order too: from the latest back to the first
  // that ends before the interval.
  for (auto span = it->second.rbegin(); span != it->second.rend() && span->second > start_ns; ++span) {
    const uint64_t lo = std::max(span->first, start_ns), hi = std::min(span->second, end_ns);
    if (hi > lo) held += hi - lo;
  }
  return held;
}

}  // namespace xtrace::report
