// Converter: event log (run.capnp) -> a trace (Chrome JSON or Perfetto protobuf), streamed
// batch by batch so memory stays flat however long the capture was.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/event_selection.h"
#include "model/log_header.h"

namespace xtrace {

enum class TraceFormat { kChromeJson, kPerfetto };

// The format a file name asks for: Perfetto for .pftrace/.perfetto-trace/.pb, else JSON.
TraceFormat FormatForPath(const std::string& path);

struct ConvertOptions {
  TraceFormat format = TraceFormat::kChromeJson;
  // Convert what is readable from a damaged log and report the damage in ConvertStats
  // instead of failing.
  bool salvage = false;
  // Called every few thousand events with the input bytes consumed and the input size (if
  // known), for progress display.
  std::function<void(uint64_t bytes_read, std::optional<uint64_t> total)> progress;
  // What to keep (see export/selected_timeline.h for the window's rules): the window and
  // --name on the trace, --pid and --rank on the processes (a device operation belongs to
  // the process that submitted it).
  EventSelection selection;
};

// A process a log holds, for saying what there was when a selection left nothing.
struct ConvertStats {
  uint64_t events_in = 0;   // events read from the log
  uint64_t events_out = 0;  // trace events written (JSON: metadata included)
  uint64_t batches_in = 0;
  uint64_t batches_skipped = 0;  // read without decoding their spans: outside the window
  uint64_t logs = 0;
  uint64_t hosts = 0;
  uint64_t bytes_written = 0;  // trace bytes, to the file (compressed with .gz)
  uint64_t trace_bytes = 0;    // trace bytes before compression: what a viewer loads
  bool complete = false;       // the log has its summary (the capture finished cleanly)
  bool salvaged = false;       // damage was found and everything before it converted
  std::string damage;          // what was wrong, when the log is damaged (salvaged or not)
  // With a selection: the spans and instants of the traced processes (their calls, ranges,
  // device operations, markers) the trace kept; 0 when the selection left none of them.
  uint64_t selected_kept = 0;
  // With a selection: every process the logs hold, by pid, and how long they ran from the
  // first log's start to the last one's end (when every log has its summary).
  std::map<uint32_t, LoggedProcess> processes;
  std::optional<uint64_t> logged_ns;
};

// Reads `in_path` and writes the trace to `out_path` ("-": standard output). Times are
// absolute CLOCK_MONOTONIC (JSON: microseconds with three decimals = exact ns), as in the
// log, so traces of the same boot line up; header facts go to "otherData" (JSON) or the
// "xtrace capture" event (Perfetto). On failure a partial output file is removed. `stats`
// may be null.
Status ConvertLog(const std::string& in_path, const std::string& out_path,
                  const ConvertOptions& options, ConvertStats* stats);

// Several logs on one time axis (see ConvertLog). Logs of one boot share CLOCK_MONOTONIC;
// logs of other boots (other machines) are moved onto the first log's clock through their
// CLOCK_REALTIME readings, which is as good as the machines' clock synchronization: the
// trace's metadata says so ("clock_alignment"). Each further host's pids and tids are
// renumbered apart (the real ones stay in the names); process names carry the host when
// there are several. The inputs are merged in time order, one batch of each in memory.
Status ConvertLogs(const std::vector<std::string>& in_paths, const std::string& out_path,
                   const ConvertOptions& options, ConvertStats* stats);

// Where logs lie on the time axis ConvertLogs puts them on: the trace's start (the earliest
// log's) and how long after it the last span or log ends. What `--split` cuts into parts.
struct LogsExtent {
  ClockAnchor start;
  uint64_t length_ns = 0;
};
// Reads the logs without decoding a span: a finished log's index steps over its batches, one
// cut short is read by its batches' heads (Batch.endNs). Errors are the readers' (with
// `salvage`, damage ends a log where it is).
Result<LogsExtent> MeasureLogs(const std::vector<std::string>& in_paths, bool salvage);

// ConvertLog to Chrome JSON whatever options.format says.
inline Status ConvertLogToChromeJson(const std::string& in_path, const std::string& out_path,
                                     ConvertOptions options, ConvertStats* stats) {
  options.format = TraceFormat::kChromeJson;
  return ConvertLog(in_path, out_path, options, stats);
}

}  // namespace xtrace
