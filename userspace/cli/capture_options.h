// Options shared by attach, record, daemon and ctl start: TARGET (which processes a capture
// traces, see capture/capture_scope.h for how they combine) and how the capture runs
// (duration, buffer size, probe grace period).
#pragma once

#include <string>

#include "capture/capture_options.h"

namespace xtrace {

enum class OptionMatch {
  kNotMine,  // argv[i] is not a target option
  kTaken,    // parsed into the options (i now at its last argument)
  kError,    // a target option with a bad or missing value; *error says what
};

// Parses argv[i] (and its value) if it is a target option.
OptionMatch ParseTargetOption(int argc, char** argv, int& i, CaptureOptions& options,
                              std::string* error);

// Parses argv[i] (and its value) if it is --duration, --buffer-size or --detach-after.
OptionMatch ParseTuningOption(int argc, char** argv, int& i, CaptureOptions& options,
                              std::string* error);

// The TARGET section of --help, and lines for the tuning options.
extern const char* const kTargetOptionsHelp;
extern const char* const kDurationHelp;
extern const char* const kTuningHelp;

}  // namespace xtrace
