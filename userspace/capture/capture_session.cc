// The capture loop: ties the parts of a capture together — the probes (AttachPlanner), the
// processes (ProcessFollower, ProcessTable), the records (RecordRouter), the log (LogSink,
// CaptureOutput), correlation, and the report — from loading the probes to the closing
// summary. It names no probe source: they are reached through their interface.
#include "capture/capture_session.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include "base/monotonic_clock.h"
#include "base/thread_nice.h"
#include "capture/attach_planner.h"
#include "capture/bpf/capture_maps.h"
#include "capture/discovery/capture_scope.h"
#include "capture/discovery/process_table.h"
#include "capture/discovery/process_watcher.h"
#include "capture/discovery/proc_stat.h"
#include "capture/discovery/slurm_job.h"
#include "capture/holds/hold_guardian.h"
#include "capture/holds/process_holds.h"
#include "capture/output/capture_output.h"
#include "capture/output/drop_windows.h"
#include "capture/output/host_info.h"
#include "capture/output/log_sink.h"
#include "capture/process_follower.h"
#include "capture/record_router.h"
#include "capture/sources/own_level_zero_trial.h"
#include "capture/sources/pending_calls.h"
#include "capture/sources/probe_source.h"
#include "correlate/correlator.h"
#include "decode/record_decoder.h"
#include "model/drop_remedy.h"
#include "xtrace/hold.h"
#include "xtrace/records.h"

namespace xtrace {

volatile std::sig_atomic_t g_capture_stop = 0;

namespace {

// How often processes found by discovery are checked for being alive. Exit records are the
// usual way to learn of an exit; this catches the ones a full ring dropped.
constexpr uint64_t kDiscoveredSweepNs = 5'000'000'000ull;

// How often a Slurm job without a cgroup of its own is looked for again in /proc (its
// environment is the only mark of a step started during the capture): often enough that
// such a step is traced from early on, seldom enough that reading every process's
// environment costs the node nothing to speak of.
constexpr uint64_t kSlurmJobSweepNs = 1'000'000'000ull;

class Session {
 public:
  explicit Session(const CaptureOptions& options) : opt_(options) {}
  // Links before the programs they run (the planner), programs before the maps they use.
  // The guardian last: it continues whatever the lifecycle programs held until they went.
  ~Session() {
    follower_.reset();
    router_.reset();
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
  // Processes are held from now on (the capture is ready to release them promptly), or no more.
  Status SetHolding(bool on);
  // The source detaches read since the last look.
  void TakeDetached() { follower_->Detached(router_->TakeDetached()); }
  std::vector<ProcessCaptureStats> PerProcess(const RecordTally& tally,
                                              const std::map<uint32_t, uint64_t>& drops) const;
  // The summary that closes the current file.
  LogSummary FileSummary(uint64_t dropped_total, const std::map<uint32_t, uint64_t>& drops) const;
  // What the capture says once about what it could not trace: the sources' notes, and the
  // processes it left out as another user's (in the summary and the log's).
  std::vector<std::string> Notes() const;
  Status RotateIfDue(uint64_t now);
  void Publish();
  void ReportProgress(uint64_t elapsed_ns);
  void NoteDrops(const Counters& counters, uint64_t now) {
    if (auto window = drop_windows_.Look(counters, now)) sink_->OnEvent(*window);
  }

  const CaptureOptions& opt_;
  CaptureScope scope_;
  CollectorPidNamespace pidns_;
  uint32_t self_pid_ = 0;
  std::unique_ptr<CaptureMaps> maps_;
  std::unique_ptr<ProcessWatcher> watcher_;
  std::unique_ptr<ProcessHolds> holds_;  // null: processes are not held
  // Whether a program run as a job of a terminal's shell is held too (XT_HOLD_TERMINAL_JOBS).
  bool hold_terminal_jobs_ = false;
  xt_capture_config config_{};
  LinkReaper reaper_;
  std::unique_ptr<AttachPlanner> planner_;
  std::unique_ptr<CaptureOutput> output_;
  std::unique_ptr<EventTap> tap_;  // before the sink, which feeds it
  std::unique_ptr<LogSink> sink_;
  ProcessTable processes_;
  std::unique_ptr<Correlator> correlator_;
  std::unique_ptr<RecordRouter> router_;
  std::unique_ptr<ProcessFollower> follower_;
  // What the sources said once about what they cannot trace (SourceContext::note).
  std::vector<std::string> notes_;
  RecordCallback on_record_;
  uint64_t drops_reported_ = 0;
  uint64_t ring_drops_reported_ = 0;  // of them, in the programs' ITT rings
  DropWindows drop_windows_;  // RecordsDropped events: where on the timeline drops happened
  bool progress_shown_ = false;  // a status line is on the terminal, to be overwritten
};

// Once a second: drops as soon as they happen (whatever the output), and on a terminal a
// status line rewritten in place, so a long capture shows it is alive.
void Session::ReportProgress(uint64_t elapsed_ns) {
  if (opt_.quiet) return;
  const Counters counters = maps_->ReadCounters();
  const uint64_t dropped = counters[XT_CNT_DROPPED];
  if (dropped > drops_reported_) {
    if (progress_shown_) std::fputc('\n', stderr);
    progress_shown_ = false;
    Say(DropsLine(dropped - drops_reported_, dropped, {opt_.ring_bytes, opt_.itt_ring_bytes},
                  counters[XT_CNT_DROPPED_ITT_RINGS] - ring_drops_reported_));
    drops_reported_ = dropped;
    ring_drops_reported_ = counters[XT_CNT_DROPPED_ITT_RINGS];
  }
  if (!isatty(STDERR_FILENO)) return;
  std::fprintf(stderr, "\r%s",
               ProgressLine(elapsed_ns / 1e9, sink_->events(), output_->total_bytes(), dropped).c_str());
  progress_shown_ = true;
}

// Holds are taken only while something serves them: from before the first scan (which
// serves them between two processes, ScanPending) to the end of the loop. A process held while
// the capture is already finishing (writing the log) would wait for the bound.
Status Session::SetHolding(bool on) {
  if (!holds_) return Status::Ok();
  config_.hold = on ? XT_HOLD_EXEC | XT_HOLD_LIBRARY | router_->holds_served() |
                          (hold_terminal_jobs_ ? XT_HOLD_TERMINAL_JOBS : 0)
                    : 0;
  return maps_->SetScope(config_);
}

Status Session::Prepare() {
  self_pid_ = static_cast<uint32_t>(getpid());
  for (uint32_t pid : opt_.pids) {
    const std::optional<ProcStat> stat = ReadProcStat(pid);
    if (!stat || !stat->alive()) return Status::Error("no running process with pid " + std::to_string(pid));
    // It would never load a library: the capture would wait on it until stopped.
    if (stat->kernel_thread())
      return Status::Error("pid " + std::to_string(pid) + " (" + stat->comm +
                           ") is a kernel thread: it runs no user-space code, nothing of it can be traced");
  }
  auto scope = ResolveCaptureScope(opt_);
  if (!scope.ok()) return scope.status();
  scope_ = std::move(*scope);

  // xtrace's own Level Zero is tried in a child (own_level_zero_trial.h) while the programs
  // load; the Level Zero source takes its verdict at Begin.
  if (opt_.drm != DrmCapture::kOnly) StartOwnLevelZeroTrial();
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
    // A thread held to ask about an object waits for the capture up to the queries' own
    // bound: continued unasked, its launch would come out unnamed.
    auto holds = ProcessHolds::Start(maps_->held_fd(), opt_.hold_max_ns,
                                     opt_.query ? opt_.query_max_ns : 0);
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
      LoadProbeSources(SourceContext{*maps_, opt_, say, nullptr, note});
  if (!sources.ok()) return sources.status();
  // Every scope puts uprobes into the selected processes alone, unless a scope that discovers
  // processes asks for them per library file (see docs/design-notes.md, "Probes per
  // process"): a process outside the selection pays nothing, and one that starts during the
  // capture is held until its probes are in.
  // --system without a cgroup selects every process: per-process probes would spare nobody
  // and cost each process its own links (20 Level Zero processes took 9x as long to probe and
  // held 10x the links), so it probes per file unless asked otherwise, and says so.
  const bool everyone = scope_.all_processes && !scope_.cgroup && !opt_.probes_per_process;
  const bool per_file = scope_.discovers() && (opt_.probes_per_file || everyone) &&
                        // A capture of one user's processes puts nothing into anybody else's:
                        // no uprobe on a library file that another user's process traps on.
                        !scope_.owner;
  // Probed per file, a process is traced from its first call into a file already probed
  // without a hold, and every program on the machine may be held: a terminal's jobs, whose
  // shell would report each hold as the job stopping, are not (bpf/hold.bpf.h). Probed per
  // process, only the selected programs are held, and without the hold their first calls
  // would race the attach: they are held whatever runs them.
  hold_terminal_jobs_ = opt_.hold_terminal_jobs || !per_file;
  if (per_file && !opt_.probes_per_file) {
    notes_.push_back("--system probes each library file once for every process that maps it: "
                     "every process is in scope, so probes per process would spare nobody and "
                     "cost each its own links (--probes-per-process to have them)");
    Say(notes_.back());
  }
  const AttachPlanner::Settings settings{
      .watch_library_loads = scope_.discovers() || holds_ != nullptr,
      .per_process_links = !per_file,
      // Per process by default only: a file whose per-process probes the kernel refuses is
      // probed per file then, and the capture says so.
      .per_file_if_refused = !per_file && scope_.discovers() && !opt_.probes_per_process &&
                             !scope_.owner,
      .verbose = opt_.verbose};
  planner_ = std::make_unique<AttachPlanner>(std::move(*sources), watcher_.get(), reaper_,
                                             settings, say);
  router_ = std::make_unique<RecordRouter>(
      self_pid_, planner_->sources(),
      RecordRouter::Routes{
          .process = [this](const DecodedProcessRecord& r) { follower_->OnProcessRecord(r); },
          .unserved_hold =
              [this](const DecodedHold& h) { ContinueHeld(maps_->held_fd(), h.hdr.pid); },
          .counted =
              [this](uint32_t pid, std::string_view family) {
                sink_->CountRecord(pid, family);
                processes_.NoteTraced(pid);
              },
          .decoded = [this](const DecodedRecord& r) { correlator_->OnRecord(r); }});
  on_record_ = [this](std::span<const std::byte> d) { router_->Route(d); };
  maps_->SetDecodedRoute([this](const DecodedRecord& r) { router_->RouteSideRecord(r); });

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
  correlator_->drm().set_link_host_calls(router_->records_api_calls());
  // Every hold released is logged: the report leaves it out of the program's time.
  if (holds_) holds_->set_released([this](const XtraceHold& hold) { correlator_->NoteHold(hold); });
  follower_ = std::make_unique<ProcessFollower>(ProcessFollower::Parts{
      opt_, scope_, self_pid_, *maps_, *planner_, processes_, *correlator_, holds_.get(),
      on_record_, [this](const std::string& line) { Say(line); }});
  for (uint32_t pid : opt_.pids) follower_->Track(pid, true);
  // Found, not given: a job runs processes that never use the GPU (its shell, mpirun), and
  // they need no word of waiting for one.
  for (uint32_t pid : scope_.job_pids) follower_->Track(pid, false);
  if (!scope_.job_pids_without_cluster_name.empty()) {
    std::string pids;
    for (uint32_t pid : scope_.job_pids_without_cluster_name)
      pids += (pids.empty() ? "" : ", ") + std::to_string(pid);
    Say(SlurmJobWithoutClusterNameLine(scope_.slurm, pids));
  }
  if (opt_.start_paused)
    for (uint32_t pid : opt_.pids) correlator_->NoteStartPaused(pid, MonotonicNs());
  // Before anything is attached: a source may need to know what to probe (the Level Zero
  // source asks its own Level Zero where drivers keep the functions they hand out), and
  // before holding goes on, which holds it serves.
  router_->Begin(SourceStart{*correlator_, output_->writer().strings(), holds_.get()});

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

std::vector<std::string> Session::Notes() const {
  std::vector<std::string> notes = notes_;
  if (planner_)
    for (const std::string& n : planner_->notes()) notes.push_back(n);
  if (scope_.owner && follower_ && follower_->left_out().size())
    notes.push_back(follower_->left_out().Note(*scope_.owner));
  return notes;
}

std::vector<ProcessCaptureStats> Session::PerProcess(const RecordTally& tally,
                                                     const std::map<uint32_t, uint64_t>& drops) const {
  return PerProcessStats(tally, drops, [this](uint32_t pid) { return processes_.NameOf(pid); });
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
  summary.notes = Notes();
  return summary;
}

Status Session::RotateIfDue(uint64_t now) {
  if (!output_->RotationDue(now)) return Status::Ok();
  const uint64_t dropped = maps_->ReadCounters()[XT_CNT_DROPPED];
  const auto drops = maps_->ReadDropsByPid();
  Status st = output_->Rotate(FileSummary(dropped, drops), MakeLogHeader(opt_.xtrace_command_line), now);
  sink_->BeginFile(dropped, drops, correlator_->identities().Written());
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
  // With --system and no cgroup (probes per file), the host's own copy of each probed library
  // is attached too, for every process that will map it, so most processes that start during
  // the capture map a file already probed. (With a filter, probing the host's copy would make
  // processes outside the scope pay for probes that record nothing; per process, each process
  // is held until its own probes are in.)
  planner_->PinHostLibraries(self_pid_, !planner_->per_process_links() && scope_.all_processes &&
                                           !scope_.cgroup && pidns_.level == 0);
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
  follower_->DiscoverRunning();
  follower_->NoteFoundRunning();
  // A command, and the children it starts, are held from its start: the libraries it loads
  // right after its exec (the Level Zero driver, at zeInit) are probed before it calls them,
  // as for any later load.
  if (!opt_.command.empty())
    if (Status st = follower_->LaunchCommand(); !st.ok()) return st;
  // From here on (the command, started above, keeps xtrace's own nice value) the capture loop
  // runs at the capture's nice value, ahead of the programs on a shared core; the ITT drain
  // thread sets its own. Put back when the capture ends (a daemon's thread runs others).
  ThreadNice nice(opt_.nice);
  if (!nice.error().empty() && opt_.verbose)
    Say("the capture's threads keep their priority: " + nice.error());
  // "attached to pid N" tells whoever waits for it that nothing is missed from then on, which
  // holds because holding is on: a process attached before its zeInit is held there until the
  // tables it takes are probed (the ITT source says "attached" only once the domains are on).
  follower_->ScanPending();
  if (scope_.discovers()) Say("tracing " + scope_.Describe());
  for (const auto& [pid, t] : processes_.processes()) {
    if (t.given && !t.ever_attached && !t.gone)
      Say("pid " + std::to_string(pid) + " has not loaded " + planner_->WaitsFor() +
          " yet; waiting for it to (Ctrl-C to stop)");
  }

  const uint64_t start = MonotonicNs();
  const uint64_t deadline = opt_.duration_ns ? start + *opt_.duration_ns : UINT64_MAX;
  uint64_t last_flush = start, last_sweep = start, last_job_sweep = start;
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
    TakeDetached();
    follower_->CheckAlive(sweep);
    if (now - last_job_sweep >= kSlurmJobSweepNs) {
      follower_->FindJobProcessesStartedLater();
      last_job_sweep = now;
    }
    follower_->ScanPending();
    follower_->ReleaseHolds();
    Publish();
    if (scope_.ends_with_targets() && follower_->FollowedAllGone()) break;
  }

  if (progress_shown_) std::fputc('\n', stderr);
  (void)SetHolding(false);
  // Everything the probes wrote before we stopped is still in the ring; then the sources have
  // their last word (a last clock reading covers the newest kernel timestamps).
  (void)maps_->DrainLast(on_record_);
  follower_->ReleaseHolds();  // nothing more is probed: they go on as they are
  router_->Finish(MonotonicNs());
  TakeDetached();  // a detach read in these last records is reported too
  const Counters counters = maps_->ReadCounters();
  const auto drops = maps_->ReadDropsByPid();
  const uint64_t end = MonotonicNs();
  NoteDrops(counters, end);
  // Calls still running now return after the capture: their entries are all there is.
  for (const auto& [pid, t] : processes_.processes()) {
    if (t.gone || t.detached) continue;
    for (const Result<DecodedRecord>& call : PendingCalls(maps_->thread_state_fd(), pid, end))
      router_->RouteDecoded(call);
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
  report.malformed = router_->malformed();
  report.file_bytes = output_->total_bytes();
  report.files_written = static_cast<uint32_t>(output_->finished().size());
  for (const auto& [pid, t] : processes_.processes())
    report.processes_attached += t.ever_attached || t.had_records || correlator_->SawProcess(pid) ? 1 : 0;
  report.per_process = PerProcess(sink_->total_tally(), drops);
  report.command_exit_status = follower_->child_status();

  SummaryFacts facts;
  facts.seconds = (end - start) / 1e9;
  facts.where = output_->finished().size() > 1
                    ? std::to_string(output_->finished().size()) + " files in " + opt_.output_dir
                    : output_->current_path();
  facts.correlator = cs;
  facts.timeline = correlator_->ze().timeline_stats();
  facts.ring_bytes = {opt_.ring_bytes, opt_.itt_ring_bytes};
  facts.dropped_in_itt_rings = counters[XT_CNT_DROPPED_ITT_RINGS];
  facts.first_malformed = router_->first_malformed();
  if (opt_.verbose) {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    facts.peak_rss_mib = usage.ru_maxrss / 1024;
  }
  SourceSummary sources = router_->Summary(SourceSummaryInputs{*correlator_, counters});
  facts.source_sentences = std::move(sources.sentences);
  facts.source_lines = std::move(sources.lines);
  if (holds_) facts.holds_text = holds_->Summary(counters);
  facts.source_hold_sentences = std::move(sources.hold_sentences);
  if (tap_) facts.kernels_text = tap_->Summary();
  facts.dropped_by_source = DroppedBySource(drop_windows_.total());
  facts.notes = Notes();
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
  CaptureOptions resolved = options;
  resolved.nice = CaptureThreadNice(options.nice, ThreadNice(std::nullopt).previous());
  Session session(resolved);
  return session.Run();
}

}  // namespace xtrace
