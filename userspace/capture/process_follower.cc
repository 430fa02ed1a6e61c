// Following a capture's processes; see process_follower.h.
#include "capture/process_follower.h"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <set>
#include <type_traits>
#include <variant>

#include "base/monotonic_clock.h"
#include "base/read_file.h"
#include "capture/discovery/proc_stat.h"
#include "capture/discovery/process_owner.h"
#include "capture/discovery/running_processes.h"
#include "capture/discovery/slurm_job.h"
#include "capture/holds/held_command.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

// How the launched command ended (a wait(2) status), if it has: the child is left unreaped
// for the one who launched the capture (CaptureOptions::on_command_started).
std::optional<int> ExitStatusOf(pid_t pid) {
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid != pid)
    return std::nullopt;
  if (info.si_code == CLD_EXITED) return (info.si_status & 0xff) << 8;
  return (info.si_status & 0x7f) | (info.si_code == CLD_DUMPED ? 0x80 : 0);
}

}  // namespace

TrackedProcess& ProcessFollower::Track(uint32_t pid, bool given) {
  const ProcessTable::Tracked tracked = p_.processes.Track(pid, given);
  if (!tracked.fresh) return tracked.process;
  if (tracked.replaced) p_.planner.ReleaseLibraries(pid, MonotonicNs());
  if (given && p_.options.start_paused) {
    (void)p_.maps.SetCollectionState(pid, XT_COLLECT_PAUSED);
    Say("pid " + std::to_string(pid) + " starts paused: nothing is recorded until it calls __itt_resume");
  }
  // BPF selects children and --comm processes by itself; one found in /proc needs telling.
  if (!p_.scope.all_processes) (void)p_.maps.TracePid(pid);
  return tracked.process;
}

void ProcessFollower::Forget(TrackedProcess& t, uint64_t ended_ns) {
  const uint32_t pid = t.pid;
  t.had_records = t.had_records || p_.correlator.SawProcess(pid);
  p_.correlator.ProcessEnded(pid, ended_ns);
  p_.planner.ProcessGone(pid, MonotonicNs());
  if (!p_.scope.all_processes) p_.maps.ForgetPid(pid);
  p_.processes.MarkGone(pid);  // `t` is no more if it was found by discovery
}

void ProcessFollower::Detached(const std::vector<uint32_t>& pids) {
  for (uint32_t pid : pids) {
    TrackedProcess* t = p_.processes.Find(pid);
    if (!t || t->detached) continue;
    t->detached = true;
    t->rescan = false;
    // Its detach can be read from the ring only as it exits: it still detached, and says
    // so, but its probes are already released.
    if (!t->gone) p_.planner.ProcessGone(pid, MonotonicNs());
    Say("pid " + std::to_string(pid) + " detached itself (__itt_detach); its capture ended");
  }
}

void ProcessFollower::NoteAttached(TrackedProcess& t, const AttachPlanner::Attached& attached) {
  if (!attached.any) return;
  if (!t.ever_attached) {
    t.ever_attached = true;
    p_.processes.NoteTraced(t.pid);
    if (!t.held) p_.correlator.NoteProcess(t.pid);
  }
  // Said again when the process turns out to map another file than the one named: `record`
  // names the library the command will find before it execs, and a command that chroots
  // (or loads its own copy) maps another.
  if (!attached.via.empty() && attached.via != t.attached_via) {
    t.attached_via = attached.via;
    Say("attached to pid " + std::to_string(t.pid) + " (" + attached.via + ")");
  }
}

void ProcessFollower::ScanPending() {
  const bool per_process = p_.planner.per_process_links();
  for (uint32_t pid : p_.processes.Select([per_process](const TrackedProcess& t) {
         return !t.gone && !t.detached && (t.rescan || (t.given && per_process));
       })) {
    ScanOne(pid);
    // The first scan probes every running process in scope (seconds under --system), and
    // holding is on from before it: a process that starts or loads libraries meanwhile waits
    // for one process's scan, not for all of them (nor for the guardian's bound).
    ServeHoldsMeanwhile();
  }
}

void ProcessFollower::ServeHoldsMeanwhile() {
  if (!p_.holds) return;
  (void)p_.maps.Drain(p_.on_record);
  if (!p_.holds->any_pending()) return;
  for (uint32_t pid : p_.processes.Select([](const TrackedProcess& t) {
         return t.rescan && !t.gone && !t.detached;
       }))
    ScanOne(pid);
  ReleaseHolds();
}

void ProcessFollower::ScanOne(uint32_t pid) {
  TrackedProcess* t = p_.processes.Find(pid);
  if (!t || t->gone || t->detached) return;
  t->rescan = false;
  // A process that is no longer the owner's (it exec'd another user's set-user-ID program
  // after its fork was seen) left the capture in BPF at that exec; it is not probed from
  // here either. Asked again after the scan: the kernel drops a process's probes at such
  // an exec, so an exec between the two questions is one the second sees.
  if (NotTheOwners(pid)) return LeaveOut(*t);
  // Unreadable: gone; its exit record or the liveness check forgets it.
  if (auto attached = p_.planner.Scan(pid, t->given)) {
    if (NotTheOwners(pid)) return LeaveOut(*t);
    NoteAttached(*t, *attached);
  }
}

bool ProcessFollower::NotTheOwners(uint32_t pid) const {
  if (!p_.scope.owner) return false;
  const auto uids = ReadProcessUids(pid);
  return uids && !uids->AllAre(*p_.scope.owner);  // gone: its end is noted elsewhere
}

void ProcessFollower::LeaveOut(TrackedProcess& t) {
  if (t.detached) return;
  NoteLeftOut(t.pid);
  t.detached = true;
  t.rescan = false;
  p_.planner.ProcessGone(t.pid, MonotonicNs());
  if (!p_.scope.all_processes) p_.maps.ForgetPid(t.pid);
}

void ProcessFollower::ReleaseHolds() {
  if (p_.holds && p_.holds->any_pending()) p_.holds->ReleaseAll(MonotonicNs());
}

void ProcessFollower::CheckAlive(bool discovered_too) {
  std::vector<uint32_t> gone;
  for (const auto& [pid, t] : p_.processes.processes()) {
    if (t.gone || t.held || (!t.given && !discovered_too)) continue;
    if (t.is_child) {
      if (auto status = ExitStatusOf(static_cast<pid_t>(pid))) {
        child_status_ = status;
        gone.push_back(pid);
      }
      continue;
    }
    if (p_.processes.Ended(t)) gone.push_back(pid);
  }
  if (gone.empty()) return;
  // Their last records are in the ring already: take them before closing what they left open.
  (void)p_.maps.Drain(p_.on_record);
  const uint64_t now = MonotonicNs();
  for (uint32_t pid : gone) {
    TrackedProcess* t = p_.processes.Find(pid);
    if (t && !t->gone) Forget(*t, now);
  }
}

bool ProcessFollower::FollowedAllGone() const {
  for (const auto& [pid, t] : p_.processes.processes())
    if (!t.gone && !t.detached) return false;
  return true;
}

void ProcessFollower::OnProcessRecord(const DecodedProcessRecord& record) {
  std::visit(
      [this](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        const uint32_t pid = r.hdr.pid;
        // Released after the next scan, whatever it finds, and whether or not it is followed.
        if ((r.hdr.flags & XT_FLAG_HELD) && p_.holds)
          p_.holds->Held(pid, r.hdr.tid, HoldCauseOf(r.hdr), r.hdr.start_ns);
        if (pid == p_.self_pid || pid == 0) return;
        // A followed process that became another user's at this exec: it left the capture
        // in BPF; it is neither probed nor named in the log from here on, and said.
        if (r.hdr.type == XT_REC_PROCESS_EXEC && (r.hdr.flags & XT_FLAG_LEFT_SCOPE)) {
          if (TrackedProcess* t = p_.processes.Find(pid); t && !t->gone) LeaveOut(*t);
          else NoteLeftOut(pid);
          return;
        }
        if constexpr (std::is_same_v<T, DecodedProcessExit>) {
          TrackedProcess* t = p_.processes.Find(pid);
          if (!t || t->gone) return;
          if (t->is_child) return;  // reaped (and its status kept) by CheckAlive
          // Its earlier records came before this one in the ring: nothing of it is pending.
          Forget(*t, r.hdr.start_ns);
        } else {
          if constexpr (std::is_same_v<T, DecodedProcessStart>) {
            // A fork record for a pid still tracked is either about the process already
            // tracked (found in /proc while its record waited in the ring) or a new process
            // whose predecessor's exit was missed: their start times tell them apart.
            TrackedProcess* old = p_.processes.Find(pid);
            if (r.hdr.type == XT_REC_PROCESS_FORK && old && !old->gone && !old->held &&
                p_.processes.Recycled(*old))
              Forget(*old, r.hdr.start_ns);
            TrackedProcess& t = Track(pid, false);
            ProcessDetails seen;
            seen.comm = std::string(r.comm);
            seen.command_line = r.command_line;
            seen.ns_pid = r.ns_pid;
            if (p_.scope.cgroup && r.cgroup_id == p_.scope.cgroup->id)
              seen.cgroup_path = p_.scope.cgroup->path;
            // The log follows what the process is now: a given one from its first exec, any
            // other once the log has named it.
            if (r.hdr.type == XT_REC_PROCESS_EXEC) {
              p_.correlator.ProcessExeced(pid, r.hdr.start_ns, seen, t.given);
              p_.planner.ProcessExeced(pid, r.hdr.start_ns);
            }
            p_.processes.SawStart(pid, std::move(seen), r.cgroup_id);
            t.rescan = true;
          } else {
            Track(pid, false).rescan = true;
          }
        }
      },
      record);
}

void ProcessFollower::NoteFoundRunning() {
  for (const auto& [pid, t] : p_.processes.processes())
    if (!t.gone && !t.is_child && pid != p_.self_pid) p_.planner.ProcessFoundRunning(pid);
}

// Processes already running that the scope selects (children of the given ones among them).
void ProcessFollower::DiscoverRunning() {
  std::set<uint32_t> followed;
  for (const auto& [pid, t] : p_.processes.processes()) followed.insert(pid);
  std::vector<uint32_t> not_the_owners;
  for (uint32_t pid : SelectRunningProcesses(p_.scope, followed, p_.self_pid, &not_the_owners))
    Track(pid, false);
  for (const auto& [pid, uid] : p_.scope.job_pids_not_the_owners) NoteLeftOut(pid, uid);
  for (uint32_t pid : not_the_owners) NoteLeftOut(pid);
}

// A step started in the job during the capture runs under a slurmstepd of its own, not as a
// child of a process followed so far: BPF cannot see that it belongs to the job, only its
// environment says so. Its tasks are found here and attached as running processes are,
// once they are the user's (a slurmstepd's child is root's until it takes the user's uid).
void ProcessFollower::FindJobProcessesStartedLater() {
  if (p_.scope.slurm.job_id.empty() || p_.scope.cgroup) return;
  const SlurmJobOnNode job = FindSlurmJobOnNode(p_.scope.slurm, p_.options.client_pid, p_.scope.owner);
  for (uint32_t pid : job.pids) {
    if (pid == p_.self_pid) continue;
    if (const TrackedProcess* t = p_.processes.Find(pid); t && !t->gone) continue;
    if (!p_.scope.Owns(pid)) {
      NoteLeftOut(pid);
      continue;
    }
    left_out_.Remove(pid);  // it gave the other uid up: the user's now, and captured
    if (std::find(job.without_cluster_name.begin(), job.without_cluster_name.end(), pid) !=
        job.without_cluster_name.end())
      Say(SlurmJobWithoutClusterNameLine(p_.scope.slurm, std::to_string(pid)));
    Track(pid, false).rescan = true;
    // Running before xtrace found it: what it made meanwhile is unknown, as for the
    // processes found at the start.
    p_.planner.ProcessFoundRunning(pid);
  }
}

void ProcessFollower::NoteLeftOut(uint32_t pid, std::optional<uid_t> as_uid) {
  if (!p_.scope.owner || left_out_.Contains(pid)) return;
  if (!as_uid) {
    const auto uids = ReadProcessUids(pid);
    if (!uids) return;  // gone: nothing of it to leave out
    for (uid_t uid : {uids->effective, uids->real, uids->saved})
      if (uid != *p_.scope.owner && !as_uid) as_uid = uid;
    if (!as_uid) return;
  }
  std::string comm = ReadWholeFile("/proc/" + std::to_string(pid) + "/comm").value_or("");
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  left_out_.Add(pid, comm, *as_uid);
  Say("pid " + std::to_string(pid) + (comm.empty() ? "" : " (" + comm + ")") +
      " left out: it runs as " + DescribeUser(*as_uid) + ", and this capture covers the "
      "processes of " + DescribeUser(*p_.scope.owner) + " alone");
}

Status ProcessFollower::LaunchCommand() {
  auto spawned = HeldCommand::Spawn(p_.options.command);
  if (!spawned.ok()) return spawned.status();
  HeldCommand& command = *spawned;
  const auto pid = static_cast<uint32_t>(command.pid());
  TrackedProcess& t = Track(pid, true);
  t.is_child = true;
  t.held = true;
  if (p_.options.start_paused) p_.correlator.NoteStartPaused(pid, MonotonicNs());
  if (Status st = p_.maps.TracePid(pid); !st.ok()) return st;
  NoteAttached(t, p_.planner.BeforeExec(pid));
  if (Status st = command.Release(); !st.ok()) return st;
  if (p_.options.on_command_started) p_.options.on_command_started(static_cast<int>(pid));
  t.held = false;
  t.rescan = true;
  // Its exec record, if already in the ring, names it first: then every exec after comes
  // in order (`env A=1 app` is env, then app), however fast env execs again.
  (void)p_.maps.Drain(p_.on_record);
  if (t.ever_attached) p_.correlator.NoteProcess(pid);
  return Status::Ok();
}

}  // namespace xtrace
