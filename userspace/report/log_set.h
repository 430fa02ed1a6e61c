// The logs one `xtrace report` reads: arguments expanded (a directory means the *.capnp files
// in it, e.g. a daemon's rotated files), each log streamed once through a ReportAggregator,
// with damage and cut-short logs handled as `xtrace convert` handles them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "log/log_inputs.h"
#include "model/event.h"
#include "model/event_selection.h"
#include "report/report_aggregator.h"

namespace xtrace::report {

using xtrace::ExpandLogInputs;  // log/log_inputs.h

struct LogReadOptions {
  AggregateOptions aggregate;           // from_ns/to_ns are ignored: the window below is used
  std::optional<TimeBound> from;        // window (from each log's start, or wall-clock)
  std::optional<TimeBound> to;
  bool salvage = false;
};

// `options.aggregate` with the window resolved for a log that started at `start`.
AggregateOptions SelectionOf(const LogReadOptions& options, const ClockAnchor& start);

// One log, read and aggregated.
struct LogAggregate {
  std::string path;
  std::string host;
  std::string rank;          // from the traced processes' environment, else "log N"
  bool rank_recorded = false;
  std::set<int32_t> ranks;   // every rank its processes recorded (a node's log holds several)
  uint64_t start_ns = 0;     // CLOCK_MONOTONIC at the capture's start
  uint64_t events = 0;
  bool complete = false;     // the log has its summary
  std::vector<std::string> notes;  // what its capture could not trace (its summary's notes)
  // What its capture lost (its RecordsDropped events, those of the window's time only): the
  // report's tables miss these records.
  RecordsDropped dropped;
  std::string damage;        // with salvage: what stopped reading
  std::unique_ptr<ReportAggregator> aggregator;
};

// A log's damage met without salvage, as the error a report fails with: the reader's message
// (it names the file and where) and that --salvage reports what comes before it. Only damage
// gets that hint: a missing, empty or foreign file has no readable part.
Status DamageError(const Status& damage);

// Reads `path` to its end. `index` (from 0) names the log's rank when no process recorded
// one. Errors are the reader's one-line messages (they name the file).
Result<LogAggregate> AggregateLog(const std::string& path, size_t index, const LogReadOptions& options);

}  // namespace xtrace::report
