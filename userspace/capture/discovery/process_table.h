// The one owner of process identity in a capture: which processes it follows, how each one
// is told from a later process that reuses its pid (start time), who each one is (the
// identities its exec and fork records gave, oldest first), and which are gone. The
// correlator asks it who a process is (it is the capture's ProcessInspector): /proc while
// the process lives, what its records said once it is gone.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "capture/discovery/proc_stat.h"
#include "correlate/process_inspector.h"

namespace xtrace {

// A process the capture follows.
struct TrackedProcess {
  uint32_t pid = 0;
  bool given = false;     // --pid or the command
  bool is_child = false;  // launched by `record`: reaped by us
  bool held = false;      // launched but not yet exec'd: /proc still shows xtrace
  bool gone = false;
  bool detached = false;  // called __itt_detach: its probes are released, it runs on
  bool ever_attached = false;
  std::string attached_via;  // the library "attached to pid N (...)" last named
  bool had_records = false;  // the correlator introduced it before it ended
  bool rescan = true;     // read its memory map at the next opportunity
  uint64_t start_ticks = 0;  // 0: unknown (it was gone when first seen)
  // Who it was, from its fork and exec records, oldest first: a process that execs has had
  // two identities. For naming it once it is gone.
  std::vector<ProcessDetails> identities;
  uint64_t seen_cgroup_id = 0;
};

class ProcessTable final : public ProcessInspector {
 public:
  using StatReader = std::function<std::optional<ProcStat>(uint32_t pid)>;

  // Reads the live processes from /proc.
  ProcessTable();
  // Tests: `live` answers for running processes, `read_stat` gives their /proc/PID/stat.
  ProcessTable(ProcessInspector& live, StatReader read_stat);
  ProcessTable(const ProcessTable&) = delete;
  ProcessTable& operator=(const ProcessTable&) = delete;

  struct Tracked {
    TrackedProcess& process;
    bool fresh;     // a new entry: the caller sets up what a new target needs
    bool replaced;  // ...taking the place of a gone process with the same pid
  };
  // Follows `pid`. Already followed and not gone: the same entry (now given if `given`).
  // Otherwise a fresh one, its start time read now.
  Tracked Track(uint32_t pid, bool given);

  // An exec or fork record said who `pid` is (tracked by now): one more identity, unless it
  // repeats the last one.
  void SawStart(uint32_t pid, ProcessDetails identity, uint64_t cgroup_id);

  // Whether `pid` now names another process than the one followed (their start times
  // differ; a gone process has none).
  bool Recycled(const TrackedProcess& t) const;
  // Whether the followed process has ended: gone from /proc, a zombie, or its pid reused.
  bool Ended(const TrackedProcess& t) const;

  // The process is gone. Discovered processes are forgotten; given ones stay for the summary.
  void MarkGone(uint32_t pid);

  TrackedProcess* Find(uint32_t pid);
  const TrackedProcess* Find(uint32_t pid) const;
  // Every entry by pid, gone given processes included.
  const std::map<uint32_t, TrackedProcess>& processes() const { return processes_; }
  // Pids of the entries that `select` picks (a snapshot: callers may change the table).
  std::vector<uint32_t> Select(const std::function<bool(const TrackedProcess&)>& select) const;
  uint32_t live_count() const;

  // `pid` had a probe or a record: counted among the processes traced.
  // Once per record: the pid noted last is not looked up again.
  void NoteTraced(uint32_t pid) {
    if (pid != last_traced_ || ever_traced_.empty()) ever_traced_.insert(last_traced_ = pid);
  }
  uint32_t traced_count() const { return static_cast<uint32_t>(ever_traced_.size()); }

  // The name to give `pid` by in the summary, also once it is gone: the one the log named it
  // with last (ProcessInspector::Named), else the one its records gave it last; empty if
  // neither did.
  std::string NameOf(uint32_t pid) const;

  // ProcessInspector: /proc while the process lives, else its last identity.
  std::optional<ProcessDetails> Process(uint32_t pid) override;
  FdDevice Fd(uint32_t pid, uint32_t fd, const FdFileAtCall& at_call) override {
    return live_.Fd(pid, fd, at_call);
  }
  void Named(uint32_t pid, std::string_view comm) override { named_[pid] = std::string(comm); }

 private:
  uint64_t StartTicks(uint32_t pid) const;

  ProcfsInspector procfs_;
  ProcessInspector& live_;
  StatReader read_stat_;
  std::map<uint32_t, TrackedProcess> processes_;
  std::set<uint32_t> ever_traced_;
  uint32_t last_traced_ = 0;
  // What the log named each process last, by pid (a later process with the pid renames it):
  // kept after the process is gone, as the summary covers the whole capture.
  std::map<uint32_t, std::string> named_;
};

}  // namespace xtrace
