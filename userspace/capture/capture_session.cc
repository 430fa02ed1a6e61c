// The capture loop: targets, probe attachment, ring draining, periodic log flushes, summary.
#include "capture/capture_session.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>

#include "capture/capture_maps.h"
#include "capture/device_clock_sampler.h"
#include "capture/drm_summary.h"
#include "capture/itt_summary.h"
#include "capture/host_info.h"
#include "capture/probe_source.h"
#include "capture/proc_maps.h"
#include "correlate/correlator.h"
#include "correlate/process_inspector.h"
#include "decode/record_decoder.h"
#include "log/log_writer.h"

namespace xtrace {

volatile std::sig_atomic_t g_capture_stop = 0;

namespace {

// How often the device clocks are read against the host's.
constexpr uint64_t kClockReadingIntervalNs = 1'000'000'000;

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

// Adapts the correlator's output to the log writer.
class LogSink final : public EventSink {
 public:
  explicit LogSink(LogWriter& writer) : writer_(writer) {}
  void OnEvent(const Event& event) override {
    writer_.Append(event);
    ++events_;
  }
  uint64_t events() const { return events_; }

 private:
  LogWriter& writer_;
  uint64_t events_ = 0;
};

struct Target {
  explicit Target(uint32_t p) : pid(p) {}
  uint32_t pid = 0;
  bool is_child = false;        // launched by `record`: reaped by us
  bool held = false;            // launched but not yet exec'd: /proc still shows xtrace
  bool gone = false;
  bool detached = false;        // called __itt_detach: its probes are released, it runs on
  bool ever_attached = false;
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
  explicit Session(const CaptureOptions& options) : opt_(options) {}

  Result<CaptureReport> Run();

 private:
  void Say(const std::string& line) const {
    if (!opt_.quiet) std::fprintf(stderr, "xtrace: %s\n", line.c_str());
  }
  void MarkAttached(Target& target);
  // Whether `source` having a probe in a process counts as "attached" for messages and the
  // exit status: sources that need a library do; one that needs nothing (DRM) does only
  // when it is all there is (--drm-only), or every target would be "attached" at once.
  bool AnnouncesAttach(const ProbeSource& source) const;
  void ScanTargets();
  void TargetGone(Target& target);
  void DetachTargets();
  Status TraceTarget(uint32_t pid);
  bool AllTargetsGone() const;
  std::string WaitsFor() const;
  void OnRecord(std::span<const std::byte> data);
  void ReportProgress(uint64_t elapsed_ns);
  void OpenDeviceClocks();
  void ReadDeviceClocks();
  std::string Summarize(const CaptureReport& report, double seconds) const;

  const CaptureOptions& opt_;
  std::unique_ptr<CaptureMaps> maps_;
  std::vector<std::unique_ptr<ProbeSource>> sources_;
  std::unique_ptr<LogWriter> writer_;
  std::unique_ptr<LogSink> sink_;
  std::unique_ptr<Correlator> correlator_;
  std::unique_ptr<DeviceClockSampler> clocks_;
  ProcfsInspector inspector_;
  std::vector<Target> targets_;
  uint64_t malformed_ = 0;
  std::string first_malformed_;
  std::optional<int> child_status_;
  uint64_t drops_reported_ = 0;
  bool progress_shown_ = false;  // a status line is on the terminal, to be overwritten
  std::vector<uint32_t> detach_requests_;  // pids whose __itt_detach was just seen
  RecordCallback on_record_;
  Counters counters_{};
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
               elapsed_ns / 1e9, static_cast<unsigned long long>(sink_->events()),
               HumanBytes(writer_->bytes_written()).c_str(),
               static_cast<unsigned long long>(dropped));
  progress_shown_ = true;
}

void Session::MarkAttached(Target& target) {
  if (target.ever_attached) return;
  target.ever_attached = true;
  if (!target.held) correlator_->NoteProcess(target.pid);
}

bool Session::AnnouncesAttach(const ProbeSource& source) const {
  if (!source.waits_for().empty()) return true;
  for (const auto& s : sources_)
    if (!s->waits_for().empty()) return false;
  return true;
}

void Session::TargetGone(Target& target) {
  // Its last records are in the ring already: take them before closing what it left open.
  (void)maps_->Drain(on_record_);
  correlator_->ProcessEnded(target.pid, MonotonicNs());
  target.gone = true;
  for (auto& source : sources_) source->OnProcessExit(target.pid);
  maps_->ForgetPid(target.pid);
}

// A target that called __itt_detach is done: BPF already records nothing more of it (its
// state stays detached); its probes are released and it is no longer scanned.
void Session::DetachTargets() {
  for (uint32_t pid : detach_requests_) {
    for (auto& t : targets_) {
      if (t.pid != pid || t.detached) continue;
      t.detached = true;
      // Its detach can be read from the ring only as it exits (the drain in TargetGone):
      // it still detached, and says so, but its probes are already released.
      if (!t.gone)
        for (auto& source : sources_) source->OnProcessExit(pid);
      Say("pid " + std::to_string(pid) + " detached itself (__itt_detach); its capture ended");
    }
  }
  detach_requests_.clear();
}

// Adds `pid` to the BPF filter, paused first when the capture starts paused.
Status Session::TraceTarget(uint32_t pid) {
  if (opt_.start_paused) {
    if (Status st = maps_->SetCollectionState(pid, XT_COLLECT_PAUSED); !st.ok()) return st;
    Say("pid " + std::to_string(pid) + " starts paused: nothing is recorded until it calls __itt_resume");
  }
  return maps_->TracePid(pid);
}

void Session::ScanTargets() {
  for (auto& t : targets_) {
    if (t.gone) continue;
    if (t.is_child && t.detached) {
      int status = 0;
      if (waitpid(static_cast<pid_t>(t.pid), &status, WNOHANG) == static_cast<pid_t>(t.pid))
        child_status_ = status;
    }
    if (t.detached) continue;
    if (t.is_child) {
      int status = 0;
      if (waitpid(static_cast<pid_t>(t.pid), &status, WNOHANG) == static_cast<pid_t>(t.pid)) {
        child_status_ = status;
        TargetGone(t);
        continue;
      }
    } else if (!ProcessAlive(t.pid)) {
      TargetGone(t);
      continue;
    }
    auto files = FindMappedLibraries(t.pid, "");
    if (!files.ok()) {
      if (!ProcessAlive(t.pid)) TargetGone(t);
      continue;
    }
    bool attached = false;
    for (auto& source : sources_)
      attached = (source->OnProcessMaps(t.pid, *files) && AnnouncesAttach(*source)) || attached;
    if (attached) MarkAttached(t);
  }
}

bool Session::AllTargetsGone() const {
  for (const auto& t : targets_)
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

void Session::OnRecord(std::span<const std::byte> data) {
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
                                 writer_->strings().Intern(d.name), d.timer_hz,
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

Result<CaptureReport> Session::Run() {
  for (uint32_t pid : opt_.pids) {
    if (!ProcessAlive(pid)) return Status::Error("no running process with pid " + std::to_string(pid));
    targets_.emplace_back(pid);
  }

  SetLibbpfVerbosity(opt_.verbose);
  auto maps = CaptureMaps::Create(opt_.ring_bytes);
  if (!maps.ok()) return maps.status();
  maps_ = std::move(*maps);
  auto sources =
      LoadProbeSources(SourceContext{*maps_, opt_, [this](const std::string& l) { Say(l); }});
  if (!sources.ok()) return sources.status();
  sources_ = std::move(*sources);
  for (const auto& t : targets_)
    if (Status st = TraceTarget(t.pid); !st.ok()) return st;

  LogHeader header = MakeLogHeader(opt_.xtrace_command_line);
  auto writer = LogWriter::Create(opt_.output_path, header);
  if (!writer.ok()) return writer.status();
  writer_ = std::move(*writer);
  sink_ = std::make_unique<LogSink>(*writer_);
  correlator_ = std::make_unique<Correlator>(writer_->strings(), *sink_, inspector_);
  on_record_ = [this](std::span<const std::byte> d) { OnRecord(d); };
  if (opt_.start_paused)
    for (const auto& t : targets_) correlator_->NoteStartPaused(t.pid, MonotonicNs());
  // With nothing recording host API calls there is no call to attribute an ioctl to.
  correlator_->drm().set_link_host_calls(opt_.drm != DrmCapture::kOnly);
  OpenDeviceClocks();

  std::optional<LaunchedCommand> launched;
  if (!opt_.command.empty()) {
    auto spawned = SpawnHeld(opt_.command);
    if (!spawned.ok()) return spawned.status();
    launched = *spawned;
    Target t(static_cast<uint32_t>(launched->pid));
    t.is_child = true;
    t.held = true;
    if (Status st = TraceTarget(t.pid); !st.ok()) return st;
    if (opt_.start_paused) correlator_->NoteStartPaused(t.pid, MonotonicNs());
    for (auto& source : sources_)
      if (source->BeforeExec(t.pid) && AnnouncesAttach(*source)) MarkAttached(t);
    targets_.push_back(std::move(t));
    if (Status st = ReleaseHeld(*launched, opt_.command[0]); !st.ok()) return st;
    targets_.back().held = false;
    if (targets_.back().ever_attached) correlator_->NoteProcess(targets_.back().pid);
  }

  ScanTargets();
  for (const auto& t : targets_) {
    if (!t.ever_attached && !t.gone)
      Say("pid " + std::to_string(t.pid) + " has not loaded " + WaitsFor() +
          " yet; waiting for it to (Ctrl-C to stop)");
  }

  const uint64_t start = MonotonicNs();
  const uint64_t deadline = opt_.duration_ns ? start + *opt_.duration_ns : UINT64_MAX;
  uint64_t last_flush = start;
  uint64_t last_clock_reading = start;
  const RecordCallback& on_record = on_record_;
  Status read_error;

  while (!g_capture_stop) {
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
      if (Status st = writer_->Flush(); !st.ok()) {
        read_error = st;
        break;
      }
      last_flush = now;
      ReportProgress(now - start);
    }
    if (now >= deadline) break;
    DetachTargets();
    ScanTargets();
    if (AllTargetsGone()) break;
  }

  if (progress_shown_) std::fputc('\n', stderr);
  // Everything the probes wrote before we stopped is still in the ring; a last clock reading
  // then covers the newest kernel timestamps, and the timeline lets go of what it held.
  (void)maps_->Drain(on_record);
  ReadDeviceClocks();
  DetachTargets();  // a detach read in these last records is reported too
  counters_ = maps_->ReadCounters();
  const Counters& counters = counters_;
  const uint64_t end = MonotonicNs();
  const double seconds = (end - start) / 1e9;
  correlator_->Finish(end);

  // A launched command that is still running when the capture ends keeps running.
  for (auto& t : targets_) {
    if (t.ever_attached) continue;
    const bool seen = correlator_->SawProcess(t.pid);
    Say("pid " + std::to_string(t.pid) + (t.gone ? " exited" : " is still running") +
        " and never loaded " + WaitsFor() +
        (seen ? ": only its kernel-driver (DRM) calls were captured"
              : ": nothing was captured from it"));
  }

  LogSummary summary;
  summary.end_clock = ReadClockAnchor();
  summary.events = sink_->events();
  summary.dropped = counters[XT_CNT_DROPPED];
  summary.processes = correlator_->stats().processes;
  Status finish = writer_->Finish(summary);

  CaptureReport report;
  const auto& cs = correlator_->stats();
  report.events = sink_->events();
  report.launches = cs.launches;
  report.kernel_creates = cs.kernel_creates;
  report.itt_tasks = correlator_->itt_stats().tasks;
  report.itt_markers = correlator_->itt_stats().markers;
  report.dropped = counters[XT_CNT_DROPPED];
  report.malformed = malformed_;
  report.file_bytes = writer_->bytes_written();
  for (const auto& t : targets_)
    report.processes_attached += t.ever_attached || correlator_->SawProcess(t.pid) ? 1 : 0;
  if (child_status_) report.command_exit_status = *child_status_;
  report.summary_text = Summarize(report, seconds) + SummarizeItt(correlator_->itt_stats(),
                                                                  counters[XT_CNT_PAUSED]);
  if (!opt_.quiet) std::fprintf(stderr, "%s\n", report.summary_text.c_str());
  if (!read_error.ok()) return read_error.WithContext("capture stopped early");
  if (!finish.ok()) return finish;
  return report;
}

std::string Session::Summarize(const CaptureReport& r, double seconds) const {
  const auto& cs = correlator_->stats();
  std::ostringstream s;
  char secs[32];
  std::snprintf(secs, sizeof(secs), "%.2f", seconds);
  s << "xtrace: captured " << r.launches << " kernel launches, " << r.kernel_creates
    << " kernel creations and " << cs.api_calls << " other Level Zero calls from " << cs.processes << (cs.processes == 1 ? " process" : " processes")
    << " (" << cs.threads << (cs.threads == 1 ? " thread" : " threads") << ") in " << secs
    << " s; " << r.events << " events written to " << opt_.output_path << " ("
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
  return s.str();
}

}  // namespace

Result<CaptureReport> RunCapture(const CaptureOptions& options) {
  Session session(options);
  return session.Run();
}

}  // namespace xtrace
