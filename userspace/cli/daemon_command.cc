// Options of `xtrace daemon` and `xtrace ctl`.
#include "cli/daemon_command.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli/args.h"
#include "cli/capture_options.h"
#include "cli/option_table.h"

namespace xtrace {
namespace {

using Flag = const std::string&;
using Value = const std::string&;

Status Path(Flag flag, Value value, std::string& into) {
  if (value.empty()) return Status::Error(flag + ": '' is not a path");
  into = value;
  return Status::Ok();
}

// The socket option of both commands.
Option SocketOption(std::string& socket_path, const std::string& help) {
  return {0, "--socket", "PATH", "CONTROL", help,
          [&socket_path](Flag flag, Value value) { return Path(flag, value, socket_path); }};
}

// The daemon's own options: its socket and its rotated output.
OptionTable DaemonOptionTable(DaemonOptions& d) {
  RotationPolicy& rotation = d.config.rotation;
  return {
      SocketOption(d.socket_path, "control socket (default /run/xtrace/xtrace.sock)"),
      {0, "--group", "NAME", "CONTROL",
       "let members of group NAME control captures too (default: root only); the socket "
       "becomes root:NAME mode 0660, and a directory the daemon makes for it 0710",
       [&d](Flag flag, Value value) {
         if (value.empty()) return Status::Error(flag + ": '' is not a group");
         d.group = value;
         return Status::Ok();
       }},
      {0, "--allow-users", "", "CONTROL",
       "let anybody capture their own processes (a node daemon on a shared cluster): the "
       "socket becomes mode 0666; a client that is neither root nor in --group may capture "
       "only processes whose real, effective and saved uid are its own, into a directory it "
       "names, written as itself; another user's process named is refused",
       SetTrue(d.allow_users)},
      {0, "--output-dir", "DIR", "OUTPUT", "where capture files go (default /var/lib/xtrace)",
       [&d](Flag flag, Value value) { return Path(flag, value, d.config.output_dir); }},
      {0, "--max-file-size", "SIZE", "OUTPUT", "start a new file once one reaches SIZE (default 256M)",
       StoreParsed(rotation.max_file_bytes, ParseSize)},
      {0, "--max-file-age", "TIME", "OUTPUT", "start a new file once one is TIME old (default 1h)",
       StoreParsed(rotation.max_file_age_ns, ParseDuration)},
      {0, "--max-files", "N", "OUTPUT",
       "keep at most N finished files, deleting the oldest (default: all)",
       StoreParsed(rotation.max_files,
                   [](Flag flag, Value value) { return ParseCount(flag, value, 1, 1000000); })},
      {'q', "--quiet", "", "OUTPUT", "no capture progress on stderr",
       SetTrue(d.config.quiet)},
  };
}

// The daemon's socket first, then the capture options' sections.
std::vector<HelpGroup> DaemonHelpGroups() {
  std::vector<HelpGroup> groups = {{"CONTROL", ""}};
  for (const HelpGroup& g : CaptureHelpGroups()) groups.push_back(g);
  return groups;
}

CommandDoc DaemonDoc() {
  return {
      .command = "daemon",
      .usage = {"[options] [TARGET...]"},
      .description = R"(Runs until SIGTERM or SIGINT, costing nothing while no capture runs (no BPF program is
loaded). `xtrace ctl` starts and stops captures through a Unix socket that only root (and the
members of --group NAME, if given) can use: the socket file's mode and owner keep others
out, and the daemon checks each client's credentials (SO_PEERCRED) as well, so a socket whose
mode was loosened or that is reached some other way still serves no one else.
With --allow-users anybody may connect and capture their own processes (their jobs on a
cluster node): the daemon checks the uids of every process it would capture, at the start and
each one that starts later, writes the files into the directory the user names as that user,
and refuses a request that names another user's process or job.
Captures are written to the output directory as a series of complete logs, a new one when a
file reaches --max-file-size or --max-file-age; the file being written ends in .capnp.part
and is renamed *.capnp once finished. SIGTERM finishes the open file before exiting.
With TARGET options, a capture of them starts at once (for a node agent or a sidecar); the
other capture options apply to it.
)",
      .groups = DaemonHelpGroups(),
      .notes = "",
      .examples = {
          "sudo xtrace daemon --output-dir /var/lib/xtrace --max-files 48 &",
          "sudo xtrace ctl start --system",
          "sudo xtrace ctl status",
          "sudo xtrace ctl stop",
          "sudo xtrace daemon --group xtrace &   # members of group xtrace may run xtrace ctl",
          "sudo xtrace daemon --output-dir /traces --system      # node agent: capture from the start",
          "sudo xtrace daemon --allow-users &   # cluster node: users capture their own jobs",
      },
      .exit_status = "Exit status: 0 after SIGTERM/SIGINT, 1 if it cannot start, 2 on a usage error.\n",
  };
}

CommandDoc CtlDoc() {
  return {
      .command = "ctl",
      .usage = {"[--socket PATH] start TARGET... [options]",
                "[--socket PATH] stop | status | list"},
      .description = R"(Controls a running `xtrace daemon` (root, a member of its --group, or with its
--allow-users anybody, for their own processes into a directory of theirs: -o DIR):
  start    start a capture of TARGET (one at a time), with the capture options of attach
  stop     stop it; its last file is finished before this returns
  status   what is being captured: file, events, drops, processes, BPF links
  list     the capture files in the daemon's output directory
)",
      .groups = DaemonHelpGroups(),
      .notes = "",
      .examples = {
          "sudo xtrace ctl start --container 3f2a9c1b7e --duration 5m",
          "sudo xtrace ctl start --comm python3 --follow-children --no-drm",
          "sudo xtrace ctl list",
          "xtrace ctl start --slurm-job 4242 --duration 10s -o $PWD/trace   # as the job's user",
      },
      .exit_status = "Exit status: 0 on success, 1 if the daemon cannot be reached or refuses, 2 on a usage error.\n",
  };
}

// ctl start's own options besides the capture's.
OptionTable CtlStartOptionTable(CaptureOptions& request) {
  return {{'o', "--output-dir", "DIR", "OUTPUT",
           "write this capture's files into DIR (made if missing) as yourself, not into the "
           "daemon's directory; required of anybody but root and the daemon's --group",
           [&request](Flag flag, Value value) {
             if (Status st = Path(flag, value, request.output_dir); !st.ok()) return st;
             // The daemon does not share this working directory.
             request.output_dir = std::filesystem::absolute(value).lexically_normal().string();
             return Status::Ok();
           }}};
}

// ctl's options before the verb.
OptionTable CtlOptionTable(std::string& socket_path) {
  return {SocketOption(socket_path,
                       "the daemon's control socket (default: $XTRACE_SOCKET, or "
                       "/run/xtrace/xtrace.sock)")};
}

}  // namespace

std::string DaemonCommandHelp() {
  DaemonOptions unused;
  CaptureOptions unused_capture;
  return RenderHelp(DaemonDoc(), Concat(DaemonOptionTable(unused), CaptureOptionTable(unused_capture)));
}

std::string CtlCommandHelp() {
  std::string unused_socket;
  CaptureOptions unused;
  return RenderHelp(CtlDoc(), Concat(Concat(CtlOptionTable(unused_socket), CaptureOptionTable(unused)),
                                     CtlStartOptionTable(unused)));
}

Result<DaemonCommandLine> ParseDaemonCommandLine(int argc, char** argv) {
  DaemonCommandLine line;
  DaemonOptions& options = line.options;
  options.socket_path = kDefaultControlSocket;
  options.config.output_dir = "/var/lib/xtrace";
  options.config.rotation.max_file_bytes = 256ull << 20;
  options.config.rotation.max_file_age_ns = 3600ull * 1000000000ull;
  CaptureOptions capture;
  auto parsed = ParseCommandLine(Concat(DaemonOptionTable(options), CaptureOptionTable(capture)),
                                 std::span(argv + 1, argc - 1), Positionals::kAnywhere);
  if (!parsed.ok()) return parsed.status();
  if (parsed->help) {
    line.help = true;
    return line;
  }
  if (!parsed->positionals.empty())
    return Status::Error("unexpected argument '" + parsed->positionals[0] + "'");
  if (HasTarget(capture)) {
    capture.xtrace_command_line = "xtrace daemon";
    options.start_with = capture;
  }
  return line;
}

Result<CtlCommandLine> ParseCtlCommandLine(int argc, char** argv,
                                           const std::string& default_socket) {
  CtlCommandLine line;
  line.socket_path = default_socket;
  auto parsed = ParseCommandLine(CtlOptionTable(line.socket_path), std::span(argv + 1, argc - 1),
                                 Positionals::kEndOptions);
  if (!parsed.ok()) return parsed.status();
  if (parsed->help) {
    line.help = true;
    return line;
  }
  const std::vector<std::string>& rest = parsed->positionals;
  if (rest.empty()) return Status::Error("give a command: start, stop, status or list");
  const std::string& verb = rest[0];
  if (verb == "start") line.verb = ControlVerb::kStart;
  else if (verb == "stop") line.verb = ControlVerb::kStop;
  else if (verb == "status") line.verb = ControlVerb::kStatus;
  else if (verb == "list") line.verb = ControlVerb::kList;
  else return Status::Error("unknown command '" + verb + "' (start, stop, status, list)");
  if (line.verb != ControlVerb::kStart) {
    if (rest.size() > 1) return Status::Error(verb + " takes no options ('" + rest[1] + "')");
    return line;
  }

  std::vector<char*> start_args;
  for (size_t i = 1; i < rest.size(); ++i) start_args.push_back(const_cast<char*>(rest[i].c_str()));
  auto start = ParseCommandLine(Concat(CaptureOptionTable(line.request), CtlStartOptionTable(line.request)),
                                start_args, Positionals::kAnywhere);
  if (!start.ok()) return start.status();
  if (start->help) {
    line.help = true;
    return line;
  }
  if (!start->positionals.empty())
    return Status::Error("unexpected argument '" + start->positionals[0] + "'");
  if (!HasTarget(line.request))
    return Status::Error("start needs a target: --pid, --system, --comm, --cgroup, --container "
                         "or --slurm-job");
  return line;
}

int RunDaemonCommand(int argc, char** argv) {
  auto line = ParseDaemonCommandLine(argc, argv);
  if (!line.ok()) return UsageError("daemon", line.status().message());
  if (line->help) {
    std::fputs(DaemonCommandHelp().c_str(), stdout);
    return 0;
  }
  return RunDaemon(line->options);
}

int RunCtlCommand(int argc, char** argv) {
  const char* env = std::getenv("XTRACE_SOCKET");
  auto line = ParseCtlCommandLine(argc, argv, env ? env : kDefaultControlSocket);
  if (!line.ok()) return UsageError("ctl", line.status().message());
  if (line->help) {
    std::fputs(CtlCommandHelp().c_str(), stdout);
    return 0;
  }
  auto reply = CallDaemon(line->socket_path, line->verb, line->request);
  if (!reply.ok()) {
    std::fprintf(stderr, "xtrace ctl: %s\n", reply.status().message().c_str());
    return 1;
  }
  std::fputs(reply->c_str(), stdout);
  return 0;
}

}  // namespace xtrace
