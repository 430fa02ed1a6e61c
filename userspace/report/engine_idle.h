// GPU utilization of one engine (device queue) from its operations: busy time, and idle time
// split by cause, with launch latency percentiles and the largest gaps. Operations may arrive
// a little out of start order (they are logged when their completion is seen); a small
// reorder window puts them back, so memory stays flat however long the log.
//
// Idle causes of a gap between operation A (ended at g0) and the next, B (started at g1):
//   launch   nothing was submitted and the host had not been waiting for the device: the host
//            was late (launch-bound);
//   sync     nothing was submitted because the host first waited for A to complete (A was
//            seen complete before B was submitted): a synchronization drained the engine
//            (sync-bound);
//   waiting  B had been submitted and had not started: submission latency or a dependency;
//   unknown  A or B has estimated times, or B's submission time is not known;
//   held     xtrace held B's submitting thread (report/held_time.h): the part of the gap
//            under such a hold is taken out of whichever cause it would have been (the
//            thread was stopped inside the call that submits B, so "waiting" mostly).
// busy + launch + sync + waiting + unknown + held = the engine's span (first start to last end).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/event.h"
#include "report/duration_stats.h"
#include "report/held_time.h"

namespace xtrace::report {

// What a submitting thread was doing during a gap: one host call or range name and how much
// of the gap it covered.
struct GapActivity {
  std::string name;
  uint64_t overlap_ns = 0;
};

struct EngineGap {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  std::string cause;  // the largest part: launch, sync, waiting, unknown, kHeldCause
  uint32_t submit_tid = 0;
  std::vector<GapActivity> host_activity;  // largest first
  // The Python line (user code) of the call that submitted the operation ending the gap:
  // where the program was when it got work to the engine again. "" without Python frames.
  std::string python_line;
  uint64_t duration_ns() const { return end_ns - start_ns; }
};

// The cause of a gap (and the name of the submitting thread's activity) while xtrace held
// the submitting thread.
inline constexpr const char* kHeldCause = "held by xtrace";

struct IdleSplit {
  uint64_t launch_ns = 0;
  uint64_t sync_ns = 0;
  uint64_t waiting_ns = 0;
  uint64_t unknown_ns = 0;
  uint64_t held_ns = 0;  // xtrace held the submitting thread: none of the program's doing
  uint64_t total() const { return launch_ns + sync_ns + waiting_ns + unknown_ns + held_ns; }
  void Merge(const IdleSplit& o) {
    launch_ns += o.launch_ns;
    sync_ns += o.sync_ns;
    waiting_ns += o.waiting_ns;
    unknown_ns += o.unknown_ns;
    held_ns += o.held_ns;
  }
};

// The verdicts that say an engine's time was not measured: nothing of its span, or less than
// half of it (the rest lies around operations without timestamps, whose bounds are no timing).
inline constexpr const char* kVerdictEstimated = "estimated";
inline constexpr const char* kVerdictMostlyEstimated = "mostly estimated";

// The verdict for an engine from the measured part of its span (busy, launch, sync and
// waiting; unknown time, around estimated operations, is left out so that a few estimated
// operations do not hide what the measured ones show, and held time, xtrace's, is no part of
// the program's span at all): "launch-bound", "sync-bound" or
// "busy" (idle under 10% of the measured part) when at least half of the span was measured;
// kVerdictMostlyEstimated when less was (a verdict would speak for time nobody measured:
// 2% busy measured around 98% estimated is not "busy"); kVerdictEstimated when none was;
// "" without operations.
std::string IdleVerdict(uint64_t busy_ns, const IdleSplit& idle);

// Host calls of recent threads, so a gap can say what its submitting thread was doing. A
// bounded ring per thread. It keeps the times xtrace held threads too (holds()).
class RecentHostActivity {
 public:
  void Add(uint32_t pid, uint32_t tid, const std::string* name, uint64_t start_ns, uint64_t end_ns);
  // The names covering most of [start, end) on the thread, largest first, at most `top`. The
  // time xtrace held the thread is kHeldCause's, not that of the call it was held in.
  std::vector<GapActivity> Within(uint32_t pid, uint32_t tid, uint64_t start_ns, uint64_t end_ns,
                                  size_t top) const;
  HeldTime& holds() { return holds_; }
  const HeldTime& holds() const { return holds_; }
  // The end of the thread's call that started at `start_ns`, if it is still remembered.
  std::optional<uint64_t> EndOfCall(uint32_t pid, uint32_t tid, uint64_t start_ns) const;
  // The Python line a traced call of the thread was made from (`line` lives as long as this),
  // and the line of the latest such call that began at or before `at_ns`, or "".
  void AddPythonLine(uint32_t pid, uint32_t tid, const std::string* line, uint64_t start_ns);
  std::string PythonLineAt(uint32_t pid, uint32_t tid, uint64_t at_ns) const;

 private:
  static constexpr size_t kPerThread = 1024;
  struct Entry {
    const std::string* name;
    uint64_t start_ns, end_ns;
  };
  struct Ring {
    std::vector<Entry> entries;
    size_t next = 0;
    // Appends, or once full overwrites the oldest.
    void Push(const Entry& e) {
      if (entries.size() < kPerThread) {
        entries.push_back(e);
      } else {
        entries[next] = e;
        next = (next + 1) % kPerThread;
      }
    }
  };
  // By (pid << 32 | tid). Hashed: looked up for every call and every measured operation.
  std::unordered_map<uint64_t, Ring> threads_;
  std::unordered_map<uint64_t, Ring> python_lines_;  // per thread, entries without an end
  HeldTime holds_;
};

class EngineIdle {
 public:
  explicit EngineIdle(size_t top_gaps = 5) : top_gaps_(top_gaps) {}

  // `activity` (may be null) is asked about the submitting thread when a gap is among the
  // largest so far.
  void Add(const DeviceOp& op, const RecentHostActivity* activity);
  // Processes what the reorder window still holds. Call once, after the last Add.
  void Finish(const RecentHostActivity* activity);
  void Merge(const EngineIdle& o);

  size_t top_gaps() const { return top_gaps_; }
  uint64_t operations() const { return operations_; }
  uint64_t estimated_operations() const { return estimated_operations_; }
  uint64_t span_ns() const { return span_ns_ + (last_end_ - first_start_); }
  uint64_t busy_ns() const { return busy_ns_; }
  const IdleSplit& idle() const { return idle_; }
  const LatencyHistogram& launch_latency() const { return launch_latency_; }
  const std::vector<EngineGap>& largest_gaps() const { return gaps_; }

 private:
  static constexpr size_t kReorderWindow = 256;
  struct Op {
    uint64_t start_ns, end_ns, submit_ns, sync_ns;
    uint32_t pid, submit_tid;
    bool measured, has_sync;
  };
  void Process(const Op& b, const RecentHostActivity* activity);
  void KeepGap(EngineGap gap);

  size_t top_gaps_;
  // The reorder window in start order, operations that start together in arrival order.
  // Operations arrive nearly in order, so each goes in a few places from the back and leaves
  // from the front (a tree's node per operation cost a sixth of a report's time).
  std::deque<Op> window_;
  bool started_ = false;
  Op prev_{};
  uint64_t first_start_ = 0;
  uint64_t last_end_ = 0;
  uint64_t span_ns_ = 0;  // of engines merged in
  uint64_t operations_ = 0;
  uint64_t estimated_operations_ = 0;
  uint64_t busy_ns_ = 0;
  uint64_t busy_until_ = 0;  // the latest end of a measured operation
  IdleSplit idle_;
  LatencyHistogram launch_latency_;
  std::vector<EngineGap> gaps_;  // largest first, at most top_gaps_
};

}  // namespace xtrace::report
