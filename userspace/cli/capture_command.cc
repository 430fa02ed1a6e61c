// Options of the capture commands, validated before anything is loaded or launched.
#include "cli/capture_command.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "capture/capture_session.h"
#include "cli/capture_options.h"
#include "cli/launched_command.h"
#include "cli/option_table.h"
#include "cli/output_template.h"
#include "report/top_kernels.h"

namespace xtrace {
namespace {

CommandDoc AttachDoc() {
  return {
      .command = "attach",
      .usage = {"TARGET... [options]"},
      .description = R"(Traces the Level Zero calls (and, from them, the device activity) of processes that are
already running (and, with --system, --comm, --cgroup or --container, of matching processes
as they start), without restarting them, and the DRM ioctls (i915, xe) they make to the GPU
kernel driver. Capture ends on Ctrl-C (SIGINT) or SIGTERM, after --duration, or when every
process given by --pid has exited; a summary follows, with a line per process. A process that
has not loaded Level Zero yet is watched and traced from the moment it does.
)",
      .groups = CaptureHelpGroups(),
      .notes = R"(ITT labels (oneDNN primitives, TBB algorithms, __itt_* calls) are captured from processes
started with xtrace's collector in INTEL_LIBITTNOTIFY64 (see 'xtrace env'); PyTorch's
emit_itt() ranges need nothing. Capturing needs root (or CAP_BPF + CAP_PERFMON +
CAP_SYS_PTRACE).
)",
      .examples = {
          "sudo xtrace attach --pid 4242 -o run.capnp            # until Ctrl-C",
          "sudo xtrace attach -p 4242 -p 4243 --duration 30s     # two processes, 30 seconds",
          "sudo xtrace attach -p 4242 --drm-only                  # its GPU driver calls alone",
          "sudo xtrace attach -p 4242 --no-query                  # never write to the process",
          "sudo xtrace attach -p 4242 --driver-tables             # also tables taken before the attach",
          "sudo xtrace attach --comm python3 --follow-children   # every python3, and its workers",
          "sudo xtrace attach --container 3f2a9c1b7e -o pod.capnp",
          "xtrace convert run.capnp -o run.json                   # then open in ui.perfetto.dev",
      },
      .exit_status = R"(Exit status: 0 on success, 1 on error (or when no process given by --pid loaded Level Zero),
2 on a usage error.
)",
  };
}

CommandDoc RecordDoc() {
  return {
      .command = "record",
      .usage = {"[options] [--] COMMAND [ARG...]", "--system [options]"},
      .description = R"(Launches COMMAND and traces its Level Zero calls, its device activity and its DRM ioctls
(i915, xe) from its first call, and those of its children (--no-follow-children: the command
alone). Capture ends when the command and its children have exited, on Ctrl-C (which the
command receives too), SIGTERM (passed on to the command) or --duration (the command keeps
running, and record waits for it). With --system (or
--comm, --cgroup, --container) and no command, it traces every matching process on the
machine, those started later included, until stopped.
)",
      .groups = CaptureHelpGroups(),
      .notes = R"(With INTEL_LIBITTNOTIFY64 pointing at xtrace's collector (see 'xtrace env'), the command's ITT
labels (oneDNN primitives, TBB algorithms, __itt_* calls) are captured from its first call.
)",
      .examples = {
          "sudo xtrace record -o train.capnp -- python train.py --epochs 1",
          "sudo ZE_ENABLE_ALT_DRIVERS=$PWD/build/lib/libxtrace_simze.so \\",
          "     xtrace record -- build/bin/ze_workload --iterations 100",
          "sudo INTEL_LIBITTNOTIFY64=$PWD/build/lib/libxtrace_itt.so \\",
          "     xtrace record --start-paused -- ./app          # only what app resumes",
          "sudo xtrace record --drm-only -o media.capnp -- ffmpeg -hwaccel vaapi -i in.mp4 out.mp4",
          "sudo xtrace record --system -o node.capnp --duration 60s",
          "sudo mpirun -n 4 xtrace record -o 'run.%r.capnp' -- ./app   # a log per rank",
          "xtrace report run.*.capnp                              # with the slowest rank per kernel",
          "xtrace convert train.capnp                             # writes train.json",
      },
      .exit_status = R"(Exit status: once COMMAND runs, its own (128 + N if signal N killed it): record waits for
it however the capture ends (an error such as a full disk, --duration, a signal), and passes
on SIGINT, SIGTERM and SIGHUP sent to xtrace. Otherwise 0 on success, 1 on error, 2 on a
usage error, 127 if COMMAND cannot be run.
)",
  };
}

// True when processes are chosen by what they are (and so may come and go), not given.
bool SelectsProcesses(const CaptureOptions& o) {
  return o.system || !o.comm.empty() || !o.cgroup.empty() || !o.container.empty() ||
         !o.slurm_job.empty();
}

// The options of attach and record: the capture options and where they write.
OptionTable CaptureCommandTable(CaptureOptions& options) {
  return Concat(CaptureOptionTable(options), LocalOutputOptionTable(options));
}

}  // namespace

std::string CaptureCommandHelp(const std::string& command) {
  CaptureOptions unused;
  return RenderHelp(command == "record" ? RecordDoc() : AttachDoc(), CaptureCommandTable(unused));
}

Result<CaptureCommandLine> ParseCaptureCommandLine(int argc, char** argv) {
  const std::string cmd = argv[0];
  const bool record = cmd == "record";
  CaptureCommandLine line;
  CaptureOptions& opt = line.options;
  opt.xtrace_command_line = "xtrace";
  for (int i = 0; i < argc; ++i) opt.xtrace_command_line += std::string(" ") + argv[i];

  auto parsed = ParseCommandLine(CaptureCommandTable(opt), std::span(argv + 1, argc - 1),
                                 record ? Positionals::kEndOptions : Positionals::kAnywhere);
  if (!parsed.ok()) return parsed.status();
  if (parsed->help) {
    line.help = true;
    return line;
  }
  const bool selects = SelectsProcesses(opt);
  if (record) {
    opt.command = parsed->positionals;
    if (opt.command.empty() && !selects)
      return Status::Error("no command to run (or give --system, --comm, --cgroup, --container)");
  } else if (!parsed->positionals.empty()) {
    const std::string& a = parsed->positionals[0];
    return Status::Error("unexpected argument '" + a + "' (did you mean --pid " + a + "?)");
  } else if (opt.pids.empty() && !selects) {
    return Status::Error("no target: give --pid PID, --system, --comm, --cgroup, --container or "
                         "--slurm-job");
  }
  if (opt.output_path.empty()) {
    if (!opt.command.empty()) opt.output_path = "xtrace-record.capnp";
    else if (opt.pids.size() == 1 && !selects) opt.output_path = "xtrace-" + std::to_string(opt.pids[0]) + ".capnp";
    else opt.output_path = "xtrace-system.capnp";
  }
  auto expanded = ExpandOutputTemplate(opt.output_path, CurrentOutputTemplateValues());
  if (!expanded.ok()) return expanded.status().WithContext("--output");
  // The log's header names its capture by this line: `mpirun -n 4 xtrace record -o
  // 'run.%r.capnp'` runs one capture per rank with one command line, which a merged trace
  // would take for one capture (its ranks' GPU queues drawn on one track). The file it
  // writes tells them apart.
  if (*expanded != opt.output_path) opt.xtrace_command_line += " (output " + *expanded + ")";
  opt.output_path = *expanded;
  return line;
}

int RunCaptureCommand(int argc, char** argv) {
  const std::string cmd = argv[0];
  auto line = ParseCaptureCommandLine(argc, argv);
  if (!line.ok()) return UsageError(cmd, line.status().message());
  if (line->help) {
    std::fputs(CaptureCommandHelp(cmd).c_str(), stdout);
    return 0;
  }
  CaptureOptions& opt = line->options;
  const bool selects = SelectsProcesses(opt);
  // A command that cannot be run fails before probes load (seconds of verifier work) and
  // before its log is created, as a shell would fail it.
  if (!opt.command.empty()) {
    if (auto found = FindCommand(opt.command[0], std::getenv("PATH")); !found.ok()) {
      std::fprintf(stderr, "xtrace %s: %s\n", cmd.c_str(), found.status().message().c_str());
      return 127;
    }
  }
  InstallCaptureStopHandlers();
  pid_t command_pid = 0;
  opt.on_command_started = [&command_pid](int pid) {
    command_pid = pid;
    ForwardStopSignalsTo(pid);
  };
  opt.summary_tap = [] { return std::make_unique<report::TopKernels>(); };
  auto report = RunCapture(opt);
  if (!report.ok())
    std::fprintf(stderr, "xtrace %s: %s\n", cmd.c_str(), report.status().message().c_str());
  // Whatever ended the capture, a launched command is waited for: its status is record's.
  if (command_pid > 0) return WaitForLaunchedCommand(command_pid, opt.command[0], opt.quiet);
  if (!report.ok()) return report.status().message().rfind("cannot run", 0) == 0 ? 127 : 1;
  // Given processes that never loaded anything to probe: nothing was captured, say so.
  const bool given = !opt.pids.empty() || !opt.command.empty();
  if (given && !selects && report->processes_attached == 0) return 1;
  return 0;
}

}  // namespace xtrace
