// BPF program run-time statistics (kernel.bpf_stats_enabled, enabled here through
// BPF_ENABLE_STATS for as long as this object lives): how long programs ran and how often,
// read from their prog info by id — also for programs another process (the collector) loaded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace xtrace::bench {

struct RunTotals {
  uint64_t run_time_ns = 0;
  uint64_t run_count = 0;
};

class BpfRunStats {
 public:
  // Turns statistics on (they cost two clock reads per program run, so only while measured).
  static Result<BpfRunStats> Enable();

  // Sums run time and count over the programs with these ids (ids that are gone count 0).
  static RunTotals Read(const std::vector<uint32_t>& program_ids);

 private:
  explicit BpfRunStats(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

// Ids of the BPF programs a process holds (from /proc/PID/fdinfo: program and link fds)
// whose names start with `name_prefix` ("" for all).
std::vector<uint32_t> ProgramIdsOfProcess(int pid, const std::string& name_prefix = "");

}  // namespace xtrace::bench
