// The command `xtrace record` launched, seen from the command line's side: xtrace stays its
// parent however the capture ends (an error such as a full disk, --duration, a signal), waits
// for it and exits with its status, as strace and perf record do, so a shell never sees
// xtrace return while the command runs on orphaned.
#pragma once

#include <sys/types.h>

#include <string>

#include "base/status.h"

namespace xtrace {

// Where execvp would find `name` (a path, or a name searched in `path_env`, the PATH, with
// execvp's default when unset): checked before a capture loads anything, so that a mistyped
// command fails at once, as a shell's "command not found" does, with no probes loaded and
// no log written. The error names the command and what is wrong (not found, and where it
// was looked for; not executable; a directory).
Result<std::string> FindCommand(const std::string& name, const char* path_env);

// SIGINT, SIGTERM and SIGHUP end the capture cleanly. One sent to xtrace by a process (kill)
// is also passed on to the launched command, if any; one from the terminal (Ctrl-C) reached
// the command already, being sent to the whole foreground process group.
void InstallCaptureStopHandlers();

// From now on, signals sent to xtrace are passed on to `pid` (the launched command).
void ForwardStopSignalsTo(pid_t pid);

// Waits for the launched command `pid` to exit and reaps it. When it is still running, says
// so on stderr first (unless `quiet`).
// Returns xtrace's exit code: the command's exit status, or 128 + N when signal N killed it
// (as a shell reports it); 1, with a line saying why, if it cannot be waited for.
int WaitForLaunchedCommand(pid_t pid, const std::string& name, bool quiet);

// A wait(2) status as a shell's exit code: the status, or 128 + the signal.
int ShellExitCode(int wait_status);

}  // namespace xtrace
