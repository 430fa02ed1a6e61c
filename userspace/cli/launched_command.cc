// Waiting for the command `xtrace record` launched, and passing signals on to it.
#include "cli/launched_command.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "capture/capture_session.h"

namespace xtrace {
namespace {

volatile std::sig_atomic_t g_command_pid = 0;

extern "C" void OnStopSignal(int sig, siginfo_t* info, void*) {
  g_capture_stop = 1;
  // si_code <= 0: sent by a process (kill, sigqueue, tgkill); the terminal's are SI_KERNEL.
  if (g_command_pid > 0 && info && info->si_code <= 0) kill(g_command_pid, sig);
}

}  // namespace

Result<std::string> FindCommand(const std::string& name, const char* path_env) {
  // Why `file` cannot be run, or "" when it can.
  auto unrunnable = [](const std::string& file) -> std::string {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) return std::strerror(errno);
    if (S_ISDIR(st.st_mode)) return "it is a directory";
    if (::access(file.c_str(), X_OK) != 0) return std::string("not executable (") + std::strerror(errno) + ")";
    return "";
  };
  if (name.empty()) return Status::Error("cannot run '': an empty command name");
  if (name.find('/') != std::string::npos) {
    if (std::string why = unrunnable(name); !why.empty()) return Status::Error("cannot run '" + name + "': " + why);
    return name;
  }
  // execvp's search path when PATH is unset (glibc).
  const std::string path = path_env ? path_env : "/bin:/usr/bin";
  std::string first_why;  // a file found but not runnable says more than "not found"
  for (size_t at = 0; at <= path.size();) {
    size_t end = path.find(':', at);
    if (end == std::string::npos) end = path.size();
    const std::string dir = end > at ? path.substr(at, end - at) : ".";  // empty: the working directory
    const std::string file = dir + "/" + name;
    const std::string why = unrunnable(file);
    if (why.empty()) return file;
    if (first_why.empty() && why != std::strerror(ENOENT) && why != std::strerror(ENOTDIR))
      first_why = file + ": " + why;
    at = end + 1;
  }
  if (!first_why.empty()) return Status::Error("cannot run '" + name + "': " + first_why);
  return Status::Error("cannot run '" + name + "': not found in PATH (" + path + ")");
}

void InstallCaptureStopHandlers() {
  struct sigaction sa {};
  sa.sa_sigaction = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO;  // no SA_RESTART: the poll in the capture loop returns at once
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
}

void ForwardStopSignalsTo(pid_t pid) { g_command_pid = pid; }

int ShellExitCode(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

int WaitForLaunchedCommand(pid_t pid, const std::string& name, bool quiet) {
  siginfo_t info{};
  const bool running = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                       info.si_pid == 0;
  if (running && !quiet)
    std::fprintf(stderr,
                 "xtrace: the capture has ended; waiting for %s (pid %d) to exit, as its parent "
                 "(signals sent to xtrace are passed on to it)\n",
                 name.c_str(), static_cast<int>(pid));
  int status = 0;
  pid_t r;
  while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  ForwardStopSignalsTo(0);
  if (r != pid) {
    std::fprintf(stderr, "xtrace: cannot wait for %s (pid %d): %s; its exit status is unknown\n",
                 name.c_str(), static_cast<int>(pid), std::strerror(errno));
    return 1;
  }
  if (WIFSIGNALED(status) && !quiet)
    std::fprintf(stderr, "xtrace: %s (pid %d) was killed by signal %d (%s)\n", name.c_str(),
                 static_cast<int>(pid), WTERMSIG(status), strsignal(WTERMSIG(status)));
  return ShellExitCode(status);
}

}  // namespace xtrace
