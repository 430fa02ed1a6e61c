// Child processes for the benchmark: the integration tests' Subprocess (pipes, line waits,
// stdin on request, resource usage once reaped), and a run-to-completion helper that reports
// time and memory.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "subprocess.h"

namespace xtrace::bench {

using ChildProcess = testing::Subprocess;

// User + system time in `u`, in seconds.
double CpuSeconds(const rusage& u);

// Size of the file a child wrote, 0 if there is none.
uint64_t FileSize(const std::string& path);

// Runs to completion; the wait status (-1 on timeout, after which the child is killed).
struct ChildResult {
  int status = -1;
  std::string out, err;
  uint64_t peak_rss_bytes = 0;
  double seconds = 0;      // wall time from fork to exit
  double cpu_seconds = 0;  // user + system time of the child
  bool ok() const;         // exited with status 0
};
ChildResult RunChild(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                     std::chrono::milliseconds timeout);

}  // namespace xtrace::bench
