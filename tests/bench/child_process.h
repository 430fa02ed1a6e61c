// A child process for the benchmark: argv + extra environment, a pipe to its stdin, its
// stdout and stderr read line by line with timeouts, and its resource usage (peak RSS) when
// it is reaped. Killed on destruction so an aborted benchmark leaves nothing running.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace xtrace::bench {

class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env = {});
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Writes `line` and a newline to the child's stdin.
  bool Send(const std::string& line);

  // The next stdout (or stderr) line containing `needle`, or nullopt on timeout or EOF.
  std::optional<std::string> WaitStdout(const std::string& needle, std::chrono::milliseconds timeout);
  std::optional<std::string> WaitStderr(const std::string& needle, std::chrono::milliseconds timeout);

  void Signal(int sig);

  // Waits for exit; the wait status, or nullopt on timeout.
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  // Valid after Wait returned a status.
  const rusage& usage() const { return usage_; }
  // Peak resident set of the child, in bytes (after Wait).
  uint64_t peak_rss_bytes() const { return static_cast<uint64_t>(usage_.ru_maxrss) * 1024; }

  const std::string& stdout_text() const { return out_.text; }
  const std::string& stderr_text() const { return err_.text; }

 private:
  struct Stream {
    int fd = -1;
    std::string text;
    size_t scanned = 0;
  };
  void Pump(std::chrono::milliseconds timeout);
  std::optional<std::string> WaitLine(Stream& s, const std::string& needle,
                                      std::chrono::milliseconds timeout);

  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  rusage usage_{};
  Stream out_, err_;
};

// Runs to completion; the wait status (-1 on timeout, after which the child is killed).
struct ChildResult {
  int status = -1;
  std::string out, err;
  uint64_t peak_rss_bytes = 0;
  double seconds = 0;      // wall time from fork to exit
  double cpu_seconds = 0;  // user + system time of the child
  bool ok() const;     // exited with status 0
};
ChildResult RunChild(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                     std::chrono::milliseconds timeout);

}  // namespace xtrace::bench
