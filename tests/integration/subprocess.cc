// Subprocess handling for integration tests and the benchmark.
#include "subprocess.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace xtrace::testing {

Subprocess::Subprocess(const std::vector<std::string>& argv,
                       const std::vector<std::string>& extra_env, bool pipe_stdin) {
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  if ((pipe_stdin && pipe2(in, O_CLOEXEC)) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
    const int saved = errno;
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]})
      if (fd >= 0) close(fd);
    throw std::runtime_error(std::string("pipe: ") + std::strerror(saved));
  }
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    // It dies with the test or benchmark that started it, however that ends (a SIGTERM or
    // SIGKILL runs no destructor): nothing it started is left running afterwards. (Its own
    // process group, below, keeps a Ctrl-C meant for the parent from reaching it first.)
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    if (pipe_stdin) dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    // A session of its own: a test's Ctrl-C never reaches it, it can be killed whole, and run
    // from a terminal it is no job of that terminal's, which a capture would not hold.
    setsid();
    for (const auto& kv : extra_env) putenv(const_cast<char*>(kv.c_str()));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  if (pipe_stdin) close(in[0]);
  stdin_fd_ = in[1];
  close(out[1]);
  close(err[1]);
  out_.fd = out[0];
  err_.fd = err[0];
}

Subprocess::~Subprocess() {
  if (!reaped_ && pid_ > 0) {
    // Its whole group: a test that failed half-way must not leave what the child started
    // (an mpirun's ranks, a shell's jobs) running into the next test.
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  for (int fd : {stdin_fd_, out_.fd, err_.fd})
    if (fd >= 0) close(fd);
}

bool Subprocess::Send(const std::string& line) {
  const std::string text = line + "\n";
  return stdin_fd_ >= 0 && write(stdin_fd_, text.data(), text.size()) == ssize_t(text.size());
}

void Subprocess::Pump(std::chrono::milliseconds timeout) {
  pollfd fds[2] = {{out_.fd, POLLIN, 0}, {err_.fd, POLLIN, 0}};
  if (poll(fds, 2, static_cast<int>(timeout.count())) <= 0) return;
  Stream* streams[2] = {&out_, &err_};
  for (int i = 0; i < 2; ++i) {
    if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
    char buf[4096];
    const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
    if (n > 0) {
      streams[i]->text.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      close(streams[i]->fd);
      streams[i]->fd = -1;
    }
  }
}

std::optional<std::string> Subprocess::WaitLine(Stream& s, const std::string& needle,
                                                std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    size_t eol;
    while ((eol = s.text.find('\n', s.scanned)) != std::string::npos) {
      std::string line = s.text.substr(s.scanned, eol - s.scanned);
      s.scanned = eol + 1;
      if (line.find(needle) != std::string::npos) return line;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline || (out_.fd < 0 && err_.fd < 0)) return std::nullopt;
    Pump(std::min(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now),
                  std::chrono::milliseconds(50)));
  }
}

std::optional<std::string> Subprocess::WaitStdout(const std::string& needle,
                                                  std::chrono::milliseconds timeout) {
  return WaitLine(out_, needle, timeout);
}

std::optional<std::string> Subprocess::WaitStderr(const std::string& needle,
                                                  std::chrono::milliseconds timeout) {
  return WaitLine(err_, needle, timeout);
}

void Subprocess::Signal(int sig) {
  if (!reaped_) kill(pid_, sig);
}

std::optional<int> Subprocess::Wait(std::chrono::milliseconds timeout) {
  if (stdin_fd_ >= 0) {
    close(stdin_fd_);  // a child reading commands sees EOF
    stdin_fd_ = -1;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!reaped_) {
    int status = 0;
    const pid_t r = wait4(pid_, &status, WNOHANG, &usage_);
    if (r == pid_) {
      reaped_ = true;
      status_ = status;
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    Pump(std::chrono::milliseconds(20));
  }
  // Collect what is left in the pipes (grandchildren may hold them open: bounded wait).
  const auto drain_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while ((out_.fd >= 0 || err_.fd >= 0) && std::chrono::steady_clock::now() < drain_deadline)
    Pump(std::chrono::milliseconds(50));
  return status_;
}

uint32_t PidFromReadyLine(const std::optional<std::string>& line) {
  if (!line) return 0;
  return static_cast<uint32_t>(std::stoul(line->substr(line->find(' ') + 1)));
}

int RunResult::exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

RunResult RunCommand(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
              std::chrono::milliseconds timeout) {
  Subprocess p(argv, extra_env);
  RunResult r;
  auto st = p.Wait(timeout);
  r.status = st ? *st : -1;
  r.out = p.stdout_text();
  r.err = p.stderr_text();
  return r;
}

std::vector<std::string> LinesWith(const std::string& text, const std::string& needle) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (line.find(needle) != std::string::npos) lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

}  // namespace xtrace::testing
