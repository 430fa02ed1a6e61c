// Converter: event log (run.capnp) -> Chrome trace JSON, streamed batch by batch so memory
// stays flat however long the capture was.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "base/status.h"

namespace xtrace {

struct ConvertOptions {
  // Convert what is readable from a damaged log and report the damage in ConvertStats
  // instead of failing.
  bool salvage = false;
  // Called every few thousand events with the input bytes consumed and the input size (if
  // known), for progress display.
  std::function<void(uint64_t bytes_read, std::optional<uint64_t> total)> progress;
};

struct ConvertStats {
  uint64_t events_in = 0;   // events read from the log
  uint64_t events_out = 0;  // JSON trace events written (metadata included)
  uint64_t batches_in = 0;
  uint64_t bytes_written = 0;  // JSON bytes
  bool complete = false;       // the log has its summary (the capture finished cleanly)
  bool salvaged = false;       // damage was found and everything before it converted
  std::string damage;          // what was wrong, when the log is damaged (salvaged or not)
};

// Reads `in_path` and writes Chrome JSON to `out_path` ("-": standard output). Times are
// absolute CLOCK_MONOTONIC microseconds (three decimals = exact ns), as in the log, so
// traces of the same boot line up; header facts go to "otherData". On failure a partial
// output file is removed. `stats` may be null.
Status ConvertLogToChromeJson(const std::string& in_path, const std::string& out_path,
                              const ConvertOptions& options, ConvertStats* stats);

}  // namespace xtrace
