// `xtrace daemon` and `xtrace ctl`: option parsing and the hand-over to the daemon library.
#pragma once

#include <string>

#include "base/status.h"
#include "daemon/control_client.h"
#include "daemon/daemon.h"

namespace xtrace {

// The default control socket of both.
inline constexpr const char* kDefaultControlSocket = "/run/xtrace/xtrace.sock";

// What a daemon command line asks for.
struct DaemonCommandLine {
  bool help = false;  // print DaemonCommandHelp and run nothing
  DaemonOptions options;
};

// argv[0] is "daemon". The error is the one-line usage error.
Result<DaemonCommandLine> ParseDaemonCommandLine(int argc, char** argv);
std::string DaemonCommandHelp();

// What a ctl command line asks for.
struct CtlCommandLine {
  bool help = false;  // print CtlCommandHelp and call nothing
  std::string socket_path;
  ControlVerb verb = ControlVerb::kStatus;
  CaptureOptions request;  // of start
};

// argv[0] is "ctl"; the socket defaults to `default_socket`. The error is the usage error.
Result<CtlCommandLine> ParseCtlCommandLine(int argc, char** argv,
                                           const std::string& default_socket);
std::string CtlCommandHelp();

// argv[0] is "daemon". Returns the process exit status.
int RunDaemonCommand(int argc, char** argv);

// argv[0] is "ctl". Returns the process exit status.
int RunCtlCommand(int argc, char** argv);

}  // namespace xtrace
