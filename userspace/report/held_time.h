// The times xtrace itself held traced threads, read from a log: what the report leaves out
// of the application's time. The log has a record of each hold (XtraceHold): a thread of a
// process attached mid-run held at the entry of a call that uses an object made before the
// attach while xtrace asks the process about it (capture/sources/ze_query.h), the rest of the
// process stopped with it until that thread was seized; a whole process held as it exec'd,
// loaded libraries or took a Level Zero function table, until its new files were probed. A
// log written before those records says only the query holds that learned something: each
// object learned is a creation marked `learned` whose start and end are that hold's, so one
// hold is as many records with one span. Those spans stand in for the holds there.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/event.h"

namespace xtrace::report {

class HeldTime {
 public:
  // Takes a hold record, or the hold a learned creation stands for; false for any other event.
  bool Note(const Event& event);
  // How much of [start_ns, end_ns) xtrace held thread `tid` of `pid`, by a hold of the thread
  // or of its whole process. The capture writes a hold's records as the hold ends, before the
  // call it sat in returns, so a call's holds are noted by the time the call is read.
  uint64_t Within(uint32_t pid, uint32_t tid, uint64_t start_ns, uint64_t end_ns) const;
  // The rest of [start_ns, end_ns) (0 when it is empty or reversed): the thread's own time.
  uint64_t Unheld(uint32_t pid, uint32_t tid, uint64_t start_ns, uint64_t end_ns) const {
    const uint64_t span = end_ns > start_ns ? end_ns - start_ns : 0;
    return span - std::min(span, Within(pid, tid, start_ns, end_ns));
  }

  // The holds and their time together, whatever the selection: the hold records when the log
  // has them, else the distinct spans of the learned creations (their records merged).
  uint64_t holds() const { return records_ ? records_ : learned_holds_; }
  uint64_t total_ns() const { return records_ ? records_ns_ : learned_ns_; }
  // Why, for the report's sentence: " to ask about objects made before the attach", or with
  // other causes ": 3 to ask about objects made before the attach, 2 at library loads".
  std::string Causes() const;

 private:
  // Spans of one thread or process, in start order and never overlapping.
  using Spans = std::vector<std::pair<uint64_t, uint64_t>>;
  // Keeps the latest holds of a thread, and of a process: a call is read soon after its
  // holds, and a process holds as many times as it uses new objects.
  static constexpr size_t kPerTrack = 256;
  // Adds [start_ns, end_ns) to `spans`, merged with those it overlaps; the time it added
  // that was not there, and whether it overlapped none (a hold of its own).
  static std::pair<uint64_t, bool> Add(Spans& spans, uint64_t start_ns, uint64_t end_ns);

  std::unordered_map<uint64_t, Spans> threads_;    // pid << 32 | tid
  std::unordered_map<uint32_t, Spans> processes_;  // every thread of the process held
  uint64_t records_ = 0, records_ns_ = 0;
  uint64_t learned_holds_ = 0, learned_ns_ = 0;
  std::array<uint64_t, 6> by_cause_{};  // hold records per HoldCause
};

}  // namespace xtrace::report
