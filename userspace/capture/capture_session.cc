// The capture loop: targets and discovery, probe attachment, ring draining, periodic log
// flushes and rotation, the per-process summary.
#include "capture/capture_session.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "base/read_file.h"
#include "capture/capture_maps.h"
#include "capture/capture_output.h"
#include "capture/capture_scope.h"
#include "capture/device_clock_sampler.h"
#include "capture/drm_summary.h"
#include "capture/host_info.h"
#include "capture/itt_summary.h"
#include "capture/library_attachments.h"
#include "capture/library_resolver.h"
#include "capture/probe_source.h"
#include "capture/proc_maps.h"
#include "capture/process_watcher.h"
#include "capture/record_families.h"
#include "correlate/correlator.h"
#include "correlate/process_inspector.h"
#include "decode/process_record_decoder.h"
#include "decode/record_decoder.h"

namespace xtrace {

volatile std::sig_atomic_t g_capture_stop = 0;

namespace {

// How often the device clocks are read against the host's.
constexpr uint64_t kClockReadingIntervalNs = 1'000'000'000;

// How often processes found by discovery are checked for being alive. Exit records are the
// usual way to learn of an exit; this catches the ones a full ring dropped.
constexpr uint64_t kDiscoveredSweepNs = 5'000'000'000ull;

uint64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

std::string HumanBytes(uint64_t bytes) {
  char buf[32];
  if (bytes < 1024) std::snprintf(buf, sizeof(buf), "%llu B", (unsigned long long)bytes);
  else if (bytes < (1u << 20)) std::snprintf(buf, sizeof(buf), "%.1f KiB", bytes / 1024.0);
  else std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / 1048576.0);
  return buf;
}

std::string_view BaseName(std::string_view path) { return path.substr(path.rfind('/') + 1); }

// Field 22 of /proc/PID/stat (start time in clock ticks): a pid reused by a new process has
// another one. 0 if the process is gone.
uint64_t ProcessStartTicks(uint32_t pid) {
  const std::string stat = ReadWholeFile("/proc/" + std::to_string(pid) + "/stat").value_or("");
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && (fields >> field); ++i) {
    if (i == 22) return std::strtoull(field.c_str(), nullptr, 10);
  }
  return 0;
}

uint32_t ParentPid(uint32_t pid) {
  const std::string stat = ReadWholeFile("/proc/" + std::to_string(pid) + "/stat").value_or("");
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string state;
  uint32_t ppid = 0;
  fields >> state >> ppid;
  return ppid;
}

std::vector<uint32_t> ListProcesses() {
  std::vector<uint32_t> pids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    pids.push_back(static_cast<uint32_t>(std::strtoul(name.c_str(), nullptr, 10)));
  }
  return pids;
}

// Counts of records per process and source, over one file or the whole capture.
struct Tally {
  std::map<uint32_t, std::map<std::string, uint64_t>> records;  // pid -> source -> records
  void Add(uint32_t pid, std::string_view family) { ++records[pid][std::string(family)]; }
};

// Adapts the correlator's output to the log, and remembers what identifies each process and
// thread so that every rotated file can start with them (each file reads on its own).
class LogSink final : public EventSink {
 public:
  void set_writer(LogWriter* writer) { writer_ = writer; }
  void OnEvent(const Event& event) override {
    if (const auto* p = std::get_if<ProcessInfo>(&event)) {
      processes_[p->pid] = *p;
      comms_[p->pid] = std::string(writer_->strings().Get(p->comm));
    }
    if (const auto* t = std::get_if<ThreadInfo>(&event))
      threads_[(uint64_t{t->pid} << 32) | t->tid] = *t;
    writer_->Append(event);
    ++events_;
    ++file_events_;
  }
  // Writes the identity of every process still worth naming into the (new) current file.
  void ReplayIdentities() {
    file_events_ = 0;
    for (const auto& [pid, info] : processes_) writer_->Append(info);
    for (const auto& [key, info] : threads_) writer_->Append(info);
    file_events_ = processes_.size() + threads_.size();
  }
  // The process exited: it is named in the files up to the next rotation, not after.
  void ProcessGone(uint32_t pid) { gone_.insert(pid); }
  void ForgetGone() {
    for (uint32_t pid : gone_) {
      processes_.erase(pid);
      std::erase_if(threads_, [pid](const auto& kv) { return kv.second.pid == pid; });
    }
    gone_.clear();
  }
  // The name of a process that had events, for the per-process summary (kept after the
  // process is gone: the summary covers the whole capture).
  std::string CommOf(uint32_t pid) const {
    auto it = comms_.find(pid);
    return it == comms_.end() ? std::string() : it->second;
  }
  uint64_t events() const { return events_; }
  uint64_t file_events() const { return file_events_; }

 private:
  LogWriter* writer_ = nullptr;
  uint64_t events_ = 0;
  uint64_t file_events_ = 0;
  std::map<uint32_t, ProcessInfo> processes_;
  std::map<uint64_t, ThreadInfo> threads_;
  std::set<uint32_t> gone_;
  std::map<uint32_t, std::string> comms_;
};

// A process the capture follows.
struct TrackedProcess {
  uint32_t pid = 0;
  bool given = false;     // --pid or the command
  bool is_child = false;  // launched by `record`: reaped by us
  bool held = false;      // launched but not yet exec'd: /proc still shows xtrace
  bool gone = false;
  bool detached = false;  // called __itt_detach: its probes are released, it runs on
  bool ever_attached = false;
  bool rescan = true;     // read its memory map at the next opportunity
  uint64_t start_ticks = 0;
  std::optional<ProcessDetails> seen_at_start;  // from its exec/fork record, for when it is gone
  uint64_t seen_cgroup_id = 0;
};

// Answers the correlator's questions about a process from /proc while it lives, and from what
// its exec or fork record said once it is gone (short-lived processes often are by then).
class SessionInspector final : public ProcessInspector {
 public:
  explicit SessionInspector(const std::map<uint32_t, TrackedProcess>& processes)
      : processes_(processes) {}
  std::optional<ProcessDetails> Process(uint32_t pid) override {
    if (auto live = procfs_.Process(pid)) return live;
    auto it = processes_.find(pid);
    if (it != processes_.end() && it->second.seen_at_start) return it->second.seen_at_start;
    return std::nullopt;
  }
  FdDevice Fd(uint32_t pid, uint32_t fd, const FdFileAtCall& at_call) override {
    return procfs_.Fd(pid, fd, at_call);
  }

 private:
  const std::map<uint32_t, TrackedProcess>& processes_;
  ProcfsInspector procfs_;
};

// A command started held at a gate: it execs only once the probes are in place.
struct LaunchedCommand {
  pid_t pid = -1;
  int gate_fd = -1;      // write end; closing it lets the child exec
  int exec_err_fd = -1;  // read end; the child writes errno here if exec fails
};

Result<LaunchedCommand> SpawnHeld(const std::vector<std::string>& command) {
  int gate[2], err_pipe[2];
  if (pipe2(gate, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0)
    return Status::Error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) return Status::Error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    close(gate[1]);
    close(err_pipe[0]);
    char c;
    while (read(gate[0], &c, 1) < 0 && errno == EINTR) {
    }
    std::vector<char*> argv;
    for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    const int err = errno;
    (void)!write(err_pipe[1], &err, sizeof(err));
    _exit(127);
  }
  close(gate[0]);
  close(err_pipe[1]);
  return LaunchedCommand{pid, gate[1], err_pipe[0]};
}

// Releases the gate and reports whether exec succeeded (EOF on the error pipe means it did).
Status ReleaseHeld(LaunchedCommand& cmd, const std::string& name) {
  close(cmd.gate_fd);
  cmd.gate_fd = -1;
  int err = 0;
  ssize_t n;
  while ((n = read(cmd.exec_err_fd, &err, sizeof(err))) < 0 && errno == EINTR) {
  }
  close(cmd.exec_err_fd);
  cmd.exec_err_fd = -1;
  if (n == sizeof(err)) {
    waitpid(cmd.pid, nullptr, 0);
    return Status::Error("cannot run '" + name + "': " + std::strerror(err));
  }
  return Status::Ok();
}

class Session {
 public:
  explicit Session(const CaptureOptions& options)
      : opt_(options), attachments_(reaper_), inspector_(processes_) {}
  ~Session() {
    // Links before the programs they run, programs before the maps they use.
    attachments_.Clear();
    reaper_.WaitIdle();
    sources_.clear();
    watcher_.reset();
  }

  Result<CaptureReport> Run();

 private:
  void Say(const std::string& line) const {
    if (!opt_.quiet) std::fprintf(stderr, "xtrace: %s\n", line.c_str());
  }
  bool StopRequested() const {
    return g_capture_stop || (opt_.stop_requested && opt_.stop_requested->load());
  }
  // The pseudo-owner of the dynamic linker hooks in attachments_ (sources are 0..n-1).
  size_t linker_owner() const { return sources_.size(); }
  // Given processes alone: their own uprobes. A scope that discovers processes: uprobes per
  // library file unless asked otherwise (see docs/design-notes.md, "Probes per library file").
  bool per_process_links() const { return !scope_.discovers() || opt_.probes_per_process; }

  Status Prepare();
  Status LaunchCommand();
  void DiscoverRunning();
  void PinHostLibraries();
  TrackedProcess& Track(uint32_t pid, bool given);
  // The process is gone (its end seen at `ended_ns`): its probes go, its open spans end.
  void Forget(TrackedProcess& t, uint64_t ended_ns);
  void DetachTargets();
  void ScanProcess(TrackedProcess& t, bool again_if_hooked = true);
  void ScanPending();
  void CheckAlive(bool discovered_too);
  // `library`: the file whose probes now cover it, said in the message; empty when a source
  // that attaches by itself (and says so itself) reported the process.
  void MarkAttached(TrackedProcess& t, const std::string& library);
  // Whether `source` having a probe in a process counts as "attached" for messages and the
  // exit status: sources that need a library do; one that needs nothing (DRM) does only
  // when it is all there is (--drm-only), or every target would be "attached" at once.
  bool AnnouncesAttach(const ProbeSource& source) const;
  bool FollowedAllGone() const;
  std::string WaitsFor() const;
  void OnRecord(std::span<const std::byte> data);
  void OnProcessRecord(std::span<const std::byte> data);
  LogSummary MakeSummary(const Tally& tally, const std::map<uint32_t, uint64_t>& drops,
                         uint64_t events, uint64_t dropped) const;
  std::vector<ProcessCaptureStats> PerProcess(const Tally& tally,
                                              const std::map<uint32_t, uint64_t>& drops) const;
  Status RotateIfDue(uint64_t now);
  void Publish();
  void ReportProgress(uint64_t elapsed_ns);
  void OpenDeviceClocks();
  void ReadDeviceClocks();
  std::string Summarize(const CaptureReport& report, double seconds, uint64_t paused_hits) const;

  const CaptureOptions& opt_;
  CaptureScope scope_;
  CollectorPidNamespace pidns_;
  uint32_t self_pid_ = 0;
  std::unique_ptr<CaptureMaps> maps_;
  std::unique_ptr<ProcessWatcher> watcher_;
  bool lifecycle_attached_ = false;
  std::vector<std::unique_ptr<ProbeSource>> sources_;
  LinkReaper reaper_;
  LibraryAttachments attachments_;
  std::unique_ptr<CaptureOutput> output_;
  LogSink sink_;
  std::unique_ptr<Correlator> correlator_;
  std::unique_ptr<DeviceClockSampler> clocks_;
  std::map<uint32_t, TrackedProcess> processes_;
  SessionInspector inspector_;
  std::set<uint32_t> ever_traced_;
  Tally file_tally_, total_tally_;
  std::map<uint32_t, uint64_t> drops_at_rotation_;
  uint64_t dropped_at_rotation_ = 0;
  uint64_t malformed_ = 0;
  std::string first_malformed_;
  std::optional<int> child_status_;
  std::vector<uint32_t> detach_requests_;  // pids whose __itt_detach was just seen
  RecordCallback on_record_;
  Counters counters_{};
  uint64_t drops_reported_ = 0;
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
    Say(std::to_string(dropped - drops_reported_) + " events dropped in the last second (" +
        std::to_string(dropped) + " in all); raise --buffer-size (now " +
        HumanBytes(opt_.ring_bytes) + ")");
    drops_reported_ = dropped;
  }
  if (!isatty(STDERR_FILENO)) return;
  std::fprintf(stderr, "\rxtrace: %.0f s, %llu events, %s written, %llu dropped ",
               elapsed_ns / 1e9, static_cast<unsigned long long>(sink_.events()),
               HumanBytes(output_->total_bytes()).c_str(),
               static_cast<unsigned long long>(dropped));
  progress_shown_ = true;
}

TrackedProcess& Session::Track(uint32_t pid, bool given) {
  auto [it, added] = processes_.try_emplace(pid);
  TrackedProcess& t = it->second;
  if (!added && !t.gone) {
    t.given = t.given || given;
    return t;
  }
  if (!added) {  // a pid seen before, now another process
    attachments_.Release(pid, MonotonicNs());
    t = TrackedProcess();
  }
  t.pid = pid;
  t.given = given;
  t.start_ticks = ProcessStartTicks(pid);
  if (given && opt_.start_paused) {
    (void)maps_->SetCollectionState(pid, XT_COLLECT_PAUSED);
    Say("pid " + std::to_string(pid) + " starts paused: nothing is recorded until it calls __itt_resume");
  }
  // BPF selects children and --comm processes by itself; one found in /proc needs telling.
  if (!scope_.all_processes) (void)maps_->TracePid(pid);
  return t;
}

void Session::Forget(TrackedProcess& t, uint64_t ended_ns) {
  correlator_->ProcessEnded(t.pid, ended_ns);
  attachments_.Release(t.pid, MonotonicNs());
  for (auto& source : sources_) source->OnProcessExit(t.pid);
  if (!scope_.all_processes) maps_->ForgetPid(t.pid);
  sink_.ProcessGone(t.pid);
  t.gone = true;
  t.rescan = false;
  // Processes found by discovery are forgotten entirely; given ones stay for the summary.
  if (!t.given) processes_.erase(t.pid);
}

// A process that called __itt_detach is done: BPF already records nothing more of it (its
// state stays detached); its probes are released and it is no longer scanned.
void Session::DetachTargets() {
  for (uint32_t pid : detach_requests_) {
    auto it = processes_.find(pid);
    if (it == processes_.end() || it->second.detached) continue;
    it->second.detached = true;
    it->second.rescan = false;
    // Its detach can be read from the ring only as it exits: it still detached, and says
    // so, but its probes are already released.
    if (!it->second.gone) {
      attachments_.Release(pid, MonotonicNs());
      for (auto& source : sources_) source->OnProcessExit(pid);
    }
    Say("pid " + std::to_string(pid) + " detached itself (__itt_detach); its capture ended");
  }
  detach_requests_.clear();
}

bool Session::AnnouncesAttach(const ProbeSource& source) const {
  if (!source.waits_for().empty()) return true;
  for (const auto& s : sources_)
    if (!s->waits_for().empty()) return false;
  return true;
}

void Session::MarkAttached(TrackedProcess& t, const std::string& library) {
  if (t.ever_attached) return;
  t.ever_attached = true;
  ever_traced_.insert(t.pid);
  if (!t.held) correlator_->NoteProcess(t.pid);
  if (!library.empty()) Say("attached to pid " + std::to_string(t.pid) + " (" + library + ")");
}

void Session::ScanProcess(TrackedProcess& t, bool again_if_hooked) {
  t.rescan = false;
  auto files = FindMappedLibraries(t.pid, "");
  if (!files.ok()) return;  // gone: its exit record or the liveness check forgets it
  std::string via;
  bool hooked_linker = false;
  for (MappedLibrary f : *files) {
    const std::string_view base = BaseName(f.path);
    const bool linker = watcher_ && scope_.discovers() && ProcessWatcher::IsDynamicLinker(base);
    bool probed = linker;
    for (const auto& source : sources_) probed = probed || source->ProbesLibrary(base);
    if (!probed) continue;
    // Hold the file while probes are attached to it: the process may exit meanwhile, taking
    // /proc/PID/root with it. Files are keyed by what the path opens, as uprobes are and as
    // libraries resolved for `record` are (on overlay filesystems the maps' device differs).
    UniqueFd held(open(f.host_path.c_str(), O_PATH | O_CLOEXEC));
    struct stat st {};
    if (!held.valid() || fstat(held.get(), &st) != 0) continue;  // gone already
    f.inode = st.st_ino;
    f.dev_major = major(st.st_dev);
    f.dev_minor = minor(st.st_dev);
    f.host_path = "/proc/self/fd/" + std::to_string(held.get());
    if (linker) {
      std::string error;
      const auto outcome = attachments_.Use(
          linker_owner(), f, t.pid, false,
          [this](const MappedLibrary& lib, int pid) { return watcher_->HookDynamicLinker(lib, pid); },
          &error);
      if (outcome == LibraryAttachments::Outcome::kAttached) hooked_linker = true;
      if (outcome == LibraryAttachments::Outcome::kFailed)
        Say("cannot watch " + f.path + " for library loads (" + error +
            "); processes using it are seen only as they start");
    }
    for (size_t i = 0; i < sources_.size(); ++i) {
      if (!sources_[i]->ProbesLibrary(base)) continue;
      std::string error;
      ProbeSource* source = sources_[i].get();
      const auto outcome = attachments_.Use(
          i, f, t.pid, per_process_links(),
          [source](const MappedLibrary& lib, int pid) { return source->AttachToLibrary(lib, pid); },
          &error);
      if (outcome == LibraryAttachments::Outcome::kFailed)
        Say("pid " + std::to_string(t.pid) + ": " + error);
      if (outcome == LibraryAttachments::Outcome::kAttached && !per_process_links() && opt_.verbose)
        Say("probing " + f.path + " for every process that maps it");
      if (via.empty() && attachments_.HasLinks(i, t.pid)) via = f.path;
    }
  }
  bool attached = !via.empty();
  for (auto& source : sources_) {
    // A source that needs no library (DRM) already covers every process in scope with its
    // tracepoints; it hears of given targets only, not of every process discovery finds.
    if (source->waits_for().empty() && !t.given) continue;
    if (source->OnProcessMaps(t.pid, *files) && AnnouncesAttach(*source)) attached = true;
  }
  if (attached) MarkAttached(t, via);
  // A library loaded between this scan and the new hook would go unseen: look once more.
  if (hooked_linker && again_if_hooked) ScanProcess(t, false);
}

void Session::ScanPending() {
  std::vector<uint32_t> pending;
  for (auto& [pid, t] : processes_)
    if (!t.gone && !t.detached && (t.rescan || (t.given && per_process_links())))
      pending.push_back(pid);
  for (uint32_t pid : pending) {
    auto it = processes_.find(pid);
    if (it != processes_.end()) ScanProcess(it->second);
  }
}

void Session::CheckAlive(bool discovered_too) {
  std::vector<uint32_t> gone;
  for (auto& [pid, t] : processes_) {
    if (t.gone || t.held || (!t.given && !discovered_too)) continue;
    if (t.is_child) {
      int status = 0;
      if (waitpid(static_cast<pid_t>(pid), &status, WNOHANG) == static_cast<pid_t>(pid)) {
        child_status_ = status;
        gone.push_back(pid);
      }
      continue;
    }
    if (!ProcessAlive(pid) || (t.start_ticks && ProcessStartTicks(pid) != t.start_ticks))
      gone.push_back(pid);
  }
  if (gone.empty()) return;
  // Their last records are in the ring already: take them before closing what they left open.
  (void)maps_->Drain(on_record_);
  const uint64_t now = MonotonicNs();
  for (uint32_t pid : gone) {
    auto it = processes_.find(pid);
    if (it != processes_.end() && !it->second.gone) Forget(it->second, now);
  }
}

bool Session::FollowedAllGone() const {
  for (const auto& [pid, t] : processes_)
    if (!t.gone && !t.detached) return false;
  return true;
}

std::string Session::WaitsFor() const {
  std::string what;
  for (const auto& source : sources_) {
    if (source->waits_for().empty()) continue;
    if (!what.empty()) what += " or ";
    what += source->waits_for();
  }
  return what;
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
        if (pid == self_pid_ || pid == 0) return;
        if constexpr (std::is_same_v<T, DecodedProcessExit>) {
          auto it = processes_.find(pid);
          if (it == processes_.end() || it->second.gone) return;
          if (it->second.is_child) return;  // reaped (and its status kept) by CheckAlive
          // Its earlier records came before this one in the ring: nothing of it is pending.
          Forget(it->second, r.hdr.start_ns);
        } else {
          if constexpr (std::is_same_v<T, DecodedProcessStart>) {
            // A fork record for a pid still tracked is either about the process already
            // tracked (found in /proc while its record waited in the ring) or a new process
            // whose predecessor's exit was missed: their start times tell them apart.
            auto old = processes_.find(pid);
            if (r.hdr.type == XT_REC_PROCESS_FORK && old != processes_.end() && !old->second.gone &&
                !old->second.held && ProcessStartTicks(pid) != old->second.start_ticks)
              Forget(old->second, r.hdr.start_ns);
            TrackedProcess& t = Track(pid, false);
            ProcessDetails seen;
            seen.comm = std::string(r.comm);
            seen.command_line = r.command_line;
            seen.ns_pid = r.ns_pid;
            if (scope_.cgroup && r.cgroup_id == scope_.cgroup->id) seen.cgroup_path = scope_.cgroup->path;
            t.seen_at_start = std::move(seen);
            t.seen_cgroup_id = r.cgroup_id;
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
    // xtrace reads the device clocks through Level Zero itself; a system-wide capture's
    // probes see those calls too, and they are not the workload's.
    if (hdr.pid == self_pid_) return;
    const std::string_view family = RecordFamily(hdr.type);
    if (!family.empty()) {
      file_tally_.Add(hdr.pid, family);
      total_tally_.Add(hdr.pid, family);
      ever_traced_.insert(hdr.pid);
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

void Session::OpenDeviceClocks() {
  if (opt_.drm == DrmCapture::kOnly) return;  // no Level Zero calls to time: nothing to map
  auto sampler = DeviceClockSampler::Open();
  if (!sampler.ok()) {
    Say("no device clock readings (" + sampler.status().message() +
        "): device times are estimated unless the traced processes read their clocks");
    return;
  }
  clocks_ = std::move(*sampler);
  std::vector<DeviceInfo> devices;
  for (const SampledDevice& d : clocks_->devices()) {
    devices.push_back(DeviceInfo{static_cast<uint32_t>(devices.size()),
                                 output_->writer().strings().Intern(d.name), d.timer_hz,
                                 d.kernel_timestamp_bits});
  }
  correlator_->ze().OnDevices(devices);
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
  if (Status st = maps_->SetScope(scope_.ToConfig(pidns_)); !st.ok()) return st;
  UniqueFd cgroup_fd;
  if (scope_.cgroup) {
    cgroup_fd.Reset(open(scope_.cgroup->dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!cgroup_fd.valid())
      return Status::Error(scope_.cgroup->dir + ": cannot open: " + std::strerror(errno));
    // The map holds its own reference to the cgroup: the fd is not needed afterwards.
    if (Status st = maps_->SetScopeCgroup(cgroup_fd.get()); !st.ok()) return st;
  }

  auto sources =
      LoadProbeSources(SourceContext{*maps_, opt_, [this](const std::string& l) { Say(l); }});
  if (!sources.ok()) return sources.status();
  sources_ = std::move(*sources);

  for (uint32_t pid : opt_.pids) Track(pid, true);

  const uint64_t now = MonotonicNs();
  LogHeader header = MakeLogHeader(opt_.xtrace_command_line);
  auto output = opt_.output_dir.empty()
                    ? CaptureOutput::ToFile(opt_.output_path, header)
                    : CaptureOutput::ToDirectory(opt_.output_dir, opt_.rotation, header, now);
  if (!output.ok()) return output.status();
  output_ = std::move(*output);
  sink_.set_writer(&output_->writer());
  correlator_ = std::make_unique<Correlator>(output_->writer().strings(), sink_, inspector_);
  // With nothing recording host API calls there is no call to attribute an ioctl to.
  correlator_->drm().set_link_host_calls(opt_.drm != DrmCapture::kOnly);
  on_record_ = [this](std::span<const std::byte> d) { OnRecord(d); };
  if (opt_.start_paused)
    for (uint32_t pid : opt_.pids) correlator_->NoteStartPaused(pid, MonotonicNs());
  OpenDeviceClocks();

  if (watcher_) {
    if (Status st = watcher_->AttachLifecycle(); !st.ok()) {
      if (scope_.discovers())
        Say(st.message() + "; only processes running now are traced");
    } else {
      lifecycle_attached_ = true;
    }
  }
  return Status::Ok();
}

// Probes attached for the whole capture. When it discovers processes, the dynamic linker
// xtrace itself uses (the host's, most processes' too) is hooked at once, so that library
// loads of processes that start later are reported from their first one. With --system and no
// cgroup, the host's own copy of each probed library is attached too, for every process that
// will map it, so a process that starts during the capture is traced from its first call
// instead of from the moment its libraries were found. (With a filter, probing the host's
// copy would make processes outside the scope pay for probes that record nothing.)
void Session::PinHostLibraries() {
  if (watcher_ && scope_.discovers()) {
    auto own = FindMappedLibraries(self_pid_, "");
    for (const MappedLibrary& f : own.ok() ? *own : std::vector<MappedLibrary>{}) {
      if (!ProcessWatcher::IsDynamicLinker(BaseName(f.path))) continue;
      auto lib = LibraryAtPath(f.path);
      if (!lib) continue;
      std::string error;
      attachments_.Use(
          linker_owner(), *lib, LibraryAttachments::kCapturePid, false,
          [this](const MappedLibrary& l, int pid) { return watcher_->HookDynamicLinker(l, pid); },
          &error);
    }
  }
  if (!scope_.all_processes || scope_.cgroup || pidns_.level > 0) return;
  for (size_t i = 0; i < sources_.size(); ++i) {
    const std::string_view soname = sources_[i]->exec_soname();
    if (soname.empty()) continue;
    auto lib = ResolveLibraryForExec(std::string(soname));
    if (!lib) continue;
    std::string error;
    ProbeSource* source = sources_[i].get();
    attachments_.Use(
        i, *lib, LibraryAttachments::kCapturePid, false,
        [source](const MappedLibrary& l, int pid) { return source->AttachToLibrary(l, pid); },
        &error);
  }
}

void Session::DiscoverRunning() {
  if (!scope_.discovers()) return;
  // Children of the given processes that are already running when the capture starts.
  std::set<uint32_t> followed;
  for (const auto& [pid, t] : processes_) followed.insert(pid);
  const std::vector<uint32_t> all = ListProcesses();
  std::map<uint32_t, uint32_t> parent;
  if (scope_.follow_children)
    for (uint32_t pid : all) parent[pid] = ParentPid(pid);
  for (uint32_t pid : all) {
    if (pid == self_pid_ || processes_.count(pid)) continue;
    bool selected = false;
    if (scope_.follow_children) {
      for (uint32_t p = parent[pid], hops = 0; p > 1 && hops < 64; p = parent[p], ++hops)
        if (followed.count(p)) selected = true;
    }
    if (!selected && (scope_.all_processes || !scope_.comm.empty())) {
      auto details = ProcfsInspector().Process(pid);
      if (!details) continue;
      selected = scope_.SelectsRunning(details->comm, details->cgroup_path);
    }
    if (selected && scope_.InCgroup(CgroupPathOfProcess(pid))) Track(pid, false);
  }
}

Status Session::LaunchCommand() {
  auto spawned = SpawnHeld(opt_.command);
  if (!spawned.ok()) return spawned.status();
  LaunchedCommand launched = *spawned;
  const uint32_t pid = static_cast<uint32_t>(launched.pid);
  TrackedProcess& t = Track(pid, true);
  t.is_child = true;
  t.held = true;
  if (opt_.start_paused) correlator_->NoteStartPaused(pid, MonotonicNs());
  if (Status st = maps_->TracePid(pid); !st.ok()) return st;
  for (size_t i = 0; i < sources_.size(); ++i) {
    const std::string_view soname = sources_[i]->exec_soname();
    if (soname.empty()) continue;
    auto lib = ResolveLibraryForExec(std::string(soname));
    if (!lib) {
      Say("no " + std::string(soname) +
          " found on the library path; watching the command for one it loads itself");
      continue;
    }
    std::string error;
    ProbeSource* source = sources_[i].get();
    const auto outcome = attachments_.Use(
        i, *lib, pid, per_process_links(),
        [source](const MappedLibrary& l, int p) { return source->AttachToLibrary(l, p); }, &error);
    if (outcome == LibraryAttachments::Outcome::kFailed) Say("pid " + std::to_string(pid) + ": " + error);
    if (attachments_.HasLinks(i, pid)) MarkAttached(t, lib->path);
  }
  for (auto& source : sources_)
    if (source->BeforeExec(pid) && AnnouncesAttach(*source)) MarkAttached(t, "");
  if (Status st = ReleaseHeld(launched, opt_.command[0]); !st.ok()) return st;
  t.held = false;
  t.rescan = true;
  if (t.ever_attached) correlator_->NoteProcess(pid);
  return Status::Ok();
}

std::vector<ProcessCaptureStats> Session::PerProcess(const Tally& tally,
                                                     const std::map<uint32_t, uint64_t>& drops) const {
  std::map<uint32_t, ProcessCaptureStats> by_pid;
  for (const auto& [pid, sources] : tally.records) {
    ProcessCaptureStats& s = by_pid[pid];
    s.pid = pid;
    for (const auto& [source, n] : sources) s.records_by_source.emplace_back(source, n);
  }
  for (const auto& [pid, n] : drops) {
    if (!n) continue;
    by_pid[pid].pid = pid;
    by_pid[pid].dropped = n;
  }
  std::vector<ProcessCaptureStats> out;
  for (auto& [pid, s] : by_pid) {
    s.comm = sink_.CommOf(pid);
    if (s.comm.empty()) {
      auto it = processes_.find(pid);
      if (it != processes_.end() && it->second.seen_at_start) s.comm = it->second.seen_at_start->comm;
    }
    out.push_back(std::move(s));
  }
  return out;
}

LogSummary Session::MakeSummary(const Tally& tally, const std::map<uint32_t, uint64_t>& drops,
                                uint64_t events, uint64_t dropped) const {
  LogSummary summary;
  summary.end_clock = ReadClockAnchor();
  summary.events = events;
  summary.dropped = dropped;
  summary.processes = static_cast<uint32_t>(tally.records.size());
  summary.process_stats = PerProcess(tally, drops);
  return summary;
}

Status Session::RotateIfDue(uint64_t now) {
  if (!output_->RotationDue(now)) return Status::Ok();
  const Counters counters = maps_->ReadCounters();
  const auto drops = maps_->ReadDropsByPid();
  std::map<uint32_t, uint64_t> file_drops;
  for (const auto& [pid, n] : drops) file_drops[pid] = n - drops_at_rotation_[pid];
  LogSummary summary = MakeSummary(file_tally_, file_drops, sink_.file_events(),
                                   counters[XT_CNT_DROPPED] - dropped_at_rotation_);
  Status st = output_->Rotate(summary, MakeLogHeader(opt_.xtrace_command_line), now);
  drops_at_rotation_ = drops;
  dropped_at_rotation_ = counters[XT_CNT_DROPPED];
  file_tally_ = Tally();
  sink_.ForgetGone();
  sink_.ReplayIdentities();
  if (st.ok() && !opt_.quiet && opt_.verbose) Say("now writing " + output_->current_path());
  return st;
}

void Session::Publish() {
  if (!opt_.on_progress) return;
  const Counters counters = maps_->ReadCounters();
  CaptureProgress p;
  p.current_file = output_->writer().path();
  p.files_finished = static_cast<uint32_t>(output_->finished().size());
  p.events = sink_.events();
  p.dropped = counters[XT_CNT_DROPPED];
  for (const auto& [pid, t] : processes_) p.processes_tracked += t.gone ? 0 : 1;
  p.processes_traced = static_cast<uint32_t>(ever_traced_.size());
  p.links = attachments_.link_count() + reaper_.pending() +
            (watcher_ ? watcher_->lifecycle_link_count() : 0);
  for (const auto& source : sources_) p.links += source->link_count();
  p.traced_pid_entries = static_cast<uint32_t>(maps_->TracedPids().size());
  p.per_process = PerProcess(total_tally_, maps_->ReadDropsByPid());
  opt_.on_progress(p);
}

Result<CaptureReport> Session::Run() {
  if (Status st = Prepare(); !st.ok()) return st;
  PinHostLibraries();
  DiscoverRunning();
  if (!opt_.command.empty())
    if (Status st = LaunchCommand(); !st.ok()) return st;

  ScanPending();
  if (scope_.discovers()) Say("tracing " + scope_.Describe());
  for (const auto& [pid, t] : processes_) {
    if (t.given && !t.ever_attached && !t.gone)
      Say("pid " + std::to_string(pid) + " has not loaded " + WaitsFor() +
          " yet; waiting for it to (Ctrl-C to stop)");
  }

  const uint64_t start = MonotonicNs();
  const uint64_t deadline = opt_.duration_ns ? start + *opt_.duration_ns : UINT64_MAX;
  uint64_t last_flush = start, last_sweep = start, last_clock_reading = start;
  const RecordCallback& on_record = on_record_;
  Status read_error;
  Publish();

  while (!StopRequested()) {
    auto n = maps_->Poll(opt_.poll_interval_ms, on_record);
    if (!n.ok()) {
      read_error = n.status();
      break;
    }
    const uint64_t now = MonotonicNs();
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
    attachments_.ExpireIdle(now, opt_.library_grace_ns);
    const bool sweep = now - last_sweep >= kDiscoveredSweepNs;
    if (sweep) last_sweep = now;
    DetachTargets();
    CheckAlive(sweep);
    ScanPending();
    Publish();
    if (scope_.ends_with_targets() && FollowedAllGone()) break;
  }

  if (progress_shown_) std::fputc('\n', stderr);
  // Everything the probes wrote before we stopped is still in the ring; a last clock reading
  // then covers the newest kernel timestamps, and the timeline lets go of what it held.
  (void)maps_->Drain(on_record);
  ReadDeviceClocks();
  DetachTargets();  // a detach read in these last records is reported too
  counters_ = maps_->ReadCounters();
  const Counters& counters = counters_;
  const auto drops = maps_->ReadDropsByPid();
  const uint64_t end = MonotonicNs();
  const double seconds = (end - start) / 1e9;
  correlator_->Finish(end);

  // A launched command that is still running when the capture ends keeps running.
  for (const auto& [pid, t] : processes_) {
    if (!t.given || t.ever_attached) continue;
    const bool seen = correlator_->SawProcess(pid);
    Say("pid " + std::to_string(pid) + (t.gone ? " exited" : " is still running") +
        " and never loaded " + WaitsFor() +
        (seen ? ": only its kernel-driver (DRM) calls were captured"
              : ": nothing was captured from it"));
  }

  std::map<uint32_t, uint64_t> file_drops;
  for (const auto& [pid, n] : drops) file_drops[pid] = n - drops_at_rotation_[pid];
  Status finish = output_->Finish(MakeSummary(file_tally_, file_drops, sink_.file_events(),
                                              counters[XT_CNT_DROPPED] - dropped_at_rotation_));
  if (counters[XT_CNT_TRACED_FULL])
    Say(std::to_string(counters[XT_CNT_TRACED_FULL]) +
        " new processes could not be followed: more than " + std::to_string(XT_MAX_TRACED_PROCS) +
        " processes were traced at once");

  CaptureReport report;
  const auto& cs = correlator_->stats();
  report.events = sink_.events();
  report.launches = cs.launches;
  report.kernel_creates = cs.kernel_creates;
  report.itt_tasks = correlator_->itt_stats().tasks;
  report.itt_markers = correlator_->itt_stats().markers;
  report.dropped = counters[XT_CNT_DROPPED];
  report.malformed = malformed_;
  report.file_bytes = output_->total_bytes();
  report.files_written = static_cast<uint32_t>(output_->finished().size());
  for (const auto& [pid, t] : processes_)
    report.processes_attached += t.ever_attached || correlator_->SawProcess(pid) ? 1 : 0;
  report.per_process = PerProcess(total_tally_, drops);
  if (child_status_) report.command_exit_status = *child_status_;
  report.summary_text = Summarize(report, seconds, counters[XT_CNT_PAUSED]);
  if (!opt_.quiet) std::fprintf(stderr, "%s\n", report.summary_text.c_str());
  Publish();
  if (!read_error.ok()) return read_error.WithContext("capture stopped early");
  if (!finish.ok()) return finish;
  return report;
}

std::string Session::Summarize(const CaptureReport& r, double seconds, uint64_t paused_hits) const {
  const auto& cs = correlator_->stats();
  std::ostringstream s;
  char secs[32];
  std::snprintf(secs, sizeof(secs), "%.2f", seconds);
  const std::string where =
      output_->finished().size() > 1
          ? std::to_string(output_->finished().size()) + " files in " + opt_.output_dir
          : output_->current_path();
  s << "xtrace: captured " << r.launches << " kernel launches, " << r.kernel_creates
    << " kernel creations and " << cs.api_calls << " other Level Zero calls from " << cs.processes << (cs.processes == 1 ? " process" : " processes")
    << " (" << cs.threads << (cs.threads == 1 ? " thread" : " threads") << ") in " << secs
    << " s; " << r.events << " events written to " << where << " ("
    << HumanBytes(r.file_bytes) << ").";
  if (cs.launches_unnamed)
    s << " " << cs.launches_unnamed << " launches of " << cs.kernels_unnamed
      << " kernels created before the capture began are named kernel@0x<handle>.";
  if (cs.failed_calls) s << " " << cs.failed_calls << " calls returned an error code.";
  const TimelineStats& ts = correlator_->ze().timeline_stats();
  if (ts.device_ops) {
    s << " Device: " << ts.device_ops << " operations, " << ts.measured
      << " timed by kernel timestamps, " << ts.device_ops - ts.measured << " estimated";
    if (ts.completion_unseen) s << " (" << ts.completion_unseen << " never seen complete)";
    s << ".";
  }
  if (ts.unclassified_dropped)
    s << " " << ts.unclassified_dropped
      << " appends to command lists created before the capture were never seen to run.";
  if (ts.timestamps_rejected)
    s << " " << ts.timestamps_rejected
      << " kernel timestamps disagreed with the host's bounds and were not used.";
  if (opt_.verbose) {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    s << " Tables: peak " << cs.peak_kernel_handles << " kernels, " << ts.peak_live_objects
      << " live Level Zero objects, " << ts.peak_pending_ops
      << " device operations in flight; collector peak RSS "
      << usage.ru_maxrss / 1024 << " MiB.";
  }
  if (r.dropped)
    s << " " << r.dropped << " events dropped; raise --buffer-size (now "
      << HumanBytes(opt_.ring_bytes) << ").";
  else
    s << " No events dropped.";
  if (r.malformed) s << " " << r.malformed << " malformed records skipped (first: " << first_malformed_ << ").";
  if (child_status_) {
    if (WIFEXITED(*child_status_)) s << " The command exited with status " << WEXITSTATUS(*child_status_) << ".";
    else if (WIFSIGNALED(*child_status_)) s << " The command was killed by signal " << WTERMSIG(*child_status_) << ".";
  }
  s << DrmSummary(correlator_->drm(), counters_);
  s << SummarizeItt(correlator_->itt_stats(), paused_hits);
  if (!r.per_process.empty()) {
    s << "\nxtrace: per process (records by source, dropped):";
    for (const ProcessCaptureStats& p : r.per_process) {
      s << "\n  pid " << p.pid << " (" << (p.comm.empty() ? "?" : p.comm) << "):";
      if (p.records_by_source.empty()) s << " no records,";
      for (const auto& [source, n] : p.records_by_source) s << " " << source << " " << n << ",";
      s << " dropped " << p.dropped;
    }
  }
  return s.str();
}

}  // namespace

Result<CaptureReport> RunCapture(const CaptureOptions& options) {
  Session session(options);
  return session.Run();
}

}  // namespace xtrace
