// Options of the capture commands, validated before anything is loaded or launched.
#include "cli/capture_command.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "capture/capture_session.h"
#include "cli/args.h"
#include "cli/capture_options.h"

namespace xtrace {
namespace {

constexpr const char* kAttachHelp = R"(Usage: xtrace attach TARGET... [options]

Traces the Level Zero calls (and, from them, the device activity) of processes that are
already running (and, with --system, --comm, --cgroup or --container, of matching processes
as they start), without restarting them, and the DRM ioctls (i915, xe) they make to the GPU
kernel driver. Capture ends on Ctrl-C (SIGINT) or SIGTERM, after --duration, or when every
process given by --pid has exited; a summary follows, with a line per process. A process that
has not loaded Level Zero yet is watched and traced from the moment it does.

%s
OUTPUT
  -o, --output FILE      event log to write (default: xtrace-<pid>.capnp, xtrace-system.capnp)
  -q, --quiet            no progress or summary on stderr

CAPTURE
%s      --no-drm           leave out the kernel-driver view (DRM ioctls and fences)
      --drm-only         capture only the kernel-driver view, e.g. of a program that
                         never uses Level Zero (OpenCL, media)
      --start-paused     record nothing until the process calls __itt_resume (VTune's "start
                         paused"); __itt_pause pauses again, __itt_detach ends its capture

ITT labels (oneDNN primitives, TBB algorithms, __itt_* calls) are captured from processes
started with xtrace's collector in INTEL_LIBITTNOTIFY64 (see 'xtrace env'); PyTorch's
emit_itt() ranges need nothing.

ADVANCED
%s      --single-uprobes   one uprobe per probed function instead of one uprobe_multi link per
                         program (what kernels before 6.6 get anyway); slower to detach
      --drm-syscall-tracepoints
                         DRM ioctls from the syscall tracepoints instead of fentry/fexit
                         on ioctl(2) (what kernels without BPF trampolines get anyway); every
                         syscall on the machine then pays for them
  -v, --verbose          more detail on stderr

Examples:
  sudo xtrace attach --pid 4242 -o run.capnp            # until Ctrl-C
  sudo xtrace attach -p 4242 -p 4243 --duration 30s     # two processes, 30 seconds
  sudo xtrace attach -p 4242 --drm-only                  # its GPU driver calls alone
  sudo xtrace attach --comm python3 --follow-children   # every python3, and its workers
  sudo xtrace attach --container 3f2a9c1b7e -o pod.capnp
  xtrace convert run.capnp -o run.json                   # then open in ui.perfetto.dev

Capturing needs root (or CAP_BPF + CAP_PERFMON + CAP_SYS_PTRACE).
Exit status: 0 on success, 1 on error (or when no process given by --pid loaded Level Zero),
2 on a usage error.
)";

constexpr const char* kRecordHelp = R"(Usage: xtrace record [options] [--] COMMAND [ARG...]
       xtrace record --system [options]

Launches COMMAND and traces its Level Zero calls, its device activity and its DRM ioctls
(i915, xe) from its first call, and those of its children (--no-follow-children: the command
alone). Capture ends when the command and its children have exited, on Ctrl-C (which the
command receives too), SIGTERM or --duration. With --system (or --comm, --cgroup,
--container) and no command, it traces every matching process on the machine, those started
later included, until stopped.

%s
OUTPUT
  -o, --output FILE      event log to write (default: xtrace-record.capnp, xtrace-system.capnp)
  -q, --quiet            no progress or summary on stderr

CAPTURE
%s                         (the command keeps running)
      --no-drm           leave out the kernel-driver view (DRM ioctls and fences)
      --drm-only         capture only the kernel-driver view, e.g. of a program that
                         never uses Level Zero (OpenCL, media)
      --start-paused     record nothing until the command calls __itt_resume; __itt_pause
                         pauses again, __itt_detach ends its capture

With INTEL_LIBITTNOTIFY64 pointing at xtrace's collector (see 'xtrace env'), the command's ITT
labels (oneDNN primitives, TBB algorithms, __itt_* calls) are captured from its first call.

ADVANCED
%s      --single-uprobes   one uprobe per probed function instead of uprobe_multi links
      --drm-syscall-tracepoints
                         DRM ioctls from the syscall tracepoints instead of fentry/fexit
  -v, --verbose          more detail on stderr

Examples:
  sudo xtrace record -o train.capnp -- python train.py --epochs 1
  sudo ZE_ENABLE_ALT_DRIVERS=$PWD/build/lib/libxtrace_simze.so \
       xtrace record -- build/bin/ze_workload --iterations 100
  sudo INTEL_LIBITTNOTIFY64=$PWD/build/lib/libxtrace_itt.so \
       xtrace record --start-paused -- ./app          # only what app resumes
  sudo xtrace record --drm-only -o media.capnp -- ffmpeg -hwaccel vaapi -i in.mp4 out.mp4
  sudo xtrace record --system -o node.capnp --duration 60s
  xtrace convert train.capnp                             # writes train.json

Exit status: 0 on success (whatever the command's own status, which the summary reports),
1 on error, 2 on a usage error, 127 if COMMAND cannot be run.
)";

extern "C" void OnStopSignal(int) { g_capture_stop = 1; }

void InstallStopHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: the poll in the capture loop returns at once
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
}

int UsageError(const std::string& cmd, const std::string& message) {
  std::fprintf(stderr, "xtrace %s: %s\nTry 'xtrace %s --help'.\n", cmd.c_str(), message.c_str(),
               cmd.c_str());
  return 2;
}

}  // namespace

int RunCaptureCommand(int argc, char** argv) {
  const std::string cmd = argv[0];
  const bool record = cmd == "record";
  CaptureOptions opt;
  for (int i = 0; i < argc; ++i) {
    if (i) opt.xtrace_command_line += ' ';
    opt.xtrace_command_line += argv[i];
  }
  opt.xtrace_command_line = "xtrace " + opt.xtrace_command_line;

  int i = 1;
  std::string error;
  auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "-h" || a == "--help") {
      std::printf(record ? kRecordHelp : kAttachHelp, kTargetOptionsHelp, kDurationHelp,
                  kTuningHelp);
      return 0;
    }
    if (a == "-q" || a == "--quiet") {
      opt.quiet = true;
    } else if (a == "-v" || a == "--verbose") {
      opt.verbose = true;
    } else if (a == "--no-drm" || a == "--drm-only") {
      const DrmCapture want = a == "--no-drm" ? DrmCapture::kOff : DrmCapture::kOnly;
      if (opt.drm != DrmCapture::kAlongside && opt.drm != want)
        return UsageError(cmd, "--no-drm and --drm-only exclude each other");
      opt.drm = want;
    } else if (a == "--single-uprobes") {
      opt.single_uprobes = true;
    } else if (a == "--drm-syscall-tracepoints") {
      opt.drm_syscall_tracepoints = true;
    } else if (a == "-o" || a == "--output") {
      const char* v = value();
      if (!v) return UsageError(cmd, a + " needs a file name");
      opt.output_path = v;
    } else if (a == "--start-paused") {
      opt.start_paused = true;
    } else if (auto m = ParseTuningOption(argc, argv, i, opt, &error); m != OptionMatch::kNotMine) {
      if (m == OptionMatch::kError) return UsageError(cmd, error);
    } else if (auto m = ParseTargetOption(argc, argv, i, opt, &error); m != OptionMatch::kNotMine) {
      if (m == OptionMatch::kError) return UsageError(cmd, error);
    } else if (!a.empty() && a[0] == '-') {
      return UsageError(cmd, "unknown option '" + a + "'");
    } else if (record) {
      break;  // the command starts here
    } else {
      return UsageError(cmd, "unexpected argument '" + a + "' (did you mean --pid " + a + "?)");
    }
  }
  const bool selects = opt.system || !opt.comm.empty() || !opt.cgroup.empty() ||
                       !opt.container.empty();
  if (record) {
    for (; i < argc; ++i) opt.command.emplace_back(argv[i]);
    if (opt.command.empty() && !selects)
      return UsageError(cmd, "no command to run (or give --system, --comm, --cgroup, --container)");
  } else if (i < argc) {
    return UsageError(cmd, "unexpected argument '" + std::string(argv[i]) + "'");
  } else if (opt.pids.empty() && !selects) {
    return UsageError(cmd, "no target: give --pid PID, --system, --comm, --cgroup or --container");
  }
  if (opt.output_path.empty()) {
    if (!opt.command.empty()) opt.output_path = "xtrace-record.capnp";
    else if (opt.pids.size() == 1 && !selects) opt.output_path = "xtrace-" + std::to_string(opt.pids[0]) + ".capnp";
    else opt.output_path = "xtrace-system.capnp";
  }

  InstallStopHandlers();
  auto report = RunCapture(opt);
  if (!report.ok()) {
    std::fprintf(stderr, "xtrace %s: %s\n", cmd.c_str(), report.status().message().c_str());
    return report.status().message().rfind("cannot run", 0) == 0 ? 127 : 1;
  }
  // Given processes that never loaded anything to probe: nothing was captured, say so.
  const bool given = !opt.pids.empty() || !opt.command.empty();
  if (given && !selects && report->processes_attached == 0) return 1;
  return 0;
}

}  // namespace xtrace
