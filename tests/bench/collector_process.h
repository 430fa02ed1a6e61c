// The real collector (`xtrace attach`) as a child process: started on a target, ready once
// it says it attached, watched (RSS, BPF program ids) while it runs, stopped with SIGINT,
// and its closing summary read back.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench_context.h"
#include "child_process.h"

namespace xtrace::bench {

struct CollectorSummary {
  uint64_t events = 0;
  uint64_t launches = 0;
  uint64_t ioctls = 0;  // DRM ioctls, all devices
  uint64_t dropped = 0;
  uint64_t file_bytes = 0;
  uint64_t peak_rss_bytes = 0;
  double cpu_seconds = 0;  // user + system time the collector used
  std::string text;  // the summary paragraph
};

class CollectorProcess {
 public:
  // `extra` goes before the target (e.g. "--no-drm", "--buffer-size", "64M").
  static Result<std::unique_ptr<CollectorProcess>> Attach(const BenchContext& ctx, int target_pid,
                                                          const std::string& output,
                                                          const std::vector<std::string>& extra = {});
  // `xtrace attach` with any target options (e.g. --comm NAME), ready once it has attached to
  // `expected_pid`.
  static Result<std::unique_ptr<CollectorProcess>> AttachTargets(
      const BenchContext& ctx, const std::vector<std::string>& targets, int expected_pid,
      const std::string& output, const std::vector<std::string>& extra = {});
  int pid() const { return child_.pid(); }
  // Resident set now (VmRSS), in bytes; 0 if it cannot be read.
  uint64_t rss_bytes() const;
  // CPU time (user + system, every thread) it used so far, in seconds; 0 if it cannot be read.
  double cpu_seconds_now() const;
  Result<CollectorSummary> Stop();
  // What it said on stderr so far.
  const std::string& stderr_text() const { return child_.stderr_text(); }

 private:
  CollectorProcess(const BenchContext& ctx, const std::vector<std::string>& targets,
                   const std::string& output, const std::vector<std::string>& extra);
  ChildProcess child_;
  std::string output_;
};

}  // namespace xtrace::bench
