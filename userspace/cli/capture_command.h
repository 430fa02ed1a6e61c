// `xtrace attach` and `xtrace record`: option parsing and the hand-over to the capture loop.
#pragma once

#include <string>

#include "base/status.h"
#include "capture/capture_options.h"

namespace xtrace {

// What a capture command line asks for.
struct CaptureCommandLine {
  bool help = false;  // print CaptureCommandHelp and run nothing
  CaptureOptions options;
};

// argv[0] is "attach" or "record". The error is the one-line usage error.
Result<CaptureCommandLine> ParseCaptureCommandLine(int argc, char** argv);

// The --help text of "attach" or "record".
std::string CaptureCommandHelp(const std::string& command);

// argv[0] is "attach" or "record". Returns the process exit code.
int RunCaptureCommand(int argc, char** argv);

}  // namespace xtrace
