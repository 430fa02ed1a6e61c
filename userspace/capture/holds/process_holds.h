// The capture's side of holding processes (include/xtrace/hold.h): BPF stops a selected
// process as it execs or as its linker maps new objects, and says so in the record; the
// capture scans and probes the process as usual, then continues it here. Every hold the
// capture heard of is released at its next turn of the loop, whatever its scan found (nothing
// new, an error, a process out of scope); the guardian continues the rest (the bound, the end).
// Each hold released here is told (Released), for the log: the process stood still meanwhile.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "base/status.h"
#include "capture/holds/hold_guardian.h"
#include "model/event.h"
#include "xtrace/records.h"

namespace xtrace {

// What the holds of a capture came to, for its summary.
struct HoldStats {
  uint64_t at_exec = 0;        // holds taken as a process exec'd...
  uint64_t at_library = 0;     // ...and as its linker mapped new objects
  uint64_t released = 0;       // continued by the capture
  uint64_t total_ns = 0;       // how long those were held, together
  uint64_t max_ns = 0;
  uint64_t released_by_bound = 0;  // continued by the guardian: the capture took too long
  uint64_t missed = 0;         // should have been held and were not (BPF's XT_CNT_HOLD_MISSED)
  // Parents that stopped themselves because their child was held (nsenter, sudo), continued
  // with it (BPF's XT_CNT_PARENT_CONTINUED).
  uint64_t parents_continued = 0;
  // Holds not taken because the process runs as a job of a terminal's shell, which would
  // report the stop (BPF's XT_CNT_HOLD_TERMINAL_JOB; --hold-terminal-jobs takes them).
  uint64_t terminal_jobs = 0;
  uint64_t taken() const { return at_exec + at_library; }
};

class ProcessHolds {
 public:
  // Continues the hold of `pid` taken at `since_ns` (at its exec, or else at a library load);
  // false when that hold was not there any more (the guardian's bound came first, the process
  // died, or it was released and the process held again since, for another reason: a thread
  // held to be asked about an object, whose hold only the queries end).
  using Continue = std::function<bool(uint32_t pid, uint64_t since_ns, bool at_exec)>;
  // A hold this released: its process, from its start to its release (whole_process()).
  using Released = std::function<void(const XtraceHold& hold)>;

  // Starts the guardian for the `held` map at `held_map_fd`, which continues holds older than
  // `bound_ns` (a query hold the capture has not taken up yet: `query_wait_ns`, when longer;
  // HoldGuardian::Options) and every hold once the capture is gone.
  static Result<std::unique_ptr<ProcessHolds>> Start(int held_map_fd, uint64_t bound_ns,
                                                     uint64_t query_wait_ns = 0);
  // Without a guardian (tests): `resume` continues a process.
  explicit ProcessHolds(Continue resume) : resume_(std::move(resume)) {}

  // A record said `pid` was held at `since_ns` (CLOCK_MONOTONIC) for `cause` (an exec; else a
  // library load, a table getter or zeInit, which BPF holds as a library load), as thread
  // `tid` exec'd or called.
  void Held(uint32_t pid, uint32_t tid, HoldCause cause, uint64_t since_ns);
  // Where the holds released from now on are told; none: not told.
  void set_released(Released released) { released_ = std::move(released); }
  // Continues every process held so far; `now_ns` on the same clock.
  void ReleaseAll(uint64_t now_ns);
  bool any_pending() const { return !pending_.empty(); }
  // The guardian's call slot (HoldGuardian::call_slot); null without a guardian.
  RemoteCallSlot* call_slot() const { return guardian_ ? guardian_->call_slot() : nullptr; }

  // The rest from the BPF counters.
  HoldStats Stats(uint64_t missed, uint64_t parents_continued, uint64_t terminal_jobs = 0) const;
  // The summary's sentence about holds (HoldSummary), from the BPF counters at the end.
  std::string Summary(const std::array<uint64_t, XT_CNT_MAX>& counters) const;

 private:
  std::unique_ptr<HoldGuardian> guardian_;
  Continue resume_;
  Released released_;
  struct Pending {
    uint64_t since_ns = 0;
    uint32_t tid = 0;
    HoldCause cause = HoldCause::kExec;
  };
  std::map<uint32_t, Pending> pending_;  // pid -> its newest hold heard of
  HoldStats stats_;
};

// Why the process of a lifecycle record flagged XT_FLAG_HELD (exec or maps) was held.
HoldCause HoldCauseOf(const xt_record_header& hdr);

// The summary's sentence about holds (starting with a space), or "" when none was taken or
// missed: "12 process starts and 2 library loads held 3.1 ms on average (max 9.0 ms) until
// probed." and, only when some were, "; 2 released by the bound (--hold-max)" (a hold the
// bound released may have let first calls pass unprobed; none released is the normal case,
// not worth a clause in every summary).
std::string HoldSummary(const HoldStats& stats);

}  // namespace xtrace
