// The ITT fast path across a capture's processes: switches each process whose collector is
// mapped to in-process rings (itt_ring_reader.h), drains them whenever the BPF ring is read,
// and turns their records into the same records the probe site's BPF program writes
// (xt_itt_event, xt_itt_name, xt_thread_name), merged with the ring's records in time order,
// so everything after the ring reader (correlation, the log) is unchanged. The calls
// themselves, millions a second, go on as the decoder would make them of an xt_itt_event
// (SideRoutes::decoded): encoding each only to decode it again was a tenth of the capture's
// CPU at 2M pairs/s.
//
// What BPF does at the probe site is done here instead: handle texts are read from the
// target the first time a process uses a handle; threads are named from /proc when first
// seen (and rechecked each second); records of a paused or detached process are dropped by
// the collection state at their time; thread ids are translated into the capture's pid
// namespace; drops counted in the target reach the capture's drop counters.
//
// A thread of its own empties the targets' rings every kDrainPeriod into xtrace's memory
// (reading the texts and names the records need before telling the target they were
// taken), so a target's ring only has to hold a few ms of calls whatever the capture loop
// is doing; the capture loop converts and merges what was gathered at each read of the BPF
// ring. Everything below is guarded by one mutex.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "capture/bpf/capture_maps.h"
#include "capture/sources/itt_ring_reader.h"
#include "capture/discovery/proc_maps.h"
#include "capture/sources/tsc_clock.h"

namespace xtrace {

class IttFastPath final : public SideStream {
 public:
  using Say = std::function<void(const std::string&)>;

  // Registers itself as `maps`' side stream until destroyed.
  // `ring_bytes`: what each ring the targets' threads make while attached holds
  // (xt_itt_control.ring_bytes_wanted).
  // `nice`: the drain thread's nice value (CaptureOptions::nice; nullopt leaves it as started).
  IttFastPath(CaptureMaps& maps, Say say, uint32_t ring_bytes = XT_ITT_RING_BYTES,
              std::optional<int> nice = std::nullopt);
  ~IttFastPath() override;
  IttFastPath(const IttFastPath&) = delete;
  IttFastPath& operator=(const IttFastPath&) = delete;

  // Switches `pid`, which maps the collector `lib`, to the fast path, and says in one line
  // which path its ITT calls take. `control` is the value of XT_ITT_CONTROL_SYMBOL in `lib`'s
  // file (nullopt: an older collector without it, or `read` says why the file could not be
  // read), looked up once per file by the ITT source.
  // A collector mapped but not yet initialised (the scan can see a library between its
  // mapping and its constructors) is tried again at each drain.
  void Attach(uint32_t pid, const MappedLibrary& lib, std::optional<uint64_t> control,
              const Status& read);

  // Asked before a process goes on the fast path: a reason to keep its ITT calls on the probe
  // site instead (where BPF adds their Python frames), or "" to go ahead.
  void KeepOnProbeSiteIf(std::function<std::string(uint32_t pid)> why);
  bool attached(uint32_t pid) const { return processes_.count(pid) != 0; }

  // The process exited or detached itself: the collector (if still there) goes back to its
  // probe site, and what its rings took in that this capture never read is counted dropped.
  void Release(uint32_t pid);
  // The process replaced its image at `exec_ns`: a fast path attached to the image before
  // (whose memory is gone) ends as Release's does; one attached to the new image goes on.
  void ReleaseImage(uint32_t pid, uint64_t exec_ns);

  void Collect() override;
  void Finish() override;
  void BeforeRingRecord(std::span<const std::byte> record, const SideRoutes& routes) override;
  void AfterRing(const SideRoutes& routes) override;
  int wake_fd() const override { return wake_fd_.get(); }

  // What a drain must find in a ring for the next to come after kBusyDrainPeriod, for rings
  // of `ring_bytes` (--itt-ring-size): with 4 MiB rings 128 KiB (a thread making more than
  // ~450k pairs/s; the ring then holds 36 ms at 2M pairs/s); rings asked smaller are busy at
  // an eighth of them, since a 64 KiB ring never holds 128 KiB (drained every 5 ms, it
  // overflowed at 300k pairs/s).
  static constexpr uint64_t BusyBytes(uint32_t ring_bytes) {
    return std::min<uint64_t>(128 << 10, ring_bytes / 8);
  }

 private:
  // How long the collector keeps writing without a drain before it lets go by itself.
  static constexpr uint64_t kLeaseNs = 2'000'000'000;
  // How often a thread's name is read again (runtimes rename their workers after start-up).
  static constexpr uint64_t kRenameCheckNs = 1'000'000'000;
  // How often the drain thread empties the rings: every kDrainPeriod, and every
  // kBusyDrainPeriod while a drain finds more than BusyBytes in a ring (see there), so
  // batches stay small and the ring keeps its room for the waits a drain thread on a shared
  // core has.
  static constexpr std::chrono::milliseconds kDrainPeriod{5};
  static constexpr std::chrono::milliseconds kBusyDrainPeriod{1};
  // Records gathered beyond which the drain thread wakes the capture loop rather than let
  // it wait out its poll: batches stay a few MB (cache-sized, and within the room each batch
  // keeps) instead of a 100 ms poll's worth, tens of MB at millions of records a second.
  static constexpr size_t kWakeRecords = 8192;
  // Records gathered but not yet taken by the capture loop beyond which the drain thread
  // leaves them in the targets (which then count drops) rather than grow: a capture that
  // cannot keep up spends nothing more on a backlog it would drop anyway. About 27 MB, 65 ms
  // at 2M pairs/s on top of the targets' own rings; each batch keeps its room.
  static constexpr size_t kMaxGathered = 131'072;
  // A batch's room: a drain past kMaxGathered adds at most a ring's worth per thread (a
  // larger backlog is moved to a larger copy, once).
  static constexpr size_t kBatchRoom = kMaxGathered + 65'536;

  std::function<std::string(uint32_t pid)> keep_on_probe_site_;

  struct ThreadName {
    std::string comm;      // as last read from /proc (by the drain thread)
    uint64_t checked_ns = 0;
    std::string sent;      // as last sent
  };
  struct HandleText {
    std::string text;
    uint32_t flags = 0;  // XT_FLAG_ARG_UNREADABLE, XT_FLAG_TRUNCATED
  };
  struct Process {
    std::unique_ptr<IttRingReader> reader;
    uint64_t control_address = 0;
    bool own_pid_namespace = true;              // its thread ids are the capture's
    std::map<uint32_t, uint32_t> tids;          // its namespace's tid -> the capture's
    // Written by the drain thread, read under the lock by the capture loop.
    std::map<std::pair<uint32_t, uint64_t>, HandleText> texts;  // (kind, handle), as read
    std::map<uint32_t, ThreadName> threads;     // by the capture's tid
    // The capture loop's alone.
    std::set<std::pair<uint32_t, uint64_t>> named;  // (kind, handle) whose text was sent
    uint64_t outside = 0;  // records stamped outside the capture
    uint64_t malformed = 0;
    uint64_t overruns = 0;  // times a follower's copy was written over (itt_ring_reader.h)
    uint64_t dropped = 0;  // counted by the target, not yet added to the capture's counters
    // What this capture knows its rings took in, for the count at the process's end.
    IttRingTotals base;          // the totals at the first attach (earlier ones are no call of ours)
    bool based = false;
    uint64_t consumed = 0;       // records read from its rings
    uint64_t drops_counted = 0;  // target-counted drops passed on
    bool ended = false;          // accounted for: forgotten once its records are passed on
    uint64_t attached_ns = 0;    // CLOCK_MONOTONIC when its fast path was attached
  };
  // A record read from a ring (its tid already the capture's), before its time is known:
  // an IttRingRecord's fields without its text, whose bytes are kept with the batch. Kept
  // small: a batch is written by the drain thread and read back by the capture loop, a few
  // hundred thousand of them a second.
  struct Raw {
    uint64_t time;  // raw, in the control block's clock
    uint64_t domain, name;
    uint64_t id[2];
    uint64_t extra;
    uint32_t op, tid, pid;
    uint32_t text_at, text_len;  // in the batch's text
  };
  // A record to pass on: a task or marker (converting_[offset], passed on decoded), or any
  // other record as BPF writes it (in arena_).
  // Kept small (24 bytes): one is written and read per call. Among records of one time the
  // order they were made in holds (a stable sort).
  struct Pending {
    uint64_t ns;
    uint32_t pid;
    uint32_t offset, size;
    bool is_event;  // counts as a call: dropped while its process is paused
    bool decoded;   // converting_[offset]; else arena_[offset, offset + size)
  };

  // How long a mapped collector may take to initialise before it is given up on. A time, not
  // a count of tries: a collector still to be attached is tried at every drain (a few ms),
  // and a process starting on a busy machine can take seconds to run its constructors.
  static constexpr uint64_t kMaxInitWaitNs = 10'000'000'000;
  // How long after a collector is found (or mapped) the drain thread wakes the capture loop
  // at each drain to attach it, rather than leave it to the loop's poll.
  static constexpr uint64_t kEagerAttachNs = 2'000'000'000;

  IttRingReader::Clock ClockNow();
  // Touches the batches' room (about 36 MB) once, before the first process is attached:
  // a page touched first costs about 15 us on the machine this was measured on (a fault),
  // and a fast path attached to a busy program would otherwise pay for thousands of them in
  // its first batches, while its rings fill, and drop calls it could otherwise keep up with.
  // Not at the start: a capture whose processes make no ITT calls never needs it. The
  // clock is calibrated then too.
  void Warm();
  // Waits for the control block at `address` to be initialised (tried at each Collect, and
  // eagerly for a while: kEagerAttachNs).
  void StartWaiting(uint32_t pid, uint64_t address);
  // Attaches at `address` once the control block is initialised: true when done (either
  // way, said in one line), false to try again later.
  bool TryAttach(uint32_t pid, uint64_t address, bool last_try);
  void DrainLoop();
  // Empties `pid`'s rings into gathered_, reading what the new records name first.
  // `final`: the capture is letting go of it, so a collector that let go is not taken back.
  // Returns the most bytes one of its rings held.
  uint64_t DrainProcess(uint32_t pid, Process& proc, bool final = false);
  // The process's fast path ends: counts dropped what its rings took in and nobody read.
  // `readable`: its memory is still its own (not exited, not execed); `detached`: its writers
  // were already stopped.
  void EndProcess(uint32_t pid, Process& proc, bool readable, bool detached = false);
  static void StopWriters();
  void CountLost(uint32_t pid, uint64_t n, bool in_rings = false);
  // What ReadNames looked up last within one drain of a process: the same thread and
  // handles are not looked up again.
  struct NamesSeen {
    uint32_t tid = 0;
    uint64_t handle[2] = {0, 0};  // string, domain
    // Its thread and handles were looked up last (a record with no name handle has none).
    bool Repeats(const Raw& r) const {
      return r.tid == tid && r.domain == handle[1] && (r.name == handle[0] || !r.name);
    }
  };
  void ReadNames(uint32_t pid, Process& proc, const Raw& r, uint64_t now, NamesSeen& seen);
  // What Convert found last within one batch: the process, the threads whose names were
  // checked, the handles last sent.
  struct ConvertCache {
    uint32_t pid = 0;
    Process* proc = nullptr;
    std::vector<uint32_t> tids;
    uint64_t domain = 0, name = 0;
  };
  // converting_[index], whose CLOCK_MONOTONIC time is `ns` (0: outside the capture).
  void Convert(uint32_t index, uint64_t ns, ConvertCache& cache);
  // Converts converting_ (emptied once its records are passed on, its room kept).
  void ConvertGathered();
  void ForgetEnded();
  uint32_t CaptureTid(uint32_t pid, Process& proc, uint32_t ns_tid);
  void NoteThread(uint32_t pid, Process& proc, uint32_t tid, uint64_t ns);
  void NoteHandle(uint32_t pid, Process& proc, uint32_t tid, uint64_t ns, uint32_t kind,
                  uint64_t handle);
  void Tell(std::string line) { said_.push_back(std::move(line)); }
  void Push(uint32_t pid, uint64_t ns, bool is_event, const void* data, size_t size,
            std::string_view tail = {});
  void Deliver(const Pending& p, const SideRoutes& routes);
  bool Collecting(uint32_t pid, uint64_t ns) const;

  CaptureMaps& maps_;
  Say say_;
  const uint32_t ring_bytes_;
  const std::optional<int> nice_;  // the drain thread's (ThreadNice)
  std::vector<std::string> said_;  // lines for say_, printed by the capture loop's thread
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  UniqueFd wake_fd_;        // an eventfd: written once kWakeRecords are gathered
  bool wake_sent_ = false;  // written since the capture loop last collected
  // Read by the drain thread, with their texts; the capture loop swaps them with the
  // converting_ pair, whose room is kept: a batch of hundreds of thousands of records is
  // neither allocated nor faulted in anew (freeing it would hand the pages back).
  std::vector<Raw> gathered_;
  std::string gathered_text_;
  // Below: the capture loop's thread only (no lock: it passes records on without one).
  // Per process, its collection state changes as (time, state).
  std::map<uint32_t, std::vector<std::pair<uint64_t, uint32_t>>> states_;
  std::unique_ptr<TscClock> clock_;
  uint64_t lease_units_ = 0;  // kLeaseNs in clock_'s units
  std::map<uint32_t, Process> processes_;
  // pid -> (control address, CLOCK_MONOTONIC when first tried)
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> waiting_;
  // Collectors attached before they are mapped (record's command before exec): pid ->
  // (the library, its control block's offset), looked for at each Collect.
  std::map<uint32_t, std::pair<MappedLibrary, uint64_t>> unmapped_;
  std::vector<Raw> converting_;
  std::string converting_text_;
  // (CLOCK_MONOTONIC time or 0, index in converting_)
  std::vector<std::pair<uint64_t, uint32_t>> order_;
  std::unique_ptr<std::byte[]> arena_;  // the records to pass on, back to back
  size_t arena_room_ = 0;
  size_t arena_used_ = 0;
  std::vector<Pending> pending_;
  bool warm_ = false;  // Warm done
  uint64_t eager_attach_until_ns_ = 0;  // CLOCK_MONOTONIC; see kEagerAttachNs
  size_t next_ = 0;  // first of pending_ not yet passed on
  std::thread drainer_;  // last: started once everything above exists
};

}  // namespace xtrace
