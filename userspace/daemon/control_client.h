// `xtrace ctl`'s end of the control socket: connects to the daemon, makes one call, and
// renders the answer as text for a person.
#pragma once

#include <string>

#include "base/status.h"
#include "capture/capture_options.h"

namespace xtrace {

enum class ControlVerb { kStart, kStop, kStatus, kList };

// Calls `verb` on the daemon listening at `socket_path` (`request` is used by kStart).
// Returns the text to print, or the daemon's (or the connection's) error.
Result<std::string> CallDaemon(const std::string& socket_path, ControlVerb verb,
                               const CaptureOptions& request);

// Waits until the daemon's capture has ended (by its --duration, or its targets gone), asking
// its status a few times a second, at most `timeout_ns`. Returns how it ended (its summary, or
// the error it ended with, as an error).
Result<std::string> WaitForCaptureEnd(const std::string& socket_path, uint64_t timeout_ns);

}  // namespace xtrace
