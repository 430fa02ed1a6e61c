// Which processes a capture follows, and keeping their probes current: the ones running when
// it starts (and the command it launches), those that start later (their fork and exec
// records, a Slurm job's later steps), scanning each one's memory map when it asks for it (at
// the start, after an exec or a library load) and continuing it if it was held meanwhile, and
// forgetting each one when it is gone, detached itself, or is no longer the owner's. Who each
// process is stays the process table's (capture/discovery/process_table.h); where probes go,
// the attach planner's.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "capture/attach_planner.h"
#include "capture/bpf/capture_maps.h"
#include "capture/capture_options.h"
#include "capture/discovery/capture_scope.h"
#include "capture/discovery/left_out_processes.h"
#include "capture/discovery/process_table.h"
#include "capture/holds/process_holds.h"
#include "correlate/correlator.h"
#include "decode/process_record_decoder.h"

namespace xtrace {

class ProcessFollower {
 public:
  // What the follower works with; every reference outlives it.
  struct Parts {
    const CaptureOptions& options;
    const CaptureScope& scope;
    uint32_t self_pid;
    CaptureMaps& maps;
    AttachPlanner& planner;
    ProcessTable& processes;
    Correlator& correlator;
    ProcessHolds* holds;  // null: processes are not held
    RecordCallback on_record;  // what the ring's records are given to when it is read here
    std::function<void(const std::string&)> say;
  };
  explicit ProcessFollower(Parts parts) : p_(std::move(parts)) {}

  // Follows `pid` (`given`: named by the user, or the command).
  TrackedProcess& Track(uint32_t pid, bool given);
  // Processes already running that the scope selects (children of the given ones among them).
  void DiscoverRunning();
  // Tells the sources which processes were running before the capture began (not the
  // children of others, whose start it saw): what they made until then is unknown to them.
  void NoteFoundRunning();
  // Starts the command held, probes where its libraries will be, and lets it exec.
  Status LaunchCommand();

  // Scans every process that asks for it; a hold taken meanwhile is served between two of
  // them (ServeHoldsMeanwhile), not only once all are done.
  void ScanPending();
  // Continues every process held so far (their new files were just scanned and probed).
  void ReleaseHolds();
  // A lifecycle record from the ring.
  void OnProcessRecord(const DecodedProcessRecord& record);
  // These processes called __itt_detach: BPF already records nothing more of them; their
  // probes are released and they are no longer scanned.
  void Detached(const std::vector<uint32_t>& pids);
  // Forgets the processes that ended (the discovered ones too only when `discovered_too`).
  void CheckAlive(bool discovered_too);
  // --slurm-job without a job cgroup: the job's processes that started since it was last
  // looked for and are no children of a process already followed (a step's tasks).
  void FindJobProcessesStartedLater();

  bool FollowedAllGone() const;
  // The processes in the scope left out as another user's (with --user), to be said in the
  // summary and the log's notes.
  const LeftOutProcesses& left_out() const { return left_out_; }
  // How the launched command ended (a wait(2) status), once it has.
  std::optional<int> child_status() const { return child_status_; }

 private:
  void Say(const std::string& line) const { p_.say(line); }
  // The process is gone (its end seen at `ended_ns`): its probes go, its open spans end.
  void Forget(TrackedProcess& t, uint64_t ended_ns);
  // Scans `pid` if it still asks for a scan (gone, detached and left-out processes do not).
  void ScanOne(uint32_t pid);
  // Reads the ring and, if a process was held since the last look, scans it and continues it.
  void ServeHoldsMeanwhile();
  // With --user, `pid` is running and is somebody else's now.
  bool NotTheOwners(uint32_t pid) const;
  // A followed process that is no longer the owner's: never probed or scanned again.
  void LeaveOut(TrackedProcess& t);
  // `pid`, in the scope, is left out as somebody else's (running as `as_uid`, read from
  // /proc when not given): counted, said now and in the summary.
  void NoteLeftOut(uint32_t pid, std::optional<uid_t> as_uid = std::nullopt);
  // Notes what attaching found for `t`: the first time, it is announced (by the library
  // that covers it, unless its source said so itself).
  void NoteAttached(TrackedProcess& t, const AttachPlanner::Attached& attached);

  Parts p_;
  std::optional<int> child_status_;
  LeftOutProcesses left_out_;
};

}  // namespace xtrace
