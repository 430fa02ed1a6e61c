// `xtrace daemon` and `xtrace ctl`: option parsing and the hand-over to the daemon library.
#pragma once

namespace xtrace {

// The default control socket of both.
inline constexpr const char* kDefaultControlSocket = "/run/xtrace/xtrace.sock";

// argv[0] is "daemon". Returns the process exit status.
int RunDaemonCommand(int argc, char** argv);

// argv[0] is "ctl". Returns the process exit status.
int RunCtlCommand(int argc, char** argv);

}  // namespace xtrace
