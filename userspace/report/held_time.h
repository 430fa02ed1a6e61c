// The times xtrace itself held traced threads, read from a log: what the report leaves out
// of the application's time. A thread of a process attached mid-run is held at the entry of a
// call that uses an object made before the attach while xtrace asks the process about it
// (capture/sources/ze_query.h); each object learned is logged as a creation marked `learned`
// whose start and end are that hold's, so one hold is as many records with one span.
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/event.h"

namespace xtrace::report {

class HeldTime {
 public:
  // Takes the hold a learned creation stands for; false for any other event.
  bool Note(const Event& event);
  // How much of [start_ns, end_ns) xtrace held thread `tid` of `pid`. The capture writes a
  // hold's records as the hold ends, before the call it sat in returns, so a call's holds are
  // noted by the time the call is read.
  uint64_t Within(uint32_t pid, uint32_t tid, uint64_t start_ns, uint64_t end_ns) const;
  // The rest of [start_ns, end_ns) (0 when it is empty or reversed): the thread's own time.
  uint64_t Unheld(uint32_t pid, uint32_t tid, uint64_t start_ns, uint64_t end_ns) const {
    const uint64_t span = end_ns > start_ns ? end_ns - start_ns : 0;
    return span - std::min(span, Within(pid, tid, start_ns, end_ns));
  }

  // Distinct holds (their records merged) and their time together, whatever the selection.
  uint64_t holds() const { return holds_; }
  uint64_t total_ns() const { return total_ns_; }

 private:
  // Keeps the latest holds of a thread, in start order and never overlapping: a call is
  // read soon after its holds, and a process holds as many times as it uses new objects.
  static constexpr size_t kPerThread = 256;
  void Add(uint32_t pid, uint32_t tid, uint64_t start_ns, uint64_t end_ns);

  std::unordered_map<uint64_t, std::vector<std::pair<uint64_t, uint64_t>>> threads_;
  uint64_t holds_ = 0;
  uint64_t total_ns_ = 0;
};

}  // namespace xtrace::report
