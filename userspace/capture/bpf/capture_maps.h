// The BPF maps all probe sources share: the records ring buffer (and its reader), the drop
// counters, the traced-process filter and capture scope, and the per-thread state. Probe
// objects are pointed at these maps between their open and load, so every source writes one
// stream and follows one scope.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "decode/record_decoder.h"
#include "xtrace/capture_config.h"
#include "xtrace/itt_ring.h"
#include "xtrace/hold.h"
#include "xtrace/python.h"
#include "xtrace/records.h"

struct shared_maps;  // generated skeleton (build/bpf/shared_maps.skel.h)
struct ring_buffer;  // libbpf
struct bpf_object;   // libbpf

namespace xtrace {

using RecordCallback = std::function<void(std::span<const std::byte>)>;
// A record made decoded already, routed as a ring record is once decoded (RecordRouter::
// RouteSideRecord): a side stream's hot records skip being encoded as BPF writes them only to
// be decoded again.
using DecodedCallback = std::function<void(const DecodedRecord&)>;
// Where a side stream passes its records on: as bytes, or decoded.
struct SideRoutes {
  const RecordCallback& record;
  const DecodedCallback& decoded;
};
using Counters = std::array<uint64_t, XT_CNT_MAX>;

// Records that reach the capture from outside the BPF ring (the ITT fast path's rings in the
// traced processes), merged with the ring's records in time order.
class SideStream {
 public:
  virtual ~SideStream() = default;
  // Before each read of the ring: gather what is pending (so the ring, read after, holds
  // every BPF record older than anything gathered).
  virtual void Collect() = 0;
  // Before the ring record `record` is passed on: passes on the gathered records older than it.
  virtual void BeforeRingRecord(std::span<const std::byte> record, const SideRoutes& routes) = 0;
  // After the ring is read: passes on the rest.
  virtual void AfterRing(const SideRoutes& routes) = 0;
  // The capture is about to read the ring for the last time: its writers stop, and what they
  // wrote is gathered for that read, or counted dropped.
  virtual void Finish() {}
  // A descriptor that becomes readable when enough is gathered that Poll should not wait out
  // its timeout (-1: none). Collect empties it.
  virtual int wake_fd() const { return -1; }
};

class CaptureMaps {
 public:
  // ring_bytes: a power of two, a multiple of the page size.
  static Result<std::unique_ptr<CaptureMaps>> Create(uint64_t ring_bytes);
  ~CaptureMaps();
  CaptureMaps(const CaptureMaps&) = delete;
  CaptureMaps& operator=(const CaptureMaps&) = delete;

  // Makes `obj`'s maps of the shared names use these maps. Call between open and load.
  Status Share(bpf_object* obj) const;

  // The traced-process filter every probe program checks.
  Status TracePid(uint32_t pid);
  void ForgetPid(uint32_t pid);  // also forgets its collection state
  // Processes in the filter now (BPF adds and removes some itself; see capture_config.h).
  std::vector<uint32_t> TracedPids() const;

  // The per-process collection state every probe program checks (enum xt_collection_state):
  // --start-paused sets XT_COLLECT_PAUSED before the target runs; the target's own
  // __itt_pause/__itt_resume/__itt_detach change it from BPF.
  Status SetCollectionState(uint32_t pid, uint32_t state);

  // Which processes every probe records (capture_config.h). Set before attaching probes.
  Status SetScope(const xt_capture_config& config);
  // The cgroup of XT_SCOPE_CGROUP, as an open cgroup v2 directory.
  Status SetScopeCgroup(int cgroup_dir_fd);

  // Objects made before the attach (include/xtrace/hold.h): which kinds of `pid`'s unknown
  // handles are asked about (a mask of 1 << enum xt_query_kind; 0: none). A process running
  // before the capture began has some.
  Status SetQueryPid(uint32_t pid, uint32_t kinds);
  // A handle waiting to be asked about, and what it is (enum xt_query_kind).
  struct AskedHandle {
    uint64_t handle = 0;
    uint8_t kind = 0;
  };
  // The handles of `pid` waiting to be asked about.
  std::vector<AskedHandle> AskedHandles(uint32_t pid) const;
  // Those handles were asked about (whatever the answer): known from now on.
  void SettleHandles(uint32_t pid, const std::vector<uint64_t>& handles);
  // Forgets `pid`'s asked handles without settling them (asked again at their next use).
  void DropAsked(uint32_t pid);
  // `pid` is gone or exec'd: no more queries, and its handle entries go.
  void ForgetQueries(uint32_t pid);
  // Where BPF reads the Python frames of `pid`'s threads (xtrace/python.h), once user space
  // has checked its interpreter; ForgetPython when it exits or execs.
  Status SetPythonLayout(uint32_t pid, const xt_py_layout& layout);
  void ForgetPython(uint32_t pid);

  // The map of held processes (include/xtrace/hold.h), for the hold guardian.
  int held_fd() const;
  int hold_parents_fd() const;  // struct xt_hold_parent by the parent's kernel tgid
  // Every traced thread's BPF state (include/xtrace/thread_state.h), keyed by a pidfd.
  int thread_state_fd() const;

  // Records dropped per process (pid as the capture numbers it).
  std::map<uint32_t, uint64_t> ReadDropsByPid() const;

  // Waits up to `timeout_ms`, then passes every pending record to `callback`. (Probes write
  // without wakeups below a fill threshold, so this mostly returns on the timeout.)
  Result<int> Poll(int timeout_ms, const RecordCallback& callback);
  // Passes every pending record to `callback` without waiting.
  Result<int> Drain(const RecordCallback& callback);
  // The last Drain of the capture: the side stream's writers are stopped first.
  Result<int> DrainLast(const RecordCallback& callback);

  // Sums the per-CPU counters (enum xt_counter), with the counts added from user space.
  Counters ReadCounters() const;

  // Counts kept outside BPF (records a traced process's own buffer dropped, records of a
  // paused process): added to ReadCounters and, for drops, to ReadDropsByPid.
  void AddUserCount(xt_counter counter, uint32_t pid, uint64_t n);

  // Processes on the ITT fast path: BPF adds up their rings' counters as their threads exit
  // and as they exec (xt_itt_rings_seen), which is how records still in a ring when its
  // process ends are counted. Watch as the fast path attaches; Take (which forgets it) once
  // the process has ended.
  Status WatchIttRings(uint32_t pid, uint64_t control_address);
  std::optional<xt_itt_rings_seen> TakeIttRings(uint32_t pid);

  // A process's collection state now (XT_COLLECT_ON when it has none).
  uint32_t CollectionState(uint32_t pid) const;

  // The one side stream merged into Poll and Drain (nullptr: none). Not owned. Its wake_fd
  // ends a Poll's wait.
  void SetSideStream(SideStream* side);
  // Where a side stream's decoded records go (set before the first Poll or Drain).
  void SetDecodedRoute(DecodedCallback route) { decoded_ = std::move(route); }

  uint64_t ring_bytes() const { return ring_bytes_; }
  // Pending bytes at which a probe wakes the reader (rodata of every probe object).
  uint64_t wakeup_bytes() const { return ring_bytes_ / 4; }

 private:
  CaptureMaps() = default;
  static int OnSample(void* ctx, void* data, size_t size);
  void FilterChanged();

  struct SkeletonDeleter {
    void operator()(::shared_maps* skel) const;
  };
  struct RingDeleter {
    void operator()(ring_buffer* ring) const;
  };

  std::unique_ptr<::shared_maps, SkeletonDeleter> skel_;
  std::unique_ptr<ring_buffer, RingDeleter> ring_;
  uint64_t ring_bytes_ = 0;
  uint64_t filter_epoch_ = 0;  // user space's slot of the BPF filter_epoch map
  const RecordCallback* callback_ = nullptr;  // valid only during Poll/Drain
  SideStream* side_ = nullptr;
  DecodedCallback decoded_;
  Counters user_counts_{};
  std::map<uint32_t, uint64_t> user_drops_;
};

// Routes libbpf's own messages: with `verbose`, warnings and info go to stderr prefixed
// "libbpf: "; otherwise they are dropped, since every failure that matters is reported by
// xtrace itself in its own words.
void SetLibbpfVerbosity(bool verbose);

// libbpf's errno-style codes as text.
std::string BpfErrorText(int err);

}  // namespace xtrace
