// A large event log shaped like a real launch-heavy capture, for the convert benchmark:
// written with the real LogWriter, so its encoding is exactly what a capture produces.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace xtrace::bench {

// Writes `events` events to `path`: a few processes and threads with their names, kernel
// creations (some with ~1,000-character names), then launches spread over the threads with
// realistic handles (a few kernels and command lists per thread, a pool of signal events),
// group counts and timing (a launch every ~1 us, each taking a few hundred ns). Deterministic.
// With `device_ops`, each launch is followed by the DeviceOp it ran as (three in four
// measured), on one engine per thread: the shape `xtrace report` reads.
Status WriteSyntheticLaunchLog(const std::string& path, uint64_t events, bool device_ops = false);

// Reading a log in this process, as every command that takes one does (LogReader::NextEvent to the
// end): how many events and how much CPU time of this thread it took.
struct LogReadRun {
  uint64_t events = 0;
  double cpu_seconds = 0;
  double events_per_s() const { return cpu_seconds > 0 ? double(events) / cpu_seconds : 0; }
};
Result<LogReadRun> TimeLogRead(const std::string& path);

}  // namespace xtrace::bench
