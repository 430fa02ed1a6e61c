// Facts about the capturing host for the log header: names, boot id and clock anchors.
#pragma once

#include <string>

#include "model/log_header.h"

namespace xtrace {

// Reads CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW and CLOCK_REALTIME back to back. The
// monotonic clock is read on both sides of the others and averaged, halving the skew.
ClockAnchor ReadClockAnchor();

// Fills everything but format_version (the writer's) from this host.
LogHeader MakeLogHeader(const std::string& xtrace_command_line);

}  // namespace xtrace
