// The times xtrace held traced threads (held_time.h).
#include "report/held_time.h"

#include <algorithm>

namespace xtrace::report {

bool HeldTime::Note(const Event& event) {
  if (const auto* hold = std::get_if<XtraceHold>(&event)) {
    ++records_;
    if (hold->end_ns > hold->start_ns) records_ns_ += hold->end_ns - hold->start_ns;
    const auto cause = static_cast<size_t>(hold->cause);
    ++by_cause_[cause < by_cause_.size() ? cause : 0];
    // The learned creations of the same hold, read before it, have its span: merged with it.
    Add(threads_[(uint64_t{hold->pid} << 32) | hold->tid], hold->start_ns, hold->end_ns);
    if (hold->process_end_ns > hold->start_ns)
      Add(processes_[hold->pid], hold->start_ns, std::min(hold->process_end_ns, hold->end_ns));
    return true;
  }
  uint32_t pid = 0, tid = 0;
  uint64_t start_ns = 0, end_ns = 0;
  if (const auto* call = std::get_if<ApiCall>(&event); call && call->learned) {
    pid = call->pid, tid = call->tid, start_ns = call->start_ns, end_ns = call->end_ns;
  } else if (const auto* create = std::get_if<KernelCreate>(&event); create && create->learned) {
    pid = create->pid, tid = create->tid, start_ns = create->start_ns, end_ns = create->end_ns;
  } else {
    return false;
  }
  const auto [added, own] = Add(threads_[(uint64_t{pid} << 32) | tid], start_ns, end_ns);
  learned_ns_ += added;
  if (own && added) ++learned_holds_;
  return true;
}

std::pair<uint64_t, bool> HeldTime::Add(Spans& spans, uint64_t start_ns, uint64_t end_ns) {
  if (end_ns <= start_ns) return {0, false};
  // The first span that starts after this one; usually none (this hold is the latest) or
  // this hold's own earlier record just before it.
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
  const bool own = from == to;
  spans.erase(spans.begin() + static_cast<ptrdiff_t>(from), spans.begin() + static_cast<ptrdiff_t>(to));
  spans.insert(spans.begin() + static_cast<ptrdiff_t>(from), {lo, hi});
  if (spans.size() > kPerTrack) spans.erase(spans.begin());
  return {(hi - lo) - before, own};
}

uint64_t HeldTime::Within(uint32_t pid, uint32_t tid, uint64_t start_ns, uint64_t end_ns) const {
  // Most logs have no holds: every call pays one test.
  if ((threads_.empty() && processes_.empty()) || end_ns <= start_ns) return 0;
  // The parts of the thread's holds and of its process's inside the interval. Spans of one
  // list never overlap, so their ends are in order too: from the latest back to the first
  // that ends before the interval.
  Spans parts;
  auto clip = [&](const Spans& spans) {
    for (auto span = spans.rbegin(); span != spans.rend() && span->second > start_ns; ++span) {
      const uint64_t lo = std::max(span->first, start_ns), hi = std::min(span->second, end_ns);
      if (hi > lo) parts.emplace_back(lo, hi);
    }
  };
  if (auto it = threads_.find((uint64_t{pid} << 32) | tid); it != threads_.end()) clip(it->second);
  if (auto it = processes_.find(pid); it != processes_.end()) clip(it->second);
  // A query hold's thread and its process are held together at first: their union counts.
  std::sort(parts.begin(), parts.end());
  uint64_t held = 0, reached = 0;
  for (const auto& [lo, hi] : parts) {
    const uint64_t from = std::max(lo, reached);
    if (hi > from) held += hi - from;
    reached = std::max(reached, hi);
  }
  return held;
}

std::string HeldTime::Causes() const {
  constexpr const char* kQueries = " to ask about objects made before the attach";
  if (!records_ || records_ == by_cause_[static_cast<size_t>(HoldCause::kAttachQueries)])
    return kQueries;
  struct Said {
    HoldCause cause;
    const char* one;
    const char* many;
  };
  static constexpr Said kSaid[] = {
      {HoldCause::kAttachQueries, kQueries, kQueries},
      {HoldCause::kExec, " at an exec", " at execs"},
      {HoldCause::kLibraryLoad, " at a library load", " at library loads"},
      {HoldCause::kTableGetter, " at a function table getter (zeGet*ProcAddrTable)",
       " at function table getters (zeGet*ProcAddrTable)"},
      {HoldCause::kLevelZeroInit, " at zeInit", " at zeInit"},
      {HoldCause::kUnknown, " for a reason this xtrace does not know", " for reasons this xtrace does not know"},
  };
  std::string text = ":";
  for (const Said& s : kSaid) {
    const uint64_t n = by_cause_[static_cast<size_t>(s.cause)];
    if (!n) continue;
    text += (text.size() > 1 ? ", " : " ") + std::to_string(n) + (n == 1 ? s.one : s.many);
  }
  return text;
}

}  // namespace xtrace::report
