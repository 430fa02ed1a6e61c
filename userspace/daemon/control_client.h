// `xtrace ctl`'s end of the control socket: connects to the daemon, makes one call, and
// renders the answer as text for a person.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "capture/capture_options.h"

namespace xtrace {

enum class ControlVerb { kStart, kStop, kStatus, kList };

// Calls `verb` on the daemon listening at `socket_path` (`request` is used by kStart).
// Returns the text to print, or the daemon's (or the connection's) error.
Result<std::string> CallDaemon(const std::string& socket_path, ControlVerb verb,
                               const CaptureOptions& request);

// The daemon's status as a program needs it: whether a capture runs, which one (its start
// and its owner tell one capture from the next), and how the last one ended.
struct DaemonCaptureState {
  bool capturing = false;
  uint64_t started_realtime_ns = 0;  // of the running (or last) capture
  uint32_t owner_uid = 0;
  std::string slurm_job;             // the --slurm-job it was asked for, if any
  std::string last_result;           // its summary ("xtrace: captured ..."), or its error
};
Result<DaemonCaptureState> AskCaptureState(const std::string& socket_path);

// Waits until the daemon's capture has ended (by its --duration, or its targets gone), asking
// its status a few times a second, at most `timeout_ns`. Returns how it ended (its summary, or
// the error it ended with, as an error).
Result<std::string> WaitForCaptureEnd(const std::string& socket_path, uint64_t timeout_ns);

}  // namespace xtrace
