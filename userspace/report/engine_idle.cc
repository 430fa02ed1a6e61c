// Busy time, idle causes, launch latency and largest gaps of an engine (engine_idle.h).
#include "report/engine_idle.h"

#include <algorithm>
#include <unordered_map>

namespace xtrace::report {

std::string IdleVerdict(uint64_t busy_ns, const IdleSplit& idle) {
  const uint64_t span = busy_ns + idle.total() - idle.held_ns;
  if (span == 0) return "";
  const uint64_t sync_side = idle.sync_ns + idle.waiting_ns;
  const uint64_t measured_idle = idle.launch_ns + sync_side;
  const uint64_t measured = busy_ns + measured_idle;
  if (measured == 0) return kVerdictEstimated;
  if (measured * 2 < span) return kVerdictMostlyEstimated;
  if (measured_idle * 10 < measured) return "busy";
  return idle.launch_ns >= sync_side ? "launch-bound" : "sync-bound";
}

void RecentHostActivity::Add(uint32_t pid, uint32_t tid, const std::string* name, uint64_t start_ns,
                             uint64_t end_ns) {
  threads_[(uint64_t{pid} << 32) | tid].Push({name, start_ns, end_ns});
}

std::vector<GapActivity> RecentHostActivity::Within(uint32_t pid, uint32_t tid, uint64_t start_ns,
                                                    uint64_t end_ns, size_t top) const {
  auto it = threads_.find((uint64_t{pid} << 32) | tid);
  if (it == threads_.end()) return {};
  std::unordered_map<const std::string*, uint64_t> overlap;
  for (const Entry& e : it->second.entries) {
    const uint64_t lo = std::max(e.start_ns, start_ns);
    const uint64_t hi = std::min(e.end_ns, end_ns);
    if (hi > lo) overlap[e.name] += holds_.Unheld(pid, tid, lo, hi);
  }
  std::vector<GapActivity> out;
  for (const auto& [name, ns] : overlap)
    if (ns) out.push_back({*name, ns});
  if (const uint64_t held = holds_.Within(pid, tid, start_ns, end_ns)) out.push_back({kHeldCause, held});
  std::sort(out.begin(), out.end(), [](const GapActivity& a, const GapActivity& b) {
    return a.overlap_ns != b.overlap_ns ? a.overlap_ns > b.overlap_ns : a.name < b.name;
  });
  if (out.size() > top) out.resize(top);
  return out;
}

void RecentHostActivity::AddPythonLine(uint32_t pid, uint32_t tid, const std::string* line,
                                       uint64_t start_ns) {
  python_lines_[(uint64_t{pid} << 32) | tid].Push({line, start_ns, start_ns});
}

std::string RecentHostActivity::PythonLineAt(uint32_t pid, uint32_t tid, uint64_t at_ns) const {
  auto it = python_lines_.find((uint64_t{pid} << 32) | tid);
  if (it == python_lines_.end()) return {};
  const Entry* latest = nullptr;
  for (const Entry& e : it->second.entries)
    if (e.start_ns <= at_ns && (!latest || e.start_ns >= latest->start_ns)) latest = &e;
  return latest ? *latest->name : std::string();
}

std::optional<uint64_t> RecentHostActivity::EndOfCall(uint32_t pid, uint32_t tid,
                                                      uint64_t start_ns) const {
  auto it = threads_.find((uint64_t{pid} << 32) | tid);
  if (it == threads_.end()) return std::nullopt;
  // A thread's calls and ranges arrive as they end, so its ring is in order of their ends: the
  // call that started at `start_ns` is the first to end at or after it (a call nests in no
  // other call; a range around it ends later). A binary search, then a look at the next few:
  // this runs for every measured operation, whose call is some hundreds of entries back (the
  // operations' reorder window), and a scan was half of a report's time.
  const Ring& ring = it->second;
  const size_t n = ring.entries.size();
  const size_t oldest = n < kPerThread ? 0 : ring.next;
  const auto at = [&](size_t i) -> const Entry& { return ring.entries[(oldest + i) % n]; };
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (at(mid).end_ns < start_ns) lo = mid + 1;
    else hi = mid;
  }
  for (size_t i = lo; i < n && i < lo + 8; ++i)
    if (at(i).start_ns == start_ns) return at(i).end_ns;
  return std::nullopt;
}

void EngineIdle::Add(const DeviceOp& op, const RecentHostActivity* activity) {
  const Op added{op.start_ns, std::max(op.end_ns, op.start_ns), op.submit_ns, op.sync_ns,
                 op.pid, op.submit_tid, op.measured, op.sync_ns != 0};
  // After every operation that starts no later: the first place from the back.
  auto at = window_.end();
  while (at != window_.begin() && std::prev(at)->start_ns > added.start_ns) --at;
  window_.insert(at, added);
  if (window_.size() > kReorderWindow) {
    const Op b = window_.front();
    window_.pop_front();
    Process(b, activity);
  }
}

void EngineIdle::Finish(const RecentHostActivity* activity) {
  for (const Op& op : window_) Process(op, activity);
  window_.clear();
}

void EngineIdle::Process(const Op& b, const RecentHostActivity* activity) {
  ++operations_;
  if (!started_) {
    started_ = true;
    first_start_ = b.start_ns;
    last_end_ = b.start_ns;
  }
  const uint64_t start = std::max(b.start_ns, last_end_);
  const uint64_t gap = start - last_end_;
  const uint64_t own = b.end_ns > start ? b.end_ns - start : 0;
  if (b.measured) {
    // The part of it before last_end_ lies under operations already counted: under a measured
    // one's busy time (up to busy_until_) or an estimated one's bound, counted unknown. The
    // engine did run it there, so that part moves from unknown to busy: an estimated bound
    // around measured kernels (the other operations of their command list) must not turn
    // their measured time into 0% busy.
    const uint64_t under_from = std::max(b.start_ns, busy_until_);
    const uint64_t under_to = std::min(b.end_ns, start);
    if (under_to > under_from) {
      const uint64_t moved = std::min(under_to - under_from, idle_.unknown_ns);
      idle_.unknown_ns -= moved;
      busy_ns_ += moved;
    }
    busy_ns_ += own;
    busy_until_ = std::max(busy_until_, b.end_ns);
    // Launch latency: the submitting call's end -> device start (0 when the device started
    // before the call returned). The call is looked up among its thread's recent calls; one
    // scrolled out of them is measured from its start.
    if (b.submit_ns != 0 && b.start_ns >= b.submit_ns) {
      uint64_t from = b.submit_ns;
      if (activity)
        if (auto end = activity->EndOfCall(b.pid, b.submit_tid, b.submit_ns)) from = *end;
      launch_latency_.Add(b.start_ns > from ? b.start_ns - from : 0);
    }
  } else {
    ++estimated_operations_;
    idle_.unknown_ns += own;  // an estimated interval is a bound, not a busy time
  }
  if (gap > 0) {
    IdleSplit split;
    // Time xtrace held the submitting thread in [from, to): none of the program's doing.
    const auto held = [&](uint64_t from, uint64_t to) {
      return activity && b.submit_tid ? activity->holds().Within(b.pid, b.submit_tid, from, to) : 0;
    };
    if (!b.measured || !prev_.measured || b.submit_ns == 0) {
      split.held_ns = held(last_end_, start);
      split.unknown_ns = gap - split.held_ns;
    } else {
      const uint64_t submitted = std::clamp(b.submit_ns, last_end_, start);
      // Held before the submission (the launch or sync part), and after it: B's submitting
      // call was held at its entry, before it reached the device, so a gap it ends would
      // have been "waiting".
      const uint64_t held_before = held(last_end_, submitted), held_after = held(submitted, start);
      const uint64_t unsubmitted = submitted - last_end_ - held_before;
      if (prev_.has_sync && prev_.sync_ns <= b.submit_ns) {
        split.sync_ns = unsubmitted;
      } else {
        split.launch_ns = unsubmitted;
      }
      split.waiting_ns = start - submitted - held_after;
      split.held_ns = held_before + held_after;
    }
    idle_.Merge(split);
    if (top_gaps_ > 0 && (gaps_.size() < top_gaps_ || gap > gaps_.back().duration_ns())) {
      EngineGap g{last_end_, start, "", b.submit_tid, {}, {}};
      const std::pair<uint64_t, const char*> parts[] = {{split.launch_ns, "launch"},
                                                        {split.sync_ns, "sync"},
                                                        {split.waiting_ns, "waiting"},
                                                        {split.unknown_ns, "unknown"},
                                                        {split.held_ns, kHeldCause}};
      g.cause = std::max_element(std::begin(parts), std::end(parts), [](auto& x, auto& y) {
                  return x.first < y.first;
                })->second;
      if (activity) {
        g.host_activity = activity->Within(b.pid, b.submit_tid, last_end_, start, 3);
        g.python_line = activity->PythonLineAt(b.pid, b.submit_tid, b.submit_ns);
      }
      KeepGap(std::move(g));
    }
  }
  last_end_ = std::max(last_end_, b.end_ns);
  prev_ = b;
}

void EngineIdle::KeepGap(EngineGap gap) {
  auto pos = std::upper_bound(gaps_.begin(), gaps_.end(), gap, [](const EngineGap& a, const EngineGap& b) {
    return a.duration_ns() > b.duration_ns();
  });
  gaps_.insert(pos, std::move(gap));
  if (gaps_.size() > top_gaps_) gaps_.resize(top_gaps_);
}

void EngineIdle::Merge(const EngineIdle& o) {
  span_ns_ += o.span_ns();
  operations_ += o.operations_;
  estimated_operations_ += o.estimated_operations_;
  busy_ns_ += o.busy_ns_;
  idle_.Merge(o.idle_);
  launch_latency_.Merge(o.launch_latency_);
  for (const EngineGap& g : o.gaps_) KeepGap(g);
}

}  // namespace xtrace::report
