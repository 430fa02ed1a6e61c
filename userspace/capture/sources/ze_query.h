// Objects a process made before xtrace attached, learned from the process itself: when a
// launch in a process that was running before the capture uses a kernel, command list or
// signal event xtrace never saw made (or an execution an unknown queue), BPF holds the thread
// at that call's entry (bpf/query.bpf.h), where it holds no Level Zero lock, and this asks the
// process's own loader about them by calling its query functions in that thread
// (capture/holds/remote_call.h), then lets it go: a kernel's name (zeKernelGetName), a list's device,
// ordinal, index and kind, a queue's ordinal and index, an event's pool flags. The list, queue
// and event queries arrived in Level Zero 1.9: with an older loader only kernels are asked
// about. Each handle is asked about once; a handle whose creation was seen never is.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "capture/holds/remote_call.h"
#include "model/event.h"

namespace xtrace {

class CaptureMaps;

// A kernel's name as the process's loader gave it.
struct LearnedKernel {
  uint64_t kernel = 0;
  std::string name;
};

// What the queries of a capture cost and came to, for its summary.
struct QueryStats {
  uint64_t holds = 0;         // threads held to ask
  uint64_t learned = 0;       // objects named by their process
  uint64_t failed = 0;        // objects asked about without an answer
  uint64_t deferred = 0;      // objects left for a later hold: the hold's bound passed first
  uint64_t hold_cap_ns = 0;   // that bound in all (HoldBound), for the summary
  uint64_t unusable = 0;      // holds whose thread could not be used (their launch unnamed)
  uint64_t held_ns = 0;       // from each stop to the process's continuation, together
  uint64_t max_held_ns = 0;
  uint64_t missed = 0;        // never asked: a query map was full or the stop failed (BPF's count)
  // Loaders without the 1.9 queries -> the first one missing, and how many processes use them.
  std::map<std::string, std::pair<std::string, uint32_t>> old_loaders;
  std::map<uint32_t, std::string> not_queried;  // pid -> why its objects were not asked about
  std::vector<std::string> failures;            // the first few reasons, for the summary
};

// Addresses in one process: what the calls need.
struct QueryTargetAddresses {
  uint64_t kernel_get_name = 0;  // zeKernelGetName in its loader
  uint64_t errno_location = 0;   // __errno_location in its libc (0: errno is not saved)
  uint64_t loop = 0;             // a `jmp .` in its loader's code, where calls return
  // Level Zero 1.9's queries in its loader (0: not there) and zeDeviceGetProperties.
  uint64_t list_get_device = 0;          // zeCommandListGetDeviceHandle
  uint64_t list_get_ordinal = 0;         // zeCommandListGetOrdinal
  uint64_t list_immediate_get_index = 0;  // zeCommandListImmediateGetIndex
  uint64_t list_is_immediate = 0;        // zeCommandListIsImmediate
  uint64_t queue_get_ordinal = 0;        // zeCommandQueueGetOrdinal
  uint64_t queue_get_index = 0;          // zeCommandQueueGetIndex
  uint64_t event_get_pool = 0;           // zeEventGetEventPool
  uint64_t pool_get_flags = 0;           // zeEventPoolGetFlags
  uint64_t device_get_properties = 0;    // zeDeviceGetProperties
  std::string loader;                    // its loader's path, as its maps name it
  std::string first_missing;             // the first of the 1.9 queries it lacks ("": none)

  // The kinds of objects that can be asked about (mask of 1 << enum xt_query_kind).
  uint32_t Kinds() const;
};

// Finds those addresses from /proc/PID/maps and the mapped files' ELF headers.
Result<QueryTargetAddresses> ResolveQueryTarget(uint32_t pid);

// The `jmp .` (EB FE) nearest the start of the executable segments of the ELF file at `path`:
// its address relative to the load base. An instruction sequence that branches to itself, so
// a call returning there stays put, without trap or signal, until it is looked at.
Result<uint64_t> FindSelfLoop(const std::string& path);

// The bound of a query hold being served: it asks on while the process answers. Each call
// begun (the one before it returned) gives it `idle_ns` from then, never past `cap_ns` from its
// start. A fixed bound of 2 s for the whole hold let 88 objects met at once by eight threads on a
// loaded machine (each call waiting for a CPU) outlast it: the rest were asked at a later hold,
// but the launches other threads made meanwhile rode on this one and were read before that
// hold, unnamed. The cap still lets go a process that answers, but too slowly to be done.
class HoldBound {
 public:
  HoldBound(uint64_t idle_ns, uint64_t cap_ns) : idle_ns_(idle_ns), cap_ns_(cap_ns) {}
  void Begin(uint64_t now_ns) {
    cap_at_ = now_ns + cap_ns_;
    idle_at_ = now_ns + idle_ns_;
  }
  void Answered(uint64_t now_ns) { idle_at_ = now_ns + idle_ns_; }
  // What is left (0: passed).
  uint64_t Remaining(uint64_t now_ns) const {
    const uint64_t at = idle_at_ < cap_at_ ? idle_at_ : cap_at_;
    return at > now_ns ? at - now_ns : 0;
  }
  uint64_t idle_ns() const { return idle_ns_; }
  uint64_t cap_ns() const { return cap_ns_; }

 private:
  uint64_t idle_ns_, cap_ns_;
  uint64_t cap_at_ = 0, idle_at_ = 0;
};

// A query hold being served, as its entry in the `held` map says while it is the server's:
// the process, the thread held, the time BPF took it (which the entry keeps: user space never
// rewrites an entry) and where the thread stands.
struct QueryHold {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t since_ns = 0;
  uint64_t ip = 0;
};
// Whether `hold.pid`'s entry in the map at `held_fd` is still `hold`.
bool IsQueryHold(int held_fd, const QueryHold& hold);
// Keeps `hold` fresh for the guardian's bound, as of `now_ns`, if its entry is still `hold`:
// in the lease of `slot` (RemoteCallSlot::lease_ns), which the guardian reads, never in the
// entry. False otherwise, nothing written. The entry may be another thread's hold by then:
// the guardian's bound continued `hold` while a call in it took long, and another thread of
// the process was held since, for its own record; rewritten as ours, that hold would be ended
// as ours, with no SIGCONT after its stop.
bool RenewQueryHold(int held_fd, RemoteCallSlot* slot, const QueryHold& hold, uint64_t now_ns);
// Deletes `hold`'s entry if it is still `hold` (atomically: TakeHoldIf), and its lease; whether
// it did.
bool EndQueryHold(int held_fd, RemoteCallSlot* slot, const QueryHold& hold);

class ZeQueries {
 public:
  using Learned = std::function<void(uint32_t pid, uint32_t tid, uint64_t start_ns,
                                     uint64_t end_ns, const LearnedKernel& kernel)>;
  // A list, queue, event (or its pool, or a list's device) written as the creation call it
  // stands for, marked learned (model/ze_events.h), its span the hold.
  using LearnedCall = std::function<void(const ApiCall& call)>;
  // Every hold served and released here, whatever it learned, after what it learned.
  using Held = std::function<void(const XtraceHold& hold)>;
  using Say = std::function<void(const std::string&)>;

  // `slot`: the call slot shared with the hold guardian; `held_map_fd`: the `held` map;
  // `hold_cap_ns`: the longest a hold asks (HoldBound).
  ZeQueries(CaptureMaps& maps, int held_map_fd, RemoteCallSlot* slot, uint64_t hold_cap_ns,
            Learned learned, LearnedCall learned_call, Held held, Say say);
  // A call still let finish is waited for a last time, then handed to the guardian.
  ~ZeQueries();
  ZeQueries(const ZeQueries&) = delete;
  ZeQueries& operator=(const ZeQueries&) = delete;

  // `pid` was running before the capture began: its unknown kernels are asked about (unless
  // another tracer has it: then the summary says why not).
  void Watch(uint32_t pid);
  // `pid` exec'd or ended: everything it uses from now on is made under xtrace's eyes.
  void Forget(uint32_t pid);

  // A thread was held for asking (record xt_ze_query_hold): asks, continues the process.
  void OnHold(uint32_t pid, uint32_t tid, uint64_t ip, uint64_t since_ns);

  // From the capture's loop: looks at a call let finish (one that passed its hold's bound),
  // and puts its thread back once it has returned.
  void Tick();

  const QueryStats& stats() const { return stats_; }

 private:
  // What is left of the bound of the hold being served (0: passed).
  uint64_t Remaining() const;
  // True when no call is let finish (or the one that was has now returned).
  bool SlotFree(uint64_t wait_ns);
  void Refuse(uint32_t pid, const std::string& why);
  // Serves one hold; true when handles asked for were left to a hold taken since.
  bool ServeHold(uint32_t pid, uint32_t tid, uint64_t ip, uint64_t since_ns);
  // RenewQueryHold and EndQueryHold of the hold being served (hold_).
  bool RenewHold();
  bool EndOwnHold();
  // The timeout of a call in the held thread: what is left of the hold's bound, the hold
  // renewed first (a call may take long; the guardian's bound is for holds nobody serves).
  uint64_t CallBound();
  // Waits (bounded) until no parent that mirrors `pid`'s stops owes it a SIGCONT
  // (include/xtrace/hold.h), the held thread still in its ptrace stop and the hold still
  // ours (renewed).
  void AwaitParentEcho(uint32_t pid);
  // Whether `pid` is held now (by a thread of it that took a hold since).
  bool HeldNow(uint32_t pid) const;
  void Fail(const std::string& why);
  // Asks the name of `kernel` in the session's thread; the name or why not.
  Result<LearnedKernel> AskKernelName(RemoteCallSession& session, uint64_t function, uint64_t kernel);
  // What a list, queue or event is, as the creation calls that stand for it (a list's device
  // and an event's pool first, the first time each is met); why not.
  Result<std::vector<ApiCall>> AskObject(RemoteCallSession& session, const QueryTargetAddresses& target,
                                         uint32_t pid, uint64_t handle, uint8_t kind);

  CaptureMaps& maps_;
  int held_fd_;
  RemoteCallSlot* slot_;
  Learned learned_;
  LearnedCall learned_call_;
  Held held_;
  Say say_;
  uint32_t self_pid_;
  std::set<uint32_t> watched_;
  std::map<uint32_t, QueryTargetAddresses> targets_;
  std::map<uint32_t, int> unusable_holds_;
  std::set<std::pair<uint32_t, uint64_t>> served_;  // (pid, since) of holds served before their record
  // Device handles and event pools of a process already learned (written once each).
  std::set<std::pair<uint32_t, uint64_t>> devices_known_;
  std::map<std::pair<uint32_t, uint64_t>, uint32_t> pool_flags_;
  QueryStats stats_;
  HoldBound bound_;  // of the hold being served (CLOCK_MONOTONIC)
  QueryHold hold_;  // the hold being served
  // A session whose call passed its hold's bound, let finish: it owns the slot until then.
  std::unique_ptr<RemoteCallSession> finishing_;
  uint32_t finishing_pid_ = 0;
};

// The summary's sentence about queries (starting with a space), or "" when none was made or
// refused: " 17 objects made before the attach were queried in the process: 2.1 ms held in all."
std::string QuerySummary(const QueryStats& stats);

}  // namespace xtrace
