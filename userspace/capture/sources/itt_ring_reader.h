// One traced process's ITT fast path, from xtrace's side: attaches by writing the
// collector's control block with process_vm_writev, drains its threads' rings with
// process_vm_readv (no shared file, no fd in the target: it works across mount, pid and user
// namespaces), writes back how far it read and a heartbeat, and detaches. Everything read
// passes itt_ring_decoder's checks; a target that lies loses its own records, nothing else.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "decode/itt_ring_decoder.h"

namespace xtrace {

// Reads and writes another process's memory (CAP_SYS_PTRACE, or the same user under Yama 0).
class RemoteMemory {
 public:
  explicit RemoteMemory(uint32_t pid) : pid_(pid) {}
  uint32_t pid() const { return pid_; }
  // All of [address, address + size) or an error naming what failed (ESRCH: gone).
  Status Read(uint64_t address, void* out, size_t size) const;
  Status Write(uint64_t address, const void* data, size_t size) const;
  // A NUL-terminated string of at most `max` bytes (read page by page, so a short string at
  // the end of a mapping reads); `truncated` when no NUL came within `max`.
  Result<std::string> ReadString(uint64_t address, size_t max, bool* truncated) const;

 private:
  uint32_t pid_;
};

struct IttDrainStats {
  uint64_t records = 0;
  uint64_t fullest = 0;    // the most bytes one ring held (of XT_ITT_RING_BYTES or its size)
  uint64_t dropped = 0;    // new drops the target counted (full rings, threads without a ring)
  uint64_t malformed = 0;  // records (or ring headers) that failed a check
  std::string first_error;
  bool lapsed = false;     // the collector let go (its lease ran out), or the capture this
                           // reader follows did: attach again
  uint64_t overrun = 0;    // records a follower could not read in time (overwritten; rings)
  bool gone = false;       // the process cannot be read any more
};

// What a process's rings say they ever held: records written into them and calls they
// dropped (full rings, threads without a ring), summed over every ring.
struct IttRingTotals {
  uint64_t records = 0;
  uint64_t dropped = 0;
};

class IttRingReader {
 public:
  // The terms of an attach: the clock the collector stamps with, its lease, and the size of
  // the rings its threads make from then on (a thread keeps the ring it has).
  struct Clock {
    uint32_t kind;       // enum xt_itt_clock
    uint64_t heartbeat;  // now, in that clock
    uint64_t lease;      // in that clock's units
    uint32_t ring_bytes = XT_ITT_RING_BYTES;  // xt_itt_control.ring_bytes_wanted
  };

  // Attaches to the collector whose control block is at `control_address` in `pid`. Fails
  // when the block does not check out, the process refused the fast path, or its memory
  // cannot be read or written (ptrace access denied). Records already in its rings predate
  // this capture and are skipped.
  //
  // When another live capture is draining the process (its heartbeat is within the lease),
  // the collector writes into rings that capture empties, and its calls never reach the probe
  // site: the reader then *follows*, reading the same rings alongside that capture without
  // writing anything into the process (following() is true). `follow_only`: attach only as a
  // follower; fails when no other capture drains the process.
  static Result<std::unique_ptr<IttRingReader>> Attach(uint32_t pid, uint64_t control_address,
                                                       const Clock& clock, bool follow_only = false);

  // Writes the heartbeat `heartbeat` (in the attach clock; a follower writes none) and reads
  // every ring's new records, passing each valid one to `out`.
  IttDrainStats Drain(uint64_t heartbeat, const std::function<void(const IttRingRecord&)>& out);

  // Tells the collector the records of the last Drain were taken: only then may their
  // rings be reused, and an exiting process go (so what they name, handle texts and thread
  // names, can still be read in between). A follower tells nothing: the capture it follows does.
  void Commit();

  // Lets go: the collector returns to its probe site at once (best effort: the process may be gone).
  void Detach();

  // The totals the rings held when this reader attached (what was there before belongs to
  // no capture of ours), and the totals now, read from the process (an error once it is gone).
  const IttRingTotals& at_attach() const { return at_attach_; }
  Result<IttRingTotals> ReadTotals() const;

  const RemoteMemory& memory() const { return memory_; }
  uint64_t generation() const { return generation_; }
  bool following() const { return following_; }

 private:
  struct RingState {
    uint64_t read_pos = 0;
    uint64_t committed = 0;  // the read_pos last written to the target
    uint64_t dropped_seen = 0;
    bool bad = false;  // its header failed a check: not read again
  };
  IttRingReader(uint32_t pid, uint64_t control_address)
      : memory_(pid), control_address_(control_address) {}
  // Every ring read from its write position on (and, `write_back`, told so), and the
  // totals at attach, from the control block last read.
  void StartAtWritePositions(bool write_back);
  // A follower's copy of a ring may have been written over while it was read: skips it.
  bool Overrun(uint64_t address, uint32_t data_bytes, RingState& state);

  RemoteMemory memory_;
  uint64_t control_address_;
  uint64_t generation_ = 0;  // ours; 0 for a follower
  bool following_ = false;
  uint64_t no_ring_dropped_seen_ = 0;
  IttRingTotals at_attach_;
  std::map<uint64_t, RingState> rings_;  // by address in the target
  std::unique_ptr<xt_itt_control> control_;  // the last copy read (8 KiB: not on the stack)
  std::unique_ptr<std::byte[]> buffer_;       // where a ring's pending bytes are copied
  uint64_t buffer_bytes_ = 0;
};

}  // namespace xtrace
