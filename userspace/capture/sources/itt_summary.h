// The ITT part of the capture's closing summary: labels captured, unbalanced input, and
// what pause/resume/detach did.
#pragma once

#include <cstdint>
#include <string>

#include "correlate/itt_correlator.h"

namespace xtrace {

// Sentences to append to the summary (each starting with a space), or "" when the capture
// saw no ITT activity. `paused_hits`: probe hits skipped while a process was paused.
std::string SummarizeItt(const IttStats& stats, uint64_t paused_hits);

}  // namespace xtrace
