// A child process for integration tests and the benchmark: argv + extra environment,
// stdout/stderr piped and read line by line with timeouts, optionally a pipe to its stdin, its
// resource usage once reaped; killed on destruction so a failed test leaves nothing behind.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace xtrace::testing {

class Subprocess {
 public:
  // With `pipe_stdin`, the child reads what Send writes (EOF once Wait begins); otherwise it
  // inherits this process's stdin.
  Subprocess(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env = {},
             bool pipe_stdin = false);
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }

  // Writes `line` and a newline to the child's stdin (needs pipe_stdin).
  bool Send(const std::string& line);

  // Waits for a line on stdout (or stderr) containing `needle`; returns the line, or nullopt
  // on timeout or end of output. Lines read on the way are kept in stdout_text()/stderr_text().
  std::optional<std::string> WaitStdout(const std::string& needle, std::chrono::milliseconds timeout);
  std::optional<std::string> WaitStderr(const std::string& needle, std::chrono::milliseconds timeout);

  void Signal(int sig);

  // Waits for exit (reading the pipes meanwhile); returns the wait status or nullopt on timeout.
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  // Valid after Wait returned a status: the child's CPU time and peak resident set.
  const rusage& usage() const { return usage_; }
  uint64_t peak_rss_bytes() const { return static_cast<uint64_t>(usage_.ru_maxrss) * 1024; }

  const std::string& stdout_text() const { return out_.text; }
  const std::string& stderr_text() const { return err_.text; }

 private:
  struct Stream {
    int fd = -1;
    std::string text;      // everything read so far
    size_t scanned = 0;    // lines before this offset were already offered to a waiter
  };
  // Reads whatever is available on both pipes, waiting at most `timeout`.
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

// The pid in a workload's "ready <pid>" line; 0 if there was no such line.
uint32_t PidFromReadyLine(const std::optional<std::string>& line);

// Runs to completion and returns (wait status, stdout, stderr).
struct RunResult {
  int status = -1;
  std::string out, err;
  int exit_code() const;
};
RunResult RunCommand(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env = {},
              std::chrono::milliseconds timeout = std::chrono::seconds(60));

// The lines of `text` (a command's output) that hold `needle`, without their newlines.
std::vector<std::string> LinesWith(const std::string& text, const std::string& needle);

}  // namespace xtrace::testing
