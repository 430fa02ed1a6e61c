// What a log says about the capture as a whole: written first (header) and last (summary).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace xtrace {

// One reading of the three host clocks taken back to back, so times in one can be mapped
// to the others (BPF stamps CLOCK_MONOTONIC; Level Zero reports CLOCK_MONOTONIC_RAW).
struct ClockAnchor {
  uint64_t monotonic_ns = 0;
  uint64_t monotonic_raw_ns = 0;
  uint64_t realtime_ns = 0;
};

struct LogHeader {
  uint32_t format_version = 0;   // set by the writer to its kLogFormatVersion
  std::string xtrace_version;
  std::string host;              // hostname
  std::string kernel_release;    // uname -r
  std::string boot_id;           // /proc/sys/kernel/random/boot_id
  std::string command_line;      // xtrace's own command line
  ClockAnchor start_clock;
};

// One process's share of a capture (the per-process summary).
struct ProcessCaptureStats {
  uint32_t pid = 0;
  std::string comm;
  std::vector<std::pair<std::string, uint64_t>> records_by_source;  // ("Level Zero", 120), ...
  uint64_t dropped = 0;  // its records lost in the ring buffer
};

// Written when a capture ends cleanly; a log without it was cut short (e.g. SIGKILL).
struct LogSummary {
  ClockAnchor end_clock;
  uint64_t events = 0;
  uint64_t dropped = 0;          // records lost in the ring buffer
  uint32_t processes = 0;
  std::vector<ProcessCaptureStats> process_stats;  // processes with records or drops
  std::vector<std::pair<std::string, uint64_t>> dropped_by_source;  // ("DRM", 12), ... if any
  // What the capture said once about what it could not trace (e.g. the entry points a Level
  // Zero loader lacks), each a sentence without its final period.
  std::vector<std::string> notes;
};

}  // namespace xtrace
