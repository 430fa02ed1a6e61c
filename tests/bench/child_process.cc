// Child processes for the benchmark: fork/exec with pipes, line waits, wait4 for usage.
#include "child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace xtrace::bench {

ChildProcess::ChildProcess(const std::vector<std::string>& argv,
                           const std::vector<std::string>& extra_env) {
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    setpgid(0, 0);  // own group: the benchmark's Ctrl-C does not reach it half-way
    for (const auto& kv : extra_env) putenv(const_cast<char*>(kv.c_str()));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  stdin_fd_ = in[1];
  out_.fd = out[0];
  err_.fd = err[0];
}

ChildProcess::~ChildProcess() {
  if (!reaped_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  for (int fd : {stdin_fd_, out_.fd, err_.fd})
    if (fd >= 0) close(fd);
}

bool ChildProcess::Send(const std::string& line) {
  const std::string text = line + "\n";
  return stdin_fd_ >= 0 && write(stdin_fd_, text.data(), text.size()) == ssize_t(text.size());
}

void ChildProcess::Pump(std::chrono::milliseconds timeout) {
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

std::optional<std::string> ChildProcess::WaitLine(Stream& s, const std::string& needle,
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

std::optional<std::string> ChildProcess::WaitStdout(const std::string& needle,
                                                    std::chrono::milliseconds timeout) {
  return WaitLine(out_, needle, timeout);
}

std::optional<std::string> ChildProcess::WaitStderr(const std::string& needle,
                                                    std::chrono::milliseconds timeout) {
  return WaitLine(err_, needle, timeout);
}

void ChildProcess::Signal(int sig) {
  if (!reaped_) kill(pid_, sig);
}

std::optional<int> ChildProcess::Wait(std::chrono::milliseconds timeout) {
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
  const auto drain_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while ((out_.fd >= 0 || err_.fd >= 0) && std::chrono::steady_clock::now() < drain_deadline)
    Pump(std::chrono::milliseconds(50));
  return status_;
}

bool ChildResult::ok() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

ChildResult RunChild(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                     std::chrono::milliseconds timeout) {
  const auto start = std::chrono::steady_clock::now();
  ChildProcess p(argv, extra_env);
  ChildResult r;
  auto st = p.Wait(timeout);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.status = st ? *st : -1;
  r.out = p.stdout_text();
  r.err = p.stderr_text();
  if (st) {
    r.peak_rss_bytes = p.peak_rss_bytes();
    const rusage& u = p.usage();
    r.cpu_seconds = double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
                    double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  }
  return r;
}

}  // namespace xtrace::bench
