// One capture from start to summary: loads the probes, finds the target processes (given,
// launched, or discovered as they start), attaches probes to their libraries (now, or when
// they load them later), streams records through decode and correlation into the log, and
// stops on a signal, a request, a deadline, or when every target is gone.
#pragma once

#include <csignal>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "capture/capture_options.h"
#include "capture/output/capture_report.h"

namespace xtrace {

// Set from a signal handler to end the capture cleanly.
extern volatile std::sig_atomic_t g_capture_stop;

// Runs a capture to its end. Progress and the closing summary go to stderr (unless quiet).
// An error before anything was captured returns a Status; once capturing, problems are
// reported and everything captured is still written.
Result<CaptureReport> RunCapture(const CaptureOptions& options);

}  // namespace xtrace
