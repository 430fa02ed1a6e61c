// Options of `xtrace daemon` and `xtrace ctl`.
#include "cli/daemon_command.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/args.h"
#include "cli/capture_options.h"
#include "daemon/control_client.h"
#include "daemon/daemon.h"

namespace xtrace {
namespace {

constexpr const char* kDaemonHelp = R"(Usage: xtrace daemon [options] [TARGET...]

Runs until SIGTERM or SIGINT, costing nothing while no capture runs (no BPF program is
loaded). `xtrace ctl` starts and stops captures through a Unix socket that only root can use.
Captures are written to the output directory as a series of complete logs, a new one when a
file reaches --max-file-size or --max-file-age; the file being written ends in .capnp.part
and is renamed *.capnp once finished. SIGTERM finishes the open file before exiting.
With TARGET options, a capture of them starts at once (for a node agent or a sidecar).

CONTROL
      --socket PATH      control socket (default /run/xtrace/xtrace.sock)

OUTPUT
      --output-dir DIR   where capture files go (default /var/lib/xtrace)
      --max-file-size SIZE
                         start a new file once one reaches SIZE (default 256M)
      --max-file-age TIME
                         start a new file once one is TIME old (default 1h)
      --max-files N      keep at most N finished files, deleting the oldest (default: all)
  -q, --quiet            no capture progress on stderr

%s
CAPTURE
%s
ADVANCED
%s
Examples:
  sudo xtrace daemon --output-dir /var/lib/xtrace --max-files 48 &
  sudo xtrace ctl start --system
  sudo xtrace ctl status
  sudo xtrace ctl stop
  sudo xtrace daemon --output-dir /traces --system      # node agent: capture from the start

Exit status: 0 after SIGTERM/SIGINT, 1 if it cannot start, 2 on a usage error.
)";

constexpr const char* kCtlHelp = R"(Usage: xtrace ctl [--socket PATH] start TARGET... [options]
       xtrace ctl [--socket PATH] stop | status | list

Controls a running `xtrace daemon` (root only):
  start    start a capture of TARGET (one at a time)
  stop     stop it; its last file is finished before this returns
  status   what is being captured: file, events, drops, processes, BPF links
  list     the capture files in the daemon's output directory

      --socket PATH      the daemon's control socket (default: $XTRACE_SOCKET, or
                         /run/xtrace/xtrace.sock)

%s
CAPTURE (start)
%s
ADVANCED (start)
%s
Examples:
  sudo xtrace ctl start --container 3f2a9c1b7e --duration 5m
  sudo xtrace ctl start --comm python3 --follow-children
  sudo xtrace ctl list

Exit status: 0 on success, 1 if the daemon cannot be reached or refuses, 2 on a usage error.
)";

int UsageError(const char* cmd, const std::string& message) {
  std::fprintf(stderr, "xtrace %s: %s\nTry 'xtrace %s --help'.\n", cmd, message.c_str(), cmd);
  return 2;
}

bool HasTarget(const CaptureOptions& o) {
  return !o.pids.empty() || o.system || !o.comm.empty() || !o.cgroup.empty() ||
         !o.container.empty();
}

}  // namespace

int RunDaemonCommand(int argc, char** argv) {
  DaemonOptions options;
  options.socket_path = kDefaultControlSocket;
  options.config.output_dir = "/var/lib/xtrace";
  options.config.rotation.max_file_bytes = 256ull << 20;
  options.config.rotation.max_file_age_ns = 3600ull * 1000000000ull;
  CaptureOptions capture;
  std::string error;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "-h" || a == "--help") {
      std::printf(kDaemonHelp, kTargetOptionsHelp, kDurationHelp, kTuningHelp);
      return 0;
    } else if (a == "--socket" || a == "--output-dir") {
      const char* v = value();
      if (!v || !*v) return UsageError("daemon", a + " needs a path");
      (a == "--socket" ? options.socket_path : options.config.output_dir) = v;
    } else if (a == "--max-file-size") {
      const char* v = value();
      if (!v) return UsageError("daemon", a + " needs a size (e.g. 256M)");
      auto s = ParseSize(a, v);
      if (!s.ok()) return UsageError("daemon", s.status().message());
      options.config.rotation.max_file_bytes = *s;
    } else if (a == "--max-file-age") {
      const char* v = value();
      if (!v) return UsageError("daemon", a + " needs a time (e.g. 1h)");
      auto d = ParseDuration(a, v);
      if (!d.ok()) return UsageError("daemon", d.status().message());
      options.config.rotation.max_file_age_ns = *d;
    } else if (a == "--max-files") {
      const char* v = value();
      char* end = nullptr;
      const unsigned long n = v ? std::strtoul(v, &end, 10) : 0;
      if (!v || *end || n == 0 || n > 1000000)
        return UsageError("daemon", "--max-files needs a count from 1 to 1000000");
      options.config.rotation.max_files = static_cast<uint32_t>(n);
    } else if (a == "-q" || a == "--quiet") {
      options.config.quiet = true;
    } else if (auto m = ParseTargetOption(argc, argv, i, capture, &error); m != OptionMatch::kNotMine) {
      if (m == OptionMatch::kError) return UsageError("daemon", error);
    } else if (auto t = ParseTuningOption(argc, argv, i, capture, &error); t != OptionMatch::kNotMine) {
      if (t == OptionMatch::kError) return UsageError("daemon", error);
    } else {
      return UsageError("daemon", "unknown option '" + a + "'");
    }
  }
  if (HasTarget(capture)) {
    capture.xtrace_command_line = "xtrace daemon";
    options.start_with = capture;
  }
  return RunDaemon(options);
}

int RunCtlCommand(int argc, char** argv) {
  std::string socket_path = kDefaultControlSocket;
  if (const char* env = std::getenv("XTRACE_SOCKET")) socket_path = env;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::printf(kCtlHelp, kTargetOptionsHelp, kDurationHelp, kTuningHelp);
      return 0;
    }
    if (a != "--socket") break;
    if (++i >= argc || !*argv[i]) return UsageError("ctl", "--socket needs a path");
    socket_path = argv[i];
  }
  if (i >= argc) return UsageError("ctl", "give a command: start, stop, status or list");
  const std::string verb_name = argv[i];
  ControlVerb verb;
  if (verb_name == "start") verb = ControlVerb::kStart;
  else if (verb_name == "stop") verb = ControlVerb::kStop;
  else if (verb_name == "status") verb = ControlVerb::kStatus;
  else if (verb_name == "list") verb = ControlVerb::kList;
  else return UsageError("ctl", "unknown command '" + verb_name + "' (start, stop, status, list)");

  CaptureOptions request;
  std::string error;
  for (++i; i < argc; ++i) {
    const std::string a = argv[i];
    if (verb != ControlVerb::kStart) return UsageError("ctl", verb_name + " takes no options ('" + a + "')");
    if (auto m = ParseTargetOption(argc, argv, i, request, &error); m != OptionMatch::kNotMine) {
      if (m == OptionMatch::kError) return UsageError("ctl", error);
    } else if (auto t = ParseTuningOption(argc, argv, i, request, &error); t != OptionMatch::kNotMine) {
      if (t == OptionMatch::kError) return UsageError("ctl", error);
    } else {
      return UsageError("ctl", "unknown option '" + a + "'");
    }
  }
  if (verb == ControlVerb::kStart && !HasTarget(request))
    return UsageError("ctl", "start needs a target: --pid, --system, --comm, --cgroup or --container");

  auto reply = CallDaemon(socket_path, verb, request);
  if (!reply.ok()) {
    std::fprintf(stderr, "xtrace ctl: %s\n", reply.status().message().c_str());
    return 1;
  }
  std::fputs(reply->c_str(), stdout);
  return 0;
}

}  // namespace xtrace
