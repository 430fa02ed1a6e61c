// `xtrace attach` and `xtrace record`: option parsing and the hand-over to the capture loop.
#pragma once

namespace xtrace {

// argv[0] is "attach" or "record". Returns the process exit code.
int RunCaptureCommand(int argc, char** argv);

}  // namespace xtrace
