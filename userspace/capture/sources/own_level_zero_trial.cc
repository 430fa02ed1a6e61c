// A trial of xtrace's own Level Zero in a child process; see own_level_zero_trial.h.
#include "capture/sources/own_level_zero_trial.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "base/monotonic_clock.h"
#include "base/unique_fd.h"
#include "capture/sources/device_clock_sampler.h"
#include "capture/sources/ze_probe_specs.h"
#include "capture/sources/ze_source.h"

extern char** environ;

namespace xtrace {
namespace {

constexpr int kReportFd = 3;              // the child's report, as the hidden command writes it
constexpr size_t kErrKept = 4096;         // the end of the child's stderr that is kept
constexpr size_t kErrLineShown = 200;     // and how much of its last line the warning shows
constexpr const char* kMapsMark = "maps\n";
constexpr uint64_t kDrainGraceNs = 1'000'000'000;

// ---- The child -------------------------------------------------------------------------------

void WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    data += w;
    n -= static_cast<size_t>(w);
  }
}

void Report(const std::string& line) {
  const std::string text = line + "\n";
  WriteAll(kReportFd, text.data(), text.size());
}

// On a fatal signal: the memory map (which drivers the loader had loaded) goes to the parent,
// with nothing but system calls (the stack may be smashed, the heap torn), then the signal
// kills the child as it would have.
void OnFatalSignal(int sig) {
  WriteAll(kReportFd, kMapsMark, strlen(kMapsMark));
  const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) WriteAll(kReportFd, buf, static_cast<size_t>(n));
    close(fd);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

constexpr int kFatalSignals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS};

void CatchFatalSignals() {
  // A stack the handler can run on when the driver's own ran out.
  static char alt_stack[64 * 1024];
  stack_t ss{};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof(alt_stack);
  sigaltstack(&ss, nullptr);
  struct sigaction sa{};
  sa.sa_handler = OnFatalSignal;
  sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : kFatalSignals) sigaction(sig, &sa, nullptr);
}

// ---- The parent ------------------------------------------------------------------------------

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// The executable files of Level Zero drivers in a memory map, in order of first appearance.
std::vector<std::string> DriversIn(const std::string& maps) {
  std::vector<std::string> drivers;
  size_t at = 0;
  while (at < maps.size()) {
    size_t end = maps.find('\n', at);
    if (end == std::string::npos) end = maps.size();
    const std::string_view line(maps.data() + at, end - at);
    at = end + 1;
    // address perms offset dev inode path
    const size_t perms = line.find(' ');
    const size_t slash = line.find('/');
    if (perms == std::string_view::npos || slash == std::string_view::npos) continue;
    if (line.substr(perms + 1, 4).find('x') == std::string_view::npos) continue;
    std::string path(line.substr(slash));
    if (path.ends_with(" (deleted)")) path.resize(path.size() - 10);
    if (!ZeSource::IsDriverPath(path)) continue;
    if (std::find(drivers.begin(), drivers.end(), path) == drivers.end()) drivers.push_back(path);
  }
  return drivers;
}

// The last call the child named before it went.
std::string LastCall(const std::string& report) {
  std::string call;
  size_t at = 0;
  while (at < report.size()) {
    size_t end = report.find('\n', at);
    if (end == std::string::npos) break;
    const std::string_view line(report.data() + at, end - at);
    at = end + 1;
    if (line.starts_with("call ")) call = std::string(line.substr(5));
    if (line == std::string_view(kMapsMark, strlen(kMapsMark) - 1)) break;
  }
  return call;
}

std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  const size_t start = text.rfind('\n', end);
  std::string line = text.substr(start == std::string::npos ? 0 : start + 1,
                                 end + 1 - (start == std::string::npos ? 0 : start + 1));
  if (line.size() > kErrLineShown) line = line.substr(0, kErrLineShown) + "...";
  return line;
}

struct Trial {
  std::mutex mu;
  bool started = false;
  bool decided = false;
  std::optional<std::string> failure;
  pid_t pid = -1;
  UniqueFd report, err, pidfd;
  uint64_t started_ns = 0;
};

Trial& TheTrial() {
  static Trial* const trial = new Trial();  // never destroyed: a daemon's captures share it
  return *trial;
}

// Starts the child; false when it could not be (then the trial has no verdict to give).
bool Spawn(Trial& t) {
  int report[2], err[2];
  if (pipe2(report, O_CLOEXEC) != 0) return false;
  UniqueFd report_read(report[0]), report_write(report[1]);
  if (pipe2(err, O_CLOEXEC) != 0) return false;
  UniqueFd err_read(err[0]), err_write(err[1]);
  UniqueFd devnull(open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!devnull.valid()) return false;
  // Everything the child needs is made before the fork: after it, in a process with threads,
  // only system calls are safe. glibc says a fatal error on stderr, where the parent reads it,
  // rather than on the terminal.
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e)
    if (!std::string_view(*e).starts_with("LIBC_FATAL_STDERR_=")) env_text.emplace_back(*e);
  env_text.emplace_back("LIBC_FATAL_STDERR_=1");
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string arg0 = "xtrace", arg1(kOwnLevelZeroTrialCommand);
  char* argv[] = {arg0.data(), arg1.data(), nullptr};

  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    // Out of xtrace's process group (a Ctrl-C is xtrace's to handle, not the child's death),
    // and gone with xtrace.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    const int e = fcntl(err_write.get(), F_DUPFD, 10), r = fcntl(report_write.get(), F_DUPFD, 10);
    if (e < 0 || r < 0 || dup2(devnull.get(), 0) < 0 || dup2(devnull.get(), 1) < 0 ||
        dup2(e, 2) < 0 || dup2(r, kReportFd) < 0)
      _exit(127);
    close_range(kReportFd + 1, ~0u, 0);
    execve("/proc/self/exe", argv, envp.data());
    _exit(127);
  }
  t.pid = pid;
  t.report = std::move(report_read);
  t.err = std::move(err_read);
  t.pidfd.Reset(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  return true;
}

// Reads what is there on `fd` into `out` (keeping at most `keep` bytes of its end, 0: all);
// false at end of file or on an error.
bool Drain(UniqueFd& fd, std::string& out, size_t keep) {
  char buf[4096];
  const ssize_t n = read(fd.get(), buf, sizeof(buf));
  if (n < 0 && errno == EINTR) return true;
  if (n <= 0) {
    fd.Reset();
    return false;
  }
  out.append(buf, static_cast<size_t>(n));
  if (keep && out.size() > keep) out.erase(0, out.size() - keep);
  return true;
}

// Waits for the child within the bound, or kills it.
TrialEnd Await(Trial& t) {
  TrialEnd end;
  if (const char* alt = std::getenv("ZE_ENABLE_ALT_DRIVERS")) end.alt_drivers = alt;
  // Until now nobody read its pipes: a child that filled one (a driver's chatter, a big memory
  // map at its death) waits on the write, not on its driver, and gets a moment to finish.
  const uint64_t deadline =
      std::max(t.started_ns + kOwnLevelZeroTrialBoundNs, MonotonicNs() + kDrainGraceNs);
  int status = 0;
  bool reaped = false;
  while (!reaped) {
    if (waitpid(t.pid, &status, WNOHANG) == t.pid) {
      reaped = true;
      break;
    }
    const uint64_t now = MonotonicNs();
    if (now >= deadline) break;
    pollfd fds[3];
    nfds_t n = 0;
    for (UniqueFd* fd : {&t.report, &t.err, &t.pidfd})
      if (fd->valid()) fds[n++] = pollfd{fd->get(), POLLIN, 0};
    // Without a pidfd (a kernel before 5.3) the child's end is looked for every 10 ms.
    const uint64_t wait_ns = t.pidfd.valid() ? deadline - now : std::min<uint64_t>(deadline - now, 10'000'000);
    if (poll(fds, n, static_cast<int>(wait_ns / 1'000'000 + 1)) < 0 && errno != EINTR) break;
    for (nfds_t i = 0; i < n; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (fds[i].fd == t.report.get()) Drain(t.report, end.report, 0);
      else if (fds[i].fd == t.err.get()) Drain(t.err, end.err, kErrKept);
    }
  }
  if (!reaped) {
    // Hung: which drivers it loaded is read while it is still there.
    int maps = open(("/proc/" + std::to_string(t.pid) + "/maps").c_str(), O_RDONLY | O_CLOEXEC);
    if (maps >= 0) {
      UniqueFd maps_fd(maps);
      while (Drain(maps_fd, end.maps, 0)) {
      }
    }
    end.timed_out = true;
    kill(-t.pid, SIGKILL);
    kill(t.pid, SIGKILL);
    while (waitpid(t.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  // What it wrote before it went (a process it left behind may hold the pipes: no waiting).
  for (UniqueFd* fd : {&t.report, &t.err}) {
    if (!fd->valid()) continue;
    fcntl(fd->get(), F_SETFL, O_NONBLOCK);
    std::string& out = fd == &t.report ? end.report : end.err;
    while (Drain(*fd, out, fd == &t.err ? kErrKept : 0)) {
    }
  }
  t.report.Reset();
  t.err.Reset();
  t.pidfd.Reset();
  if (!end.timed_out) {
    if (WIFSIGNALED(status)) end.signal = WTERMSIG(status);
    else end.exit_status = WEXITSTATUS(status);
  }
  if (const size_t at = end.report.find(kMapsMark); at != std::string::npos && end.maps.empty())
    end.maps = end.report.substr(at + strlen(kMapsMark));
  return end;
}

}  // namespace

std::optional<std::string> TrialVerdict(const TrialEnd& end) {
  const bool began = end.report.starts_with("begin\n");
  const bool done = end.report.find("\ndone\n") != std::string::npos;
  // Not begun: the hidden command never ran (exec failed), and nothing was tried.
  if (!began || (done && !end.timed_out && end.signal == 0)) return std::nullopt;
  std::string what;
  const std::string call = LastCall(end.report);
  const std::string in = call.empty() ? "" : " in " + call;
  if (end.timed_out)
    what = "did not return" + (call.empty() ? std::string() : " from " + call) + " within " +
           std::to_string(kOwnLevelZeroTrialBoundNs / 1'000'000'000) + " s";
  else if (end.signal != 0)
    what = "died of " + SignalName(end.signal) + in;
  else
    what = "exited with status " + std::to_string(end.exit_status) + in;
  if (const std::string said = LastLine(end.err); !said.empty() && !end.timed_out)
    what += " (" + said + ")";
  std::vector<std::string> drivers = DriversIn(end.maps);
  // None loaded yet (or a hang's map unread): those the loader was told of stand in.
  if (drivers.empty()) {
    size_t at = 0;
    while (at < end.alt_drivers.size()) {
      size_t comma = end.alt_drivers.find(',', at);
      if (comma == std::string::npos) comma = end.alt_drivers.size();
      if (comma > at) drivers.push_back(end.alt_drivers.substr(at, comma - at));
      at = comma + 1;
    }
  }
  std::string with;
  for (const std::string& d : drivers) with += (with.empty() ? "" : ", ") + d;
  if (!with.empty())
    with = (drivers.size() == 1 ? " with the driver " : " with the drivers ") + with;
  return "xtrace's own Level Zero is off: a trial of it in a child process " + what + with +
         "; the capture goes on without device clock readings (device times are estimated "
         "unless the traced processes read their clocks), the devices' names and engines, and "
         "where the drivers keep the functions they hand out by pointer";
}

void StartOwnLevelZeroTrial() {
  Trial& t = TheTrial();
  std::lock_guard lock(t.mu);
  if (t.started) return;
  t.started = true;
  t.started_ns = MonotonicNs();
  if (!Spawn(t)) t.decided = true;  // no child: Level Zero is used as it would be without
}

std::optional<std::string> OwnLevelZeroTrialFailure() {
  StartOwnLevelZeroTrial();
  Trial& t = TheTrial();
  std::lock_guard lock(t.mu);
  if (!t.decided) {
    TrialEnd end = Await(t);
    // Killed from outside, not by its driver: the thread that started it ended (a daemon's
    // capture that failed before it asked), which the child's death signal follows. Tried
    // again, now.
    if (!end.timed_out && end.signal == SIGKILL && end.maps.empty()) {
      t.started_ns = MonotonicNs();
      if (Spawn(t)) end = Await(t);
      else end = TrialEnd{};
    }
    t.failure = TrialVerdict(end);
    t.decided = true;
  }
  return t.failure;
}

int RunOwnLevelZeroTrial() {
  if (fcntl(kReportFd, F_GETFD) < 0) return 2;  // not run by the trial
  CatchFatalSignals();
  Report("begin");
  auto sampler = DeviceClockSampler::Open([](const char* call) { Report(std::string("call ") + call); });
  if (sampler.ok()) {
    std::vector<std::string_view> names;
    for (const ProbeSpec& spec : ZeProbeSpecs()) names.push_back(spec.symbol);
    Report("call zeDriverGetExtensionFunctionAddress");
    (*sampler)->ExtensionFunctions(names);
    Report("call zeDeviceGetGlobalTimestamps");
    (*sampler)->Read();
  }
  Report("done");
  // Without the exit handlers of the loader and its drivers: only the start-up is on trial.
  _exit(0);
}

}  // namespace xtrace
