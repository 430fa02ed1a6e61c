// `xtrace daemon`: runs until SIGTERM (or SIGINT) with no capture, and so no cost, until
// asked: serves the control socket (control_server.h) and runs captures into a directory of
// rotated logs (capture_controller.h). On SIGTERM the open capture file is finished.
#pragma once

#include <optional>
#include <string>

#include "daemon/capture_controller.h"

namespace xtrace {

struct DaemonOptions {
  std::string socket_path;
  std::string group;  // members may control captures too (control_access.h); "": root only
  bool allow_users = false;  // anybody else may capture their own processes
  DaemonConfig config;
  std::optional<CaptureOptions> start_with;  // a capture to start at once (node agent, sidecar)
};

// Returns the process exit status: 0 after a clean shutdown, 1 if it could not start.
int RunDaemon(const DaemonOptions& options);

}  // namespace xtrace
