// The hold guardian: the one thing that guarantees a process xtrace stopped is never left
// stopped. A capture that holds processes at their start (include/xtrace/hold.h) forks it
// once, before it holds anyone; it shares nothing with the capture but the `held` map and a
// pipe, and it outlives the capture by as long as it takes to continue what is still held:
//   - a hold older than the bound is continued (the capture was too slow or stuck);
//   - when the pipe closes — the capture ended, crashed or was SIGKILLed — a thread the
//     capture was calling into (capture/holds/remote_call.h) is put back as it was, and every process
//     still held is continued, and so is every hold taken until no loaded BPF program uses
//     the map any more (a SIGKILLed capture's links may outlive it briefly); then it exits.
// Exactly one side continues each hold: whoever deletes its map entry first sends SIGCONT,
// so a stop the user sent after xtrace's hold was released is never undone by xtrace.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "base/status.h"
#include "base/unique_fd.h"
#include "capture/holds/remote_call.h"

namespace xtrace {

class HoldGuardian {
 public:
  struct Options {
    uint64_t bound_ns = 500'000'000;  // the longest a process stays held
    // The longest a thread held to be asked about an object (XT_HOLD_QUERY) waits for the
    // capture to take its hold up (0: bound_ns); from then on, bound_ns from each renewal.
    // Continued before, its launch runs on unasked and comes out unnamed: a capture that
    // is off its CPU for longer than bound_ns (a busy node) must not cost the names.
    uint64_t query_wait_ns = 0;
    int check_interval_ms = 10;       // how often the guardian looks at the map
  };
  // What the guardian did, readable while it runs and after (a page shared with it).
  struct Tally {
    std::atomic<uint64_t> released_by_bound{0};
    std::atomic<uint64_t> released_at_end{0};
  };

  // `held_map_fd`: the BPF hash map of holds (key: __u32 pid, value: struct xt_hold).
  static Result<std::unique_ptr<HoldGuardian>> Start(int held_map_fd, const Options& options);
  // Closes the pipe (the guardian continues whatever is still held and exits) and reaps it.
  ~HoldGuardian();
  HoldGuardian(const HoldGuardian&) = delete;
  HoldGuardian& operator=(const HoldGuardian&) = delete;

  // The capture is done with `pid`'s hold: forgets it and continues the process. False if it
  // was not held any more (the guardian's bound released it, or it never was): nothing sent.
  bool Release(uint32_t pid);
  // The same for the hold of `pid` taken at `since_ns` for `reason` only: false, and nothing
  // done, if the entry there now is another hold (that one was released by the bound and the
  // process held again since, for instance to be asked about a kernel: not ours to end).
  bool ReleaseIf(uint32_t pid, uint64_t since_ns, uint32_t reason);

  pid_t pid() const { return pid_; }
  const Tally& tally() const { return *tally_; }
  // Where the capture keeps what it must restore in a thread it calls into: on a page shared
  // with the guardian, which restores the thread from it if the capture dies mid-call.
  RemoteCallSlot* call_slot() const { return call_slot_.get(); }

 private:
  HoldGuardian() = default;
  struct TallyUnmapper {
    void operator()(Tally* t) const;
  };
  struct SlotUnmapper {
    void operator()(RemoteCallSlot* s) const;
  };

  int map_fd_ = -1;       // not owned: the capture's map outlives the guardian object
  UniqueFd pipe_write_;   // its end closing is the guardian's signal to finish
  pid_t pid_ = -1;
  std::unique_ptr<Tally, TallyUnmapper> tally_;
  std::unique_ptr<RemoteCallSlot, SlotUnmapper> call_slot_;
};

// Deletes `pid`'s hold from the map and, if this call was the one that deleted it, sends
// SIGCONT: each hold is continued once, by whichever of the capture and the guardian deletes
// its entry first. `count`, if given, is incremented before the SIGCONT goes out, so whoever
// sees the process run again also sees it counted. Async-signal-safe (the guardian uses it).
bool ContinueHeld(int held_map_fd, uint32_t pid, std::atomic<uint64_t>* count = nullptr);

// Removes `pid`'s entry from the `held` map if it is the hold taken at `since_ns` for `reason`
// (by thread `tid`, unless 0); whether it did. The entry is taken out and looked at in one
// step (BPF_MAP_LOOKUP_AND_DELETE_ELEM). Looked at first and deleted after, it could be another
// hold by the delete: the one looked at released meanwhile by the other side (the guardian's
// bound, or the capture), and another thread held by BPF since, its stop sent or about to be.
// Deleted by mistake, that hold had nobody left to continue it, and its process stayed stopped
// for good. An entry taken out that is another hold is put back at once; if a newer hold took
// the place meanwhile, that one's release continues the process, and so ends this stop too.
// Async-signal-safe (the guardian uses it).
bool TakeHoldIf(int held_map_fd, uint32_t pid, uint64_t since_ns, uint32_t reason, uint32_t tid = 0);

// ContinueHeld for one hold: only when `pid`'s entry is the hold taken at `since_ns` for
// `reason` (TakeHoldIf). Async-signal-safe.
bool ContinueHeldIf(int held_map_fd, uint32_t pid, uint64_t since_ns, uint32_t reason,
                    std::atomic<uint64_t>* count = nullptr);

// When the guardian's bound starts for `pid`'s hold taken at `since_ns` for `reason`: then, or
// at the lease the capture keeps in `slot` (may be null) while it serves that very hold
// (RemoteCallSlot::lease_ns), whichever is later. Async-signal-safe.
uint64_t HoldBoundFrom(uint32_t pid, uint64_t since_ns, uint32_t reason, const RemoteCallSlot* slot);

// The bound of a hold taken at `since_ns` for `reason`, whose bound counts from `from_ns`
// (HoldBoundFrom): `bound_ns`, or for a query hold the capture has not taken up yet (`from_ns`
// still `since_ns`: no lease of it) `query_wait_ns` when longer. 0 stays 0 (every hold due).
// Async-signal-safe.
uint64_t HoldBoundOf(uint64_t from_ns, uint64_t since_ns, uint32_t reason, uint64_t bound_ns,
                     uint64_t query_wait_ns);

// Whether a hold taken at `since_ns` is past `bound_ns` at `now_ns` (every hold with a bound of
// 0). A hold newer than `now_ns` was taken after that clock reading (the guardian read it, then
// was preempted before it looked at the map): it is fresh, never due, unless it lies so far
// ahead that it cannot be a reading of the same clock. Async-signal-safe.
bool HoldDue(uint64_t since_ns, uint64_t now_ns, uint64_t bound_ns);

}  // namespace xtrace
