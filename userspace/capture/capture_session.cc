// The capture loop: ties the parts of a capture together — the probes (AttachPlanner), the
// processes (ProcessTable), the log (LogSink, CaptureOutput), correlation, and the report —
// from loading the probes to the closing summary.
#include "capture/capture_session.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "base/read_file.h"
#include "capture/attach_planner.h"
#include "capture/bpf/capture_maps.h"
#include "capture/output/capture_output.h"
#include "capture/discovery/capture_scope.h"
#include "capture/sources/device_clock_sampler.h"
#include "capture/sources/driver_functions.h"
#include "capture/output/drm_summary.h"
#include "capture/output/drop_windows.h"
#include "capture/holds/held_command.h"
#include "capture/output/host_info.h"
#include "capture/output/itt_summary.h"
#include "capture/output/log_sink.h"
#include "capture/sources/probe_source.h"
#include "capture/discovery/proc_stat.h"
#include "capture/sources/pending_calls.h"
#include "capture/holds/process_holds.h"
#include "capture/discovery/process_table.h"
#include "capture/discovery/process_watcher.h"
#include "capture/discovery/process_owner.h"
#include "capture/output/record_families.h"
#include "capture/discovery/running_processes.h"
#include "capture/discovery/slurm_job.h"
#include "capture/sources/ze_query.h"
#include "capture/sources/ze_source.h"
#include "correlate/correlator.h"
#include "decode/process_record_decoder.h"
#include "decode/record_decoder.h"
#include "xtrace/hold.h"
#include "xtrace/records.h"

namespace xtrace {

volatile std::sig_atomic_t g_capture_stop = 0;

namespace {

// How often the device clocks are read against the host's.
constexpr uint64_t kClockReadingIntervalNs = 1'000'000'000;

// How often processes found by discovery are checked for being alive. Exit records are the
// usual way to learn of an exit; this catches the ones a full ring dropped.
constexpr uint64_t kDiscoveredSweepNs = 5'000'000'000ull;

// How often a Slurm job without a cgroup of its own is looked for again in /proc (its
// environment is the only mark of a step started during the capture): often enough that
// such a step is traced from early on, seldom enough that reading every process's
// environment costs the node nothing to speak of.
constexpr uint64_t kSlurmJobSweepNs = 1'000'000'000ull;

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

uint64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

class Session {
 public:
  explicit Session(const CaptureOptions& options) : opt_(options) {}
  // Links before the programs they run (the planner), programs before the maps they use.
  // The guardian last: it continues whatever the lifecycle programs held until they went.
  ~Session() {
    queries_.reset();
    planner_.reset();
    watcher_.reset();
    holds_.reset();
  }

  Result<CaptureReport> Run();

 private:
  void Say(const std::string& line) const {
    if (!opt_.quiet) std::fprintf(stderr, "xtrace: %s\n", line.c_str());
  }
  bool StopRequested() const {
    return g_capture_stop || (opt_.stop_requested && opt_.stop_requested->load());
  }

  Status Prepare();
  Status LaunchCommand();
  void DiscoverRunning();
  // --slurm-job without a job cgroup: the job's processes that started since it was last
  // looked for and are no children of a process already followed (a step's tasks).
  void FindJobProcessesStartedLater();
  TrackedProcess& Track(uint32_t pid, bool given);
  // The process is gone (its end seen at `ended_ns`): its probes go, its open spans end.
  void Forget(TrackedProcess& t, uint64_t ended_ns);
  void DetachTargets();
  // Scans every process that asks for it; a hold taken meanwhile is served between two of
  // them (ServeHoldsMeanwhile), not only once all are done.
  void ScanPending();
  // Scans `pid` if it still asks for a scan (gone, detached and left-out processes do not).
  void ScanOne(uint32_t pid);
  // Reads the ring and, if a process was held since the last look, scans it and continues it.
  void ServeHoldsMeanwhile();
  // With --user, `pid` is running and is somebody else's now.
  bool NotTheOwners(uint32_t pid) const;
  // A followed process that is no longer the owner's: never probed or scanned again.
  void LeaveOut(TrackedProcess& t);
  // Processes are held from now on (the capture is ready to release them promptly), or no more.
  Status SetHolding(bool on);
  // Continues every process held so far (their new files were just scanned and probed).
  void ReleaseHolds();
  void CheckAlive(bool discovered_too);
  // Notes what attaching found for `t`: the first time, it is announced (by the library
  // that covers it, unless its source said so itself).
  void NoteAttached(TrackedProcess& t, const AttachPlanner::Attached& attached);
  bool FollowedAllGone() const;
  void OnRecord(std::span<const std::byte> data);
  void OnProcessRecord(std::span<const std::byte> data);
  void OnQueryHold(std::span<const std::byte> data);
  // Processes running before the capture began: their unknown objects are asked about.
  void WatchForQueries();
  std::vector<ProcessCaptureStats> PerProcess(const RecordTally& tally,
                                              const std::map<uint32_t, uint64_t>& drops) const;
  // The summary that closes the current file.
  LogSummary FileSummary(uint64_t dropped_total, const std::map<uint32_t, uint64_t>& drops) const;
  Status RotateIfDue(uint64_t now);
  void Publish();
  void ReportProgress(uint64_t elapsed_ns);
  void NoteDrops(const Counters& counters, uint64_t now) {
    if (auto window = drop_windows_.Look(counters, now)) sink_->OnEvent(*window);
  }
  void OpenDeviceClocks();
  void ReadDeviceClocks();

  const CaptureOptions& opt_;
  CaptureScope scope_;
  CollectorPidNamespace pidns_;
  uint32_t self_pid_ = 0;
  std::unique_ptr<CaptureMaps> maps_;
  // Python interpreters found in traced processes (capture/python_source.h), for the
  // correlator to resolve their frames; declared before the sources and the correlator.
  PythonInterpreters python_;
  ProcessVmMemory python_memory_;
  std::unique_ptr<ProcessWatcher> watcher_;
  std::unique_ptr<ProcessHolds> holds_;  // null: processes are not held
  std::unique_ptr<ZeQueries> queries_;   // null: objects made before the attach stay unknown
  xt_capture_config config_{};
  LinkReaper reaper_;
  std::unique_ptr<AttachPlanner> planner_;
  std::unique_ptr<CaptureOutput> output_;
  std::unique_ptr<EventTap> tap_;  // before the sink, which feeds it
  std::unique_ptr<LogSink> sink_;
  ProcessTable processes_;
  std::unique_ptr<Correlator> correlator_;
  std::unique_ptr<DeviceClockSampler> clocks_;
  // Where the driver xtrace's Level Zero loaded keeps what it hands out by pointer: the Level
  // Zero source probes those functions there in every file of that build.
  DriverFunctions driver_functions_;
  uint64_t malformed_ = 0;
  std::string first_malformed_;
  // What the sources said once about what they cannot trace (SourceContext::note).
  std::vector<std::string> notes_;
  std::optional<int> child_status_;
  std::vector<uint32_t> detach_requests_;  // pids whose __itt_detach was just seen
  RecordCallback on_record_;
  uint64_t drops_reported_ = 0;
  DropWindows drop_windows_;  // RecordsDropped events: where on the timeline drops happened
  bool progress_shown_ = false;  // a status line is on the terminal, to be overwritten
};

// Once a second: drops as soon as they happen (whatever the output), and on a terminal a
// status line rewritten in place, so a long capture shows it is alive.
void Session::ReportProgress(uint64_t elapsed_ns) {
  if (opt_.quiet) return;
  const uint64_t dropped = maps_->ReadCounters()[XT_CNT_DROPPED];
  if (dropped > drops_reported_) {
    if (progress_shown_) std::fputc('\n', stderr);
    progress_shown_ = false;
    Say(DropsLine(dropped - drops_reported_, dropped, opt_.ring_bytes));
    drops_reported_ = dropped;
  }
  if (!isatty(STDERR_FILENO)) return;
  std::fprintf(stderr, "\r%s",
               ProgressLine(elapsed_ns / 1e9, sink_->events(), output_->total_bytes(), dropped).c_str());
  progress_shown_ = true;
}

TrackedProcess& Session::Track(uint32_t pid, bool given) {
  const ProcessTable::Tracked tracked = processes_.Track(pid, given);
  if (!tracked.fresh) return tracked.process;
  if (tracked.replaced) planner_->ReleaseLibraries(pid, MonotonicNs());
  if (given && opt_.start_paused) {
    (void)maps_->SetCollectionState(pid, XT_COLLECT_PAUSED);
    Say("pid " + std::to_string(pid) + " starts paused: nothing is recorded until it calls __itt_resume");
  }
  // BPF selects children and --comm processes by itself; one found in /proc needs telling.
  if (!scope_.all_processes) (void)maps_->TracePid(pid);
  return tracked.process;
}

void Session::Forget(TrackedProcess& t, uint64_t ended_ns) {
  const uint32_t pid = t.pid;
  t.had_records = t.had_records || correlator_->SawProcess(pid);
  correlator_->ProcessEnded(pid, ended_ns);
  if (queries_) queries_->Forget(pid);
  planner_->ProcessGone(pid, MonotonicNs());
  if (!scope_.all_processes) maps_->ForgetPid(pid);
  sink_->ProcessGone(pid);
  processes_.MarkGone(pid);  // `t` is no more if it was found by discovery
}

// A process that called __itt_detach is done: BPF already records nothing more of it (its
// state stays detached); its probes are released and it is no longer scanned.
void Session::DetachTargets() {
  for (uint32_t pid : detach_requests_) {
    TrackedProcess* t = processes_.Find(pid);
    if (!t || t->detached) continue;
    t->detached = true;
    t->rescan = false;
    // Its detach can be read from the ring only as it exits: it still detached, and says
    // so, but its probes are already released.
    if (!t->gone) planner_->ProcessGone(pid, MonotonicNs());
    Say("pid " + std::to_string(pid) + " detached itself (__itt_detach); its capture ended");
  }
  detach_requests_.clear();
}

void Session::NoteAttached(TrackedProcess& t, const AttachPlanner::Attached& attached) {
  if (!attached.any) return;
  if (!t.ever_attached) {
    t.ever_attached = true;
    processes_.NoteTraced(t.pid);
    if (!t.held) correlator_->NoteProcess(t.pid);
  }
  // Said again when the process turns out to map another file than the one named: `record`
  // names the library the command will find before it execs, and a command that chroots
  // (or loads its own copy) maps another.
  if (!attached.via.empty() && attached.via != t.attached_via) {
    t.attached_via = attached.via;
    Say("attached to pid " + std::to_string(t.pid) + " (" + attached.via + ")");
  }
}

void Session::ScanPending() {
  const bool per_process = planner_->per_process_links();
  for (uint32_t pid : processes_.Select([per_process](const TrackedProcess& t) {
         return !t.gone && !t.detached && (t.rescan || (t.given && per_process));
       })) {
    ScanOne(pid);
    // The first scan probes every running process in scope (seconds under --system), and
    // holding is on from before it: a process that starts or loads libraries meanwhile waits
    // for one process's scan, not for all of them (nor for the guardian's bound).
    ServeHoldsMeanwhile();
  }
}

void Session::ServeHoldsMeanwhile() {
  if (!holds_) return;
  (void)maps_->Drain(on_record_);
  if (!holds_->any_pending()) return;
  for (uint32_t pid : processes_.Select([](const TrackedProcess& t) {
         return t.rescan && !t.gone && !t.detached;
       }))
    ScanOne(pid);
  ReleaseHolds();
}

void Session::ScanOne(uint32_t pid) {
  TrackedProcess* t = processes_.Find(pid);
  if (!t || t->gone || t->detached) return;
  t->rescan = false;
  // A process that is no longer the owner's (it exec'd another user's set-user-ID program
  // after its fork was seen) left the capture in BPF at that exec; it is not probed from
  // here either. Asked again after the scan: the kernel drops a process's probes at such
  // an exec, so an exec between the two questions is one the second sees.
  if (NotTheOwners(pid)) return LeaveOut(*t);
  // Unreadable: gone; its exit record or the liveness check forgets it.
  if (auto attached = planner_->Scan(pid, t->given)) {
    if (NotTheOwners(pid)) return LeaveOut(*t);
    NoteAttached(*t, *attached);
  }
}

bool Session::NotTheOwners(uint32_t pid) const {
  if (!scope_.owner) return false;
  const auto uids = ReadProcessUids(pid);
  return uids && !uids->AllAre(*scope_.owner);  // gone: its end is noted elsewhere
}

void Session::LeaveOut(TrackedProcess& t) {
  if (t.detached) return;
  t.detached = true;
  t.rescan = false;
  planner_->ProcessGone(t.pid, MonotonicNs());
  if (!scope_.all_processes) maps_->ForgetPid(t.pid);
}

// Holds are taken only while something serves them: from before the first scan (which
// serves them between two processes, ScanPending) to the end of the loop. A process held while
// the capture is already finishing (writing the log) would wait for the bound.
Status Session::SetHolding(bool on) {
  if (!holds_) return Status::Ok();
  config_.hold = on ? XT_HOLD_EXEC | XT_HOLD_LIBRARY | (queries_ ? XT_HOLD_QUERY : 0) : 0;
  return maps_->SetScope(config_);
}

void Session::ReleaseHolds() {
  if (holds_ && holds_->any_pending()) holds_->ReleaseAll(MonotonicNs());
}

void Session::CheckAlive(bool discovered_too) {
  std::vector<uint32_t> gone;
  for (const auto& [pid, t] : processes_.processes()) {
    if (t.gone || t.held || (!t.given && !discovered_too)) continue;
    if (t.is_child) {
      if (auto status = ExitStatusOf(static_cast<pid_t>(pid))) {
        child_status_ = status;
        gone.push_back(pid);
      }
      continue;
    }
    if (processes_.Ended(t)) gone.push_back(pid);
  }
  if (gone.empty()) return;
  // Their last records are in the ring already: take them before closing what they left open.
  (void)maps_->Drain(on_record_);
  const uint64_t now = MonotonicNs();
  for (uint32_t pid : gone) {
    TrackedProcess* t = processes_.Find(pid);
    if (t && !t->gone) Forget(*t, now);
  }
}

bool Session::FollowedAllGone() const {
  for (const auto& [pid, t] : processes_.processes())
    if (!t.gone && !t.detached) return false;
  return true;
}

void Session::OnProcessRecord(std::span<const std::byte> data) {
  auto decoded = DecodeProcessRecord(data);
  if (!decoded.ok()) {
    if (malformed_++ == 0) first_malformed_ = decoded.status().message();
    return;
  }
  std::visit(
      [this](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        const uint32_t pid = r.hdr.pid;
        // Released after the next scan, whatever it finds, and whether or not it is followed.
        if ((r.hdr.flags & XT_FLAG_HELD) && holds_)
          holds_->Held(pid, r.hdr.type == XT_REC_PROCESS_EXEC, r.hdr.start_ns);
        if (pid == self_pid_ || pid == 0) return;
        if constexpr (std::is_same_v<T, DecodedProcessExit>) {
          TrackedProcess* t = processes_.Find(pid);
          if (!t || t->gone) return;
          if (t->is_child) return;  // reaped (and its status kept) by CheckAlive
          // Its earlier records came before this one in the ring: nothing of it is pending.
          Forget(*t, r.hdr.start_ns);
        } else {
          if constexpr (std::is_same_v<T, DecodedProcessStart>) {
            // A fork record for a pid still tracked is either about the process already
            // tracked (found in /proc while its record waited in the ring) or a new process
            // whose predecessor's exit was missed: their start times tell them apart.
            TrackedProcess* old = processes_.Find(pid);
            if (r.hdr.type == XT_REC_PROCESS_FORK && old && !old->gone && !old->held &&
                processes_.Recycled(*old))
              Forget(*old, r.hdr.start_ns);
            TrackedProcess& t = Track(pid, false);
            ProcessDetails seen;
            seen.comm = std::string(r.comm);
            seen.command_line = r.command_line;
            seen.ns_pid = r.ns_pid;
            if (scope_.cgroup && r.cgroup_id == scope_.cgroup->id) seen.cgroup_path = scope_.cgroup->path;
            // The log follows what the process is now: a given one from its first exec, any
            // other once the log has named it.
            if (r.hdr.type == XT_REC_PROCESS_EXEC) {
              correlator_->ProcessExeced(pid, r.hdr.start_ns, seen, t.given);
              planner_->ProcessExeced(pid, r.hdr.start_ns);
              // A new image: everything it uses from now on is made under our eyes.
              if (queries_) queries_->Forget(pid);
            }
            processes_.SawStart(pid, std::move(seen), r.cgroup_id);
            t.rescan = true;
          } else {
            Track(pid, false).rescan = true;
          }
        }
      },
      *decoded);
}

void Session::OnRecord(std::span<const std::byte> data) {
  if (data.size() >= sizeof(xt_record_header)) {
    xt_record_header hdr;
    std::memcpy(&hdr, data.data(), sizeof(hdr));
    if (IsProcessRecordType(hdr.type)) return OnProcessRecord(data);
    if (hdr.type == XT_REC_ZE_QUERY_HOLD) return OnQueryHold(data);
    // xtrace reads the device clocks through Level Zero itself; a system-wide capture's
    // probes see those calls too, and they are not the workload's.
    if (hdr.pid == self_pid_) return;
    const std::string_view family = RecordFamily(data);
    if (!family.empty()) {
      sink_->CountRecord(hdr.pid, family);
      processes_.NoteTraced(hdr.pid);
    }
  }
  auto decoded = DecodeRecord(data);
  if (!decoded.ok()) {
    if (malformed_++ == 0) first_malformed_ = decoded.status().message();
    return;
  }
  correlator_->OnRecord(*decoded);
  if (const auto* state = std::get_if<DecodedIttState>(&*decoded);
      state && state->state == XT_COLLECT_DETACHED)
    detach_requests_.push_back(state->hdr.pid);
}

// A thread held to be asked about objects its process made before the attach: asked now,
// before any later record, so that the launch it was held in and every later one is named.
void Session::OnQueryHold(std::span<const std::byte> data) {
  xt_ze_query_hold rec{};
  if (data.size() < sizeof(rec)) {
    if (malformed_++ == 0) first_malformed_ = "query hold record too short";
    return;
  }
  std::memcpy(&rec, data.data(), sizeof(rec));
  if (queries_) queries_->OnHold(rec.hdr.pid, rec.hdr.tid, rec.ip, rec.hdr.start_ns);
  else ContinueHeld(maps_->held_fd(), rec.hdr.pid);
}

void Session::WatchForQueries() {
  if (!queries_) return;
  for (const auto& [pid, t] : processes_.processes())
    if (!t.gone && !t.is_child && pid != self_pid_) queries_->Watch(pid);
}

void Session::OpenDeviceClocks() {
  if (opt_.drm == DrmCapture::kOnly) return;  // no Level Zero calls to time: nothing to map
  auto sampler = DeviceClockSampler::Open();
  if (!sampler.ok()) {
    Say("no device clock readings (" + sampler.status().message() +
        "): device times are estimated unless the traced processes read their clocks");
    return;
  }
  clocks_ = std::move(*sampler);
  // Before anything is attached (the sources read it as they probe driver files).
  if (const auto self_maps = ReadWholeFile("/proc/self/maps"))
    for (const auto& [name, address] : clocks_->ExtensionFunctions(ZeSource::DriverFunctionNames()))
      driver_functions_.Add(*self_maps, name, address);
  std::vector<DeviceInfo> devices;
  std::vector<DeviceUuid> uuids;
  for (const SampledDevice& d : clocks_->devices()) {
    devices.push_back(DeviceInfo{static_cast<uint32_t>(devices.size()),
                                 output_->writer().strings().Intern(d.name), d.timer_hz,
                                 d.kernel_timestamp_bits, d.queue_group_flags});
    DeviceUuid& uuid = uuids.emplace_back();
    std::memcpy(&uuid.lo, d.uuid, 8);
    std::memcpy(&uuid.hi, d.uuid + 8, 8);
  }
  correlator_->ze().OnDevices(devices, std::move(uuids));
  ReadDeviceClocks();
}

// Every second during the capture, and once at the end: each device's clock against the host's.
void Session::ReadDeviceClocks() {
  if (!clocks_) return;
  for (const DeviceClockReading& r : clocks_->Read())
    correlator_->ze().OnClockReading(r.device, r.ticks, r.monotonic_raw_ns, r.monotonic_ns,
                                     r.realtime_ns);
  correlator_->ze().AfterClockReadings(MonotonicNs());
}

Status Session::Prepare() {
  self_pid_ = static_cast<uint32_t>(getpid());
  for (uint32_t pid : opt_.pids)
    if (!ProcessAlive(pid)) return Status::Error("no running process with pid " + std::to_string(pid));
  auto scope = ResolveCaptureScope(opt_);
  if (!scope.ok()) return scope.status();
  scope_ = std::move(*scope);

  SetLibbpfVerbosity(opt_.verbose);
  auto maps = CaptureMaps::Create(opt_.ring_bytes);
  if (!maps.ok()) return maps.status();
  maps_ = std::move(*maps);
  auto watcher = ProcessWatcher::Load(*maps_);
  if (!watcher.ok()) {
    if (scope_.discovers()) return watcher.status().WithContext("cannot follow processes");
    Say(watcher.status().message() + "; new processes are not followed");
  } else {
    watcher_ = std::move(*watcher);
    auto ns = watcher_->FindOwnPidNamespace();
    if (!ns.ok()) return ns.status();
    pidns_ = *ns;
  }
  if (pidns_.level > 0) {
    // BPF numbers processes as this namespace does; /proc must show the same namespace.
    char self[32] = {};
    if (readlink("/proc/self", self, sizeof(self) - 1) <= 0 ||
        std::strtoul(self, nullptr, 10) != self_pid_)
      return Status::Error("xtrace runs in a pid namespace of its own but /proc shows another "
                           "one; mount /proc for this namespace (e.g. unshare --mount-proc)");
  }
  config_ = scope_.ToConfig(pidns_);
  if (Status st = maps_->SetScope(config_); !st.ok()) return st;
  // Holds need the lifecycle programs; the guardian is there before the first hold can be.
  if (opt_.hold && watcher_) {
    auto holds = ProcessHolds::Start(maps_->held_fd(), opt_.hold_max_ns);
    if (holds.ok()) holds_ = std::move(*holds);
    else Say(holds.status().message() + "; processes are not held at their start");
  }
  UniqueFd cgroup_fd;
  if (scope_.cgroup) {
    cgroup_fd.Reset(open(scope_.cgroup->dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!cgroup_fd.valid())
      return Status::Error(scope_.cgroup->dir + ": cannot open: " + std::strerror(errno));
    // The map holds its own reference to the cgroup: the fd is not needed afterwards.
    if (Status st = maps_->SetScopeCgroup(cgroup_fd.get()); !st.ok()) return st;
  }

  const auto say = [this](const std::string& l) { Say(l); };
  const auto note = [this](const std::string& n) {
    if (std::find(notes_.begin(), notes_.end(), n) == notes_.end()) notes_.push_back(n);
  };
  auto sources =
      LoadProbeSources(SourceContext{*maps_, opt_, say, &python_, note, &driver_functions_});
  if (!sources.ok()) return sources.status();
  // Given processes alone: their own uprobes. A scope that discovers processes: uprobes per
  // library file unless asked otherwise (see docs/design-notes.md, "Probes per library file").
  const AttachPlanner::Settings settings{
      .watch_library_loads = scope_.discovers() || holds_ != nullptr,
      // A capture of one user's processes puts nothing into anybody else's: no uprobe on a
      // library file that another user's process traps on.
      .per_process_links = !scope_.discovers() || opt_.probes_per_process || scope_.owner,
      .verbose = opt_.verbose};
  planner_ = std::make_unique<AttachPlanner>(std::move(*sources), watcher_.get(), reaper_,
                                             settings, say);

  for (uint32_t pid : opt_.pids) Track(pid, true);
  // Found, not given: a job runs processes that never use the GPU (its shell, mpirun), and
  // they need no word of waiting for one.
  for (uint32_t pid : scope_.job_pids) Track(pid, false);

  const uint64_t now = MonotonicNs();
  LogHeader header = MakeLogHeader(opt_.xtrace_command_line);
  auto output = opt_.output_dir.empty()
                    ? CaptureOutput::ToFile(opt_.output_path, header)
                    : CaptureOutput::ToDirectory(opt_.output_dir, opt_.rotation, header, now);
  if (!output.ok()) return output.status();
  output_ = std::move(*output);
  if (opt_.summary_tap) tap_ = opt_.summary_tap();
  sink_ = std::make_unique<LogSink>(output_->writer(), tap_.get());
  correlator_ = std::make_unique<Correlator>(output_->writer().strings(), *sink_, processes_);
  // With nothing recording host API calls there is no call to attribute an ioctl to.
  correlator_->drm().set_link_host_calls(opt_.drm != DrmCapture::kOnly);
  if (opt_.wants_python_frames()) correlator_->SetPython(python_, python_memory_);
  on_record_ = [this](std::span<const std::byte> d) { OnRecord(d); };
  if (opt_.start_paused)
    for (uint32_t pid : opt_.pids) correlator_->NoteStartPaused(pid, MonotonicNs());
  // Asking a process about what it made before the attach stops a thread of it: only with
  // the guardian, which puts the thread back and continues it whatever becomes of xtrace.
  if (opt_.query && !holds_ && !opt_.pids.empty())
    Say("kernels made before the attach stay unnamed: asking the process about them needs "
        "holds and their guardian (--no-hold, or the lifecycle programs did not load)");
  if (opt_.query && opt_.drm != DrmCapture::kOnly && holds_ && holds_->call_slot())
    queries_ = std::make_unique<ZeQueries>(
        *maps_, maps_->held_fd(), holds_->call_slot(),
        [this](uint32_t pid, uint32_t tid, uint64_t start_ns, uint64_t end_ns, const LearnedKernel& k) {
          correlator_->LearnKernel(pid, tid, start_ns, end_ns, k.kernel, k.name, false);
        },
        [this](const ApiCall& call) { correlator_->LearnCall(call); },
        [this](const std::string& line) { Say(line); });
  OpenDeviceClocks();

  if (watcher_) {
    if (Status st = watcher_->AttachLifecycle(); !st.ok()) {
      if (scope_.discovers())
        Say(st.message() + "; only processes running now are traced");
    }
    if (holds_) {
      if (Status st = watcher_->AttachHoldParents(); !st.ok())
        Say(st.message() + "; a parent that stops itself with its held child (nsenter, sudo) "
            "stays stopped: continue it with kill -CONT, or capture with --no-hold");
    }
  }
  return Status::Ok();
}

// Processes already running that the scope selects (children of the given ones among them).
void Session::DiscoverRunning() {
  std::set<uint32_t> followed;
  for (const auto& [pid, t] : processes_.processes()) followed.insert(pid);
  for (uint32_t pid : SelectRunningProcesses(scope_, followed, self_pid_)) Track(pid, false);
}

// A step started in the job during the capture runs under a slurmstepd of its own, not as a
// child of a process followed so far: BPF cannot see that it belongs to the job, only its
// environment says so. Its tasks are found here and attached as running processes are,
// once they are the user's (a slurmstepd's child is root's until it takes the user's uid).
void Session::FindJobProcessesStartedLater() {
  if (scope_.slurm_job.empty() || scope_.cgroup) return;
  const SlurmJobOnNode job =
      FindSlurmJobOnNode(scope_.slurm_job, scope_.slurm_node, opt_.client_pid, scope_.owner);
  for (uint32_t pid : job.pids) {
    if (pid == self_pid_) continue;
    if (const TrackedProcess* t = processes_.Find(pid); t && !t->gone) continue;
    if (!scope_.Owns(pid)) continue;
    Track(pid, false).rescan = true;
    // Running before xtrace found it: what it made meanwhile is asked about, as for the
    // processes found at the start.
    if (queries_) queries_->Watch(pid);
  }
}

Status Session::LaunchCommand() {
  auto spawned = HeldCommand::Spawn(opt_.command);
  if (!spawned.ok()) return spawned.status();
  HeldCommand& command = *spawned;
  const auto pid = static_cast<uint32_t>(command.pid());
  TrackedProcess& t = Track(pid, true);
  t.is_child = true;
  t.held = true;
  if (opt_.start_paused) correlator_->NoteStartPaused(pid, MonotonicNs());
  if (Status st = maps_->TracePid(pid); !st.ok()) return st;
  NoteAttached(t, planner_->BeforeExec(pid));
  if (Status st = command.Release(); !st.ok()) return st;
  if (opt_.on_command_started) opt_.on_command_started(static_cast<int>(pid));
  t.held = false;
  t.rescan = true;
  // Its exec record, if already in the ring, names it first: then every exec after comes
  // in order (`env A=1 app` is env, then app), however fast env execs again.
  (void)maps_->Drain(on_record_);
  if (t.ever_attached) correlator_->NoteProcess(pid);
  return Status::Ok();
}

std::vector<ProcessCaptureStats> Session::PerProcess(const RecordTally& tally,
                                                     const std::map<uint32_t, uint64_t>& drops) const {
  return PerProcessStats(tally, drops, [this](uint32_t pid) {
    std::string comm = sink_->CommOf(pid);
    return comm.empty() ? processes_.LastComm(pid) : comm;
  });
}

LogSummary Session::FileSummary(uint64_t dropped_total,
                                const std::map<uint32_t, uint64_t>& drops) const {
  LogSummary summary;
  summary.end_clock = ReadClockAnchor();
  summary.events = sink_->file_events();
  summary.dropped = sink_->FileDropped(dropped_total);
  summary.processes = static_cast<uint32_t>(sink_->file_tally().records.size());
  summary.process_stats = PerProcess(sink_->file_tally(), sink_->FileDropsByPid(drops));
  summary.dropped_by_source = sink_->FileDroppedBySource();
  summary.notes = notes_;
  return summary;
}

Status Session::RotateIfDue(uint64_t now) {
  if (!output_->RotationDue(now)) return Status::Ok();
  const uint64_t dropped = maps_->ReadCounters()[XT_CNT_DROPPED];
  const auto drops = maps_->ReadDropsByPid();
  Status st = output_->Rotate(FileSummary(dropped, drops), MakeLogHeader(opt_.xtrace_command_line), now);
  sink_->BeginFile(dropped, drops);
  if (st.ok() && !opt_.quiet && opt_.verbose) Say("now writing " + output_->current_path());
  return st;
}

void Session::Publish() {
  if (!opt_.on_progress) return;
  CaptureProgress p;
  p.current_file = output_->writer().path();
  p.files_finished = static_cast<uint32_t>(output_->finished().size());
  p.events = sink_->events();
  p.dropped = maps_->ReadCounters()[XT_CNT_DROPPED];
  p.processes_tracked = processes_.live_count();
  p.processes_traced = processes_.traced_count();
  p.links = planner_->link_count() + (watcher_ ? watcher_->lifecycle_link_count() : 0);
  p.traced_pid_entries = static_cast<uint32_t>(maps_->TracedPids().size());
  p.per_process = PerProcess(sink_->total_tally(), maps_->ReadDropsByPid());
  opt_.on_progress(p);
}

Result<CaptureReport> Session::Run() {
  if (Status st = Prepare(); !st.ok()) return st;
  // From zero, before anything is probed: the counters are this capture's own, and a drop
  // while the command starts or running processes are probed is a drop like any other (a
  // window begun later left those out of the drops by source, though not out of the total).
  drop_windows_.Start(Counters{}, MonotonicNs());
  // With --system and no cgroup, the host's own copy of each probed library is attached too,
  // for every process that will map it, so a process that starts during the capture is traced
  // from its first call instead of from the moment its libraries were found. (With a filter,
  // probing the host's copy would make processes outside the scope pay for probes that record
  // nothing.)
  planner_->PinHostLibraries(self_pid_,
                             scope_.all_processes && !scope_.cgroup && pidns_.level == 0);
  // Holding goes on before the running processes are found and scanned, and before a command
  // is started: a target that loads the Level Zero driver, or returns from zeInit with tables
  // to call through, after its first scan is held until it is scanned again, whenever in the
  // start-up that comes (a process running when the attach began was otherwise free to run
  // through its first calls in the moments between its scan and holding going on). The scans
  // serve the holds as they go (ScanPending), so a process held while a --system capture still
  // probes every running process waits for one process's scan, not for all of them. So does a
  // launch of a process attached mid-run that asks about an object made before (query holds):
  // its thread waits for the next look at the ring.
  if (Status st = SetHolding(true); !st.ok()) return st;
  DiscoverRunning();
  WatchForQueries();
  // A command, and the children it starts, are held from its start: the libraries it loads
  // right after its exec (the Level Zero driver, at zeInit) are probed before it calls them,
  // as for any later load.
  if (!opt_.command.empty())
    if (Status st = LaunchCommand(); !st.ok()) return st;
  // "attached to pid N" tells whoever waits for it that nothing is missed from then on, which
  // holds because holding is on: a process attached before its zeInit is held there until the
  // tables it takes are probed (the ITT source says "attached" only once the domains are on).
  ScanPending();
  if (scope_.discovers()) Say("tracing " + scope_.Describe());
  for (const auto& [pid, t] : processes_.processes()) {
    if (t.given && !t.ever_attached && !t.gone)
      Say("pid " + std::to_string(pid) + " has not loaded " + planner_->WaitsFor() +
          " yet; waiting for it to (Ctrl-C to stop)");
  }

  const uint64_t start = MonotonicNs();
  const uint64_t deadline = opt_.duration_ns ? start + *opt_.duration_ns : UINT64_MAX;
  uint64_t last_flush = start, last_sweep = start, last_clock_reading = start, last_job_sweep = start;
  Status read_error;
  Publish();

  while (!StopRequested()) {
    auto n = maps_->Poll(opt_.poll_interval_ms, on_record_);
    if (!n.ok()) {
      read_error = n.status();
      break;
    }
    const uint64_t now = MonotonicNs();
    NoteDrops(maps_->ReadCounters(), now);
    if (now - last_clock_reading >= kClockReadingIntervalNs) {
      ReadDeviceClocks();
      last_clock_reading = now;
    }
    if (now - last_flush >= opt_.flush_interval_ns) {
      if (Status st = output_->writer().Flush(); !st.ok()) {
        read_error = st;
        break;
      }
      last_flush = now;
      ReportProgress(now - start);
    }
    if (Status st = RotateIfDue(now); !st.ok()) {
      read_error = st;
      break;
    }
    if (now >= deadline) break;
    planner_->Tick(now, opt_.library_grace_ns);
    const bool sweep = now - last_sweep >= kDiscoveredSweepNs;
    if (sweep) last_sweep = now;
    DetachTargets();
    CheckAlive(sweep);
    if (now - last_job_sweep >= kSlurmJobSweepNs) {
      FindJobProcessesStartedLater();
      last_job_sweep = now;
    }
    ScanPending();
    ReleaseHolds();
    if (queries_) queries_->Tick();
    Publish();
    if (scope_.ends_with_targets() && FollowedAllGone()) break;
  }

  if (progress_shown_) std::fputc('\n', stderr);
  (void)SetHolding(false);
  // Everything the probes wrote before we stopped is still in the ring; a last clock reading
  // then covers the newest kernel timestamps, and the timeline lets go of what it held.
  (void)maps_->DrainLast(on_record_);
  ReleaseHolds();  // nothing more is probed: they go on as they are
  ReadDeviceClocks();
  DetachTargets();  // a detach read in these last records is reported too
  const Counters counters = maps_->ReadCounters();
  const auto drops = maps_->ReadDropsByPid();
  const uint64_t end = MonotonicNs();
  NoteDrops(counters, end);
  // Calls still running now return after the capture: their entries are all there is.
  for (const auto& [pid, t] : processes_.processes()) {
    if (t.gone || t.detached) continue;
    for (const DecodedCallUnfinished& call : PendingCalls(maps_->thread_state_fd(), pid, end))
      correlator_->OnRecord(DecodedRecord(call));
  }
  correlator_->Finish(end);

  // A launched command that is still running when the capture ends keeps running.
  for (const auto& [pid, t] : processes_.processes()) {
    if (!t.given || t.ever_attached) continue;
    const bool seen = t.had_records || correlator_->SawProcess(pid);
    Say("pid " + std::to_string(pid) + (t.gone ? " exited" : " is still running") +
        " and never loaded " + planner_->WaitsFor() +
        (seen ? ": only its kernel-driver (DRM) calls were captured"
              : ": nothing was captured from it"));
  }

  Status finish = output_->Finish(FileSummary(counters[XT_CNT_DROPPED], drops));
  if (counters[XT_CNT_TRACED_FULL])
    Say(std::to_string(counters[XT_CNT_TRACED_FULL]) +
        " new processes could not be followed: more than " + std::to_string(XT_MAX_TRACED_PROCS) +
        " processes were traced at once");

  CaptureReport report;
  const CorrelatorStats& cs = correlator_->stats();
  report.events = output_->total_events();
  report.launches = cs.launches;
  report.kernel_creates = cs.kernel_creates;
  report.itt_tasks = correlator_->itt_stats().tasks;
  report.itt_markers = correlator_->itt_stats().markers;
  report.dropped = counters[XT_CNT_DROPPED];
  report.malformed = malformed_;
  report.file_bytes = output_->total_bytes();
  report.files_written = static_cast<uint32_t>(output_->finished().size());
  for (const auto& [pid, t] : processes_.processes())
    report.processes_attached += t.ever_attached || t.had_records || correlator_->SawProcess(pid) ? 1 : 0;
  report.per_process = PerProcess(sink_->total_tally(), drops);
  report.command_exit_status = child_status_;

  SummaryFacts facts;
  facts.seconds = (end - start) / 1e9;
  facts.where = output_->finished().size() > 1
                    ? std::to_string(output_->finished().size()) + " files in " + opt_.output_dir
                    : output_->current_path();
  facts.correlator = cs;
  facts.timeline = correlator_->ze().timeline_stats();
  facts.ring_bytes = opt_.ring_bytes;
  facts.first_malformed = first_malformed_;
  if (opt_.verbose) {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    facts.peak_rss_mib = usage.ru_maxrss / 1024;
  }
  facts.drm_text = DrmSummary(correlator_->drm(), counters);
  facts.itt_text = SummarizeItt(correlator_->itt_stats(), counters[XT_CNT_PAUSED]);
  if (holds_)
    facts.holds_text =
        HoldSummary(holds_->Stats(counters[XT_CNT_HOLD_MISSED], counters[XT_CNT_PARENT_CONTINUED]));
  if (queries_) {
    QueryStats stats = queries_->stats();
    stats.missed = counters[XT_CNT_QUERY_MISSED];
    facts.queries_text = QuerySummary(stats);
  }
  if (const PythonFrameResolver* python = correlator_->python())
    facts.python_text = PythonFramesSummary(python->stats());
  if (tap_) facts.kernels_text = tap_->Summary();
  facts.dropped_by_source = DroppedBySource(drop_windows_.total());
  facts.notes = notes_;
  report.summary_text = SummaryText(report, facts);
  if (!opt_.quiet) std::fprintf(stderr, "%s\n", report.summary_text.c_str());
  Publish();
  if (!read_error.ok() || !finish.ok())
    Say("output: " + output_->DescribeLoss(sink_->events()));
  if (!read_error.ok()) return read_error.WithContext("capture stopped early");
  if (!finish.ok()) return finish;
  return report;
}

}  // namespace

Result<CaptureReport> RunCapture(const CaptureOptions& options) {
  Session session(options);
  return session.Run();
}

}  // namespace xtrace
