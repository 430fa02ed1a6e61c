// The capture loop: targets, probe attachment, ring draining, periodic log flushes, summary.
#include "capture/capture_session.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>

#include "capture/host_info.h"
#include "capture/proc_maps.h"
#include "capture/ze_probes.h"
#include "correlate/correlator.h"
#include "correlate/process_inspector.h"
#include "decode/record_decoder.h"
#include "log/log_writer.h"

namespace xtrace {

volatile std::sig_atomic_t g_capture_stop = 0;

namespace {

constexpr std::string_view kLoaderPrefix = "libze_loader.so";
constexpr const char* kLoaderSoname = "libze_loader.so.1";

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
  bool ever_attached = false;
  std::vector<MappedLibrary> attached;  // loader files probed in this process
};

// Where the dynamic linker will find the loader for a command we launch: LD_LIBRARY_PATH,
// then the linker cache, then the default directories. Probing it before exec means the
// first Level Zero call of the command is already captured.
std::optional<MappedLibrary> ResolveLoaderForExec() {
  std::vector<std::string> dirs;
  if (const char* llp = std::getenv("LD_LIBRARY_PATH")) {
    std::stringstream ss(llp);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty()) dirs.push_back(d);
  }
  if (FILE* p = popen("/sbin/ldconfig -p 2>/dev/null", "r")) {
    char line[4096];
    while (std::fgets(line, sizeof(line), p)) {
      std::string l(line);
      if (l.find(kLoaderSoname) == std::string::npos) continue;
      const size_t arrow = l.find("=> ");
      if (arrow == std::string::npos) continue;
      std::string path = l.substr(arrow + 3);
      while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
      dirs.push_back(path.substr(0, path.rfind('/')));
    }
    pclose(p);
  }
  for (const char* d : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
                        "/usr/lib64", "/lib", "/usr/lib"})
    dirs.push_back(d);
  for (const auto& dir : dirs) {
    const std::string path = dir + "/" + kLoaderSoname;
    char real[PATH_MAX];
    struct stat st{};
    if (!realpath(path.c_str(), real) || stat(real, &st) != 0) continue;
    MappedLibrary lib;
    lib.path = real;
    lib.host_path = real;
    lib.inode = st.st_ino;
    lib.dev_major = major(st.st_dev);
    lib.dev_minor = minor(st.st_dev);
    return lib;
  }
  return std::nullopt;
}

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
  void Attach(Target& target, const MappedLibrary& lib);
  void ScanTargets();
  bool AllTargetsGone() const;
  void OnRecord(std::span<const std::byte> data);
  std::string Summarize(const CaptureReport& report, double seconds) const;

  const CaptureOptions& opt_;
  std::unique_ptr<ZeProbes> probes_;
  std::unique_ptr<LogWriter> writer_;
  std::unique_ptr<LogSink> sink_;
  std::unique_ptr<Correlator> correlator_;
  ProcfsInspector inspector_;
  std::vector<Target> targets_;
  uint64_t malformed_ = 0;
  std::string first_malformed_;
  std::optional<int> child_status_;
};

void Session::Attach(Target& target, const MappedLibrary& lib) {
  for (const auto& a : target.attached)
    if (a.SameFile(lib)) return;
  std::vector<std::string> skipped;
  Status st = probes_->AttachLibrary(static_cast<int>(target.pid), lib, &skipped);
  if (!st.ok()) {
    Say("pid " + std::to_string(target.pid) + ": " + st.message());
    target.attached.push_back(lib);  // do not retry the same file every poll
    return;
  }
  for (const auto& s : skipped)
    Say("pid " + std::to_string(target.pid) + ": " + lib.path + " does not export " + s +
        "; that call is not traced");
  target.attached.push_back(lib);
  if (!target.ever_attached) {
    target.ever_attached = true;
    if (!target.held) correlator_->NoteProcess(target.pid);
    Say("attached to pid " + std::to_string(target.pid) + " (" + lib.path + ")");
  }
}

void Session::ScanTargets() {
  for (auto& t : targets_) {
    if (t.gone) continue;
    if (t.is_child) {
      int status = 0;
      if (waitpid(static_cast<pid_t>(t.pid), &status, WNOHANG) == static_cast<pid_t>(t.pid)) {
        t.gone = true;
        child_status_ = status;
        continue;
      }
    } else if (!ProcessAlive(t.pid)) {
      t.gone = true;
      continue;
    }
    auto libs = FindMappedLibraries(t.pid, kLoaderPrefix);
    if (!libs.ok()) {
      if (!ProcessAlive(t.pid)) t.gone = true;
      continue;
    }
    for (const auto& lib : *libs) Attach(t, lib);
  }
}

bool Session::AllTargetsGone() const {
  for (const auto& t : targets_)
    if (!t.gone) return false;
  return true;
}

void Session::OnRecord(std::span<const std::byte> data) {
  auto decoded = DecodeRecord(data);
  if (!decoded.ok()) {
    if (malformed_++ == 0) first_malformed_ = decoded.status().message();
    return;
  }
  correlator_->OnRecord(*decoded);
}

Result<CaptureReport> Session::Run() {
  ZeProbesOptions popt;
  popt.ring_bytes = opt_.ring_bytes;
  auto probes = ZeProbes::Load(popt);
  if (!probes.ok()) return probes.status();
  probes_ = std::move(*probes);

  for (uint32_t pid : opt_.pids) {
    if (!ProcessAlive(pid)) return Status::Error("no running process with pid " + std::to_string(pid));
    targets_.emplace_back(pid);
  }

  LogHeader header = MakeLogHeader(opt_.xtrace_command_line);
  auto writer = LogWriter::Create(opt_.output_path, header);
  if (!writer.ok()) return writer.status();
  writer_ = std::move(*writer);
  sink_ = std::make_unique<LogSink>(*writer_);
  correlator_ = std::make_unique<Correlator>(writer_->strings(), *sink_, inspector_);

  std::optional<LaunchedCommand> launched;
  if (!opt_.command.empty()) {
    auto spawned = SpawnHeld(opt_.command);
    if (!spawned.ok()) return spawned.status();
    launched = *spawned;
    Target t(static_cast<uint32_t>(launched->pid));
    t.is_child = true;
    t.held = true;
    if (auto lib = ResolveLoaderForExec()) {
      Attach(t, *lib);
    } else {
      Say("no " + std::string(kLoaderSoname) +
          " found on the library path; watching the command for one it loads itself");
    }
    targets_.push_back(std::move(t));
    if (Status st = ReleaseHeld(*launched, opt_.command[0]); !st.ok()) return st;
    targets_.back().held = false;
    if (targets_.back().ever_attached) correlator_->NoteProcess(targets_.back().pid);
  }

  ScanTargets();
  for (const auto& t : targets_) {
    if (!t.ever_attached && !t.gone)
      Say("pid " + std::to_string(t.pid) +
          " has not loaded Level Zero (" + std::string(kLoaderPrefix) +
          "*) yet; waiting for it to (Ctrl-C to stop)");
  }

  const uint64_t start = MonotonicNs();
  const uint64_t deadline = opt_.duration_ns ? start + *opt_.duration_ns : UINT64_MAX;
  uint64_t last_flush = start;
  const RecordCallback on_record = [this](std::span<const std::byte> d) { OnRecord(d); };
  Status read_error;

  while (!g_capture_stop) {
    auto n = probes_->Poll(opt_.poll_interval_ms, on_record);
    if (!n.ok()) {
      read_error = n.status();
      break;
    }
    const uint64_t now = MonotonicNs();
    if (now - last_flush >= opt_.flush_interval_ns) {
      if (Status st = writer_->Flush(); !st.ok()) {
        read_error = st;
        break;
      }
      last_flush = now;
    }
    if (now >= deadline) break;
    ScanTargets();
    if (AllTargetsGone()) break;
  }

  // Everything the probes wrote before we stopped is still in the ring.
  (void)probes_->Drain(on_record);
  const Counters counters = probes_->ReadCounters();
  const double seconds = (MonotonicNs() - start) / 1e9;

  // A launched command that is still running when the capture ends keeps running.
  for (auto& t : targets_) {
    if (!t.ever_attached)
      Say("pid " + std::to_string(t.pid) + (t.gone ? " exited" : " is still running") +
          " and never loaded Level Zero (" + std::string(kLoaderPrefix) +
          "*): nothing was captured from it");
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
  report.dropped = counters[XT_CNT_DROPPED];
  report.malformed = malformed_;
  report.file_bytes = writer_->bytes_written();
  for (const auto& t : targets_) report.processes_attached += t.ever_attached ? 1 : 0;
  if (child_status_) report.command_exit_status = *child_status_;
  report.summary_text = Summarize(report, seconds);
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
  s << "xtrace: captured " << r.launches << " kernel launches and " << r.kernel_creates
    << " kernel creations from " << cs.processes << (cs.processes == 1 ? " process" : " processes")
    << " (" << cs.threads << (cs.threads == 1 ? " thread" : " threads") << ") in " << secs
    << " s; " << r.events << " events written to " << opt_.output_path << " ("
    << HumanBytes(r.file_bytes) << ").";
  if (cs.launches_unnamed)
    s << " " << cs.launches_unnamed << " launches of " << cs.kernels_unnamed
      << " kernels created before the capture began are named kernel@0x<handle>.";
  if (cs.failed_calls) s << " " << cs.failed_calls << " calls returned an error code.";
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
  return s.str();
}

}  // namespace

Result<CaptureReport> RunCapture(const CaptureOptions& options) {
  Session session(options);
  return session.Run();
}

}  // namespace xtrace
