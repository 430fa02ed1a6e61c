// The capture option table.
#include "cli/capture_options.h"

#include <unistd.h>

#include <optional>
#include <utility>

#include "cli/args.h"

namespace xtrace {
namespace {

using Flag = const std::string&;
using Value = const std::string&;

// A non-empty text value, for names and paths.
Status Text(Flag flag, Value value, const char* what, std::string& into) {
  if (value.empty()) return Status::Error(flag + ": '' is not " + what);
  into = value;
  return Status::Ok();
}

Status SetDrm(DrmCapture want, DrmCapture& drm) {
  if (drm != DrmCapture::kAlongside && drm != want)
    return Status::Error("--no-drm and --drm-only exclude each other");
  drm = want;
  return Status::Ok();
}

// --probes-per-process or --probes-per-file, not both.
Status SetProbeScope(bool per_file, CaptureOptions& o) {
  if (per_file ? o.probes_per_process : o.probes_per_file)
    return Status::Error("--probes-per-process and --probes-per-file exclude each other");
  (per_file ? o.probes_per_file : o.probes_per_process) = true;
  return Status::Ok();
}

// Milliseconds from 1 to `max_ms`, kept in nanoseconds.
Status SetMs(Flag flag, Value value, uint64_t max_ms, uint64_t& into_ns) {
  auto ms = ParseCount(flag, value, 1, max_ms);
  if (!ms.ok()) return ms.status();
  into_ns = *ms * 1'000'000;
  return Status::Ok();
}

Status SetRingBytes(Flag flag, Value value, uint64_t& ring_bytes) {
  auto size = ParseSize(flag, value);
  if (!size.ok()) return size.status();
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  if ((*size & (*size - 1)) != 0 || *size < page)
    return Status::Error(flag + ": '" + value + "' must be a power of two of at least " +
                         std::to_string(page) + " bytes (e.g. 16M, 64M)");
  ring_bytes = *size;
  return Status::Ok();
}

Status SetIttRingBytes(Flag flag, Value value, uint32_t& ring_bytes) {
  auto size = ParseSize(flag, value);
  if (!size.ok()) return size.status();
  if ((*size & (*size - 1)) != 0 || *size < XT_ITT_RING_MIN_BYTES || *size > XT_ITT_RING_MAX_BYTES)
    return Status::Error(flag + ": '" + value + "' must be a power of two from 64K to 64M (e.g. 1M, 16M)");
  ring_bytes = static_cast<uint32_t>(*size);
  return Status::Ok();
}

// --drm-hook (and its older spelling, --drm-syscall-tracepoints): one hook, however asked.
Status SetDrmHook(Flag flag, Value value, DrmHook& hook) {
  static constexpr std::pair<const char*, DrmHook> kHooks[] = {
      {"auto", DrmHook::kAuto},
      {"fentry", DrmHook::kFentry},
      {"ioctl-tracepoints", DrmHook::kIoctlTracepoints},
      {"syscall-tracepoints", DrmHook::kSyscallTracepoints},
  };
  for (const auto& [name, want] : kHooks) {
    if (value != name) continue;
    if (hook != DrmHook::kAuto && hook != want) {
      const char* before = "";
      for (const auto& [other, asked] : kHooks)
        if (asked == hook) before = other;
      return Status::Error(std::string("DRM hook asked for twice: '") + before + "', then '" +
                           value + "' (" + flag + ")");
    }
    hook = want;
    return Status::Ok();
  }
  return Status::Error(flag + ": '" + value +
                       "' is not a DRM hook (auto, fentry, ioctl-tracepoints, syscall-tracepoints)");
}

// A nice value, -20 to 19, as nice(1) takes it.
Status SetNice(Flag flag, Value value, std::optional<int>& nice) {
  const std::string text = value.starts_with('+') ? value.substr(1) : value;
  if (!text.empty() && text.find_first_not_of("0123456789", text[0] == '-' ? 1 : 0) == std::string::npos &&
      text != "-" && text.size() <= 3) {
    const int n = std::stoi(text);
    if (n >= -20 && n <= 19) {
      nice = n;
      return Status::Ok();
    }
  }
  return Status::Error(flag + ": '" + value + "' is not a nice value (-20 to 19)");
}

}  // namespace

std::vector<HelpGroup> CaptureHelpGroups() {
  return {
      {"TARGET", "combine freely; --cgroup and --container narrow the others"},
      {"OUTPUT", ""},
      {"SOURCES", "default: Level Zero, ITT and the kernel-driver view"},
      {"CAPTURE", ""},
      {"ADVANCED", ""},
  };
}

bool HasTarget(const CaptureOptions& o) {
  return !o.pids.empty() || o.system || !o.comm.empty() || !o.cgroup.empty() ||
         !o.container.empty() || !o.slurm_job.empty();
}

OptionTable CaptureOptionTable(CaptureOptions& o) {
  return {
      {'p', "--pid", "PID", "TARGET", "process to trace (repeatable)",
       [&o](Flag flag, Value value) {
         auto pid = ParsePid(flag, value);
         if (!pid.ok()) return pid.status();
         o.pids.push_back(*pid);
         return Status::Ok();
       }},
      {0, "--system", "", "TARGET",
       "every process that uses Level Zero (or another probed library), including ones "
       "started later and libraries loaded late",
       SetTrue(o.system)},
      {0, "--comm", "NAME", "TARGET", "processes named NAME (as in /proc/PID/comm), now and later",
       [&o](Flag flag, Value value) { return Text(flag, value, "a process name", o.comm); }},
      {0, "--cgroup", "PATH", "TARGET",
       "only processes in this cgroup v2 and below it: a directory under the cgroup2 mount, "
       "or a path as /proc/PID/cgroup shows it; alone, every process in it",
       [&o](Flag flag, Value value) { return Text(flag, value, "a cgroup path", o.cgroup); }},
      {0, "--container", "ID", "TARGET",
       "only processes of this container (id or unique prefix), found in the cgroup "
       "hierarchy (Docker, containerd, CRI-O, Podman)",
       [&o](Flag flag, Value value) { return Text(flag, value, "a container id", o.container); }},
      {0, "--slurm-job", "JOBID", "TARGET",
       "the processes of this Slurm job on this node: its cgroup if Slurm made one (a step "
       "started later is in it too), else the processes whose environment has "
       "SLURM_JOB_ID=JOBID and their children",
       [&o](Flag flag, Value value) { return Text(flag, value, "a Slurm job id", o.slurm_job); }},
      {0, "--slurm-node", "NODE", "TARGET",
       "with --slurm-job: only the job's tasks that slurmd started as node NODE "
       "(SLURMD_NODENAME), for several slurmd on one host (slurmd -N)",
       [&o](Flag flag, Value value) { return Text(flag, value, "a node name", o.slurm_node); }},
      {0, "--slurm-cluster", "CLUSTER", "TARGET",
       "with --slurm-job: only the job's processes of cluster CLUSTER (SLURM_CLUSTER_NAME; a "
       "job id is unique within its cluster only); a process without SLURM_CLUSTER_NAME is "
       "taken by its job id (and --slurm-node) alone, and the capture says which",
       [&o](Flag flag, Value value) { return Text(flag, value, "a cluster name", o.slurm_cluster); }},
      {0, "--user", "USER", "TARGET",
       "only processes of USER (name or uid): their real, effective and saved uid are all "
       "USER's, checked for each running process and every later one (a set-user-ID program "
       "leaves the capture). The daemon applies it by itself to anybody but root and its "
       "--group",
       [&o](Flag flag, Value value) { return Text(flag, value, "a user", o.user); }},
      {0, "--follow-children", "", "TARGET",
       "trace new children of traced processes too (default for a launched command)",
       [&o](Flag, Value) { return o.follow_children = true, Status::Ok(); }},
      {0, "--no-follow-children", "", "TARGET",
       "trace the selected processes alone (default for --pid)",
       [&o](Flag, Value) { return o.follow_children = false, Status::Ok(); }},
      {0, "--probes-per-process", "", "TARGET",
       "with --comm, --cgroup, --container or children (the default) and --system (asked): "
       "probes go into each selected process alone, so a process outside the selection that "
       "uses the same libraries pays nothing; one that starts or loads a library during the "
       "capture is held until its probes are in (unless --no-hold), so it loses no first call",
       [&o](Flag, Value) { return SetProbeScope(false, o); }},
      {0, "--probes-per-file", "", "TARGET",
       "with --comm, --cgroup, --container or children: probes once per library file, for "
       "every process that maps it: fewer links when thousands of processes are selected, but "
       "every process outside the selection that maps the file traps on them (the filter then "
       "drops its calls). The default of --system without a cgroup, where every process is in "
       "scope",
       [&o](Flag, Value) { return SetProbeScope(true, o); }},

      {0, "--no-drm", "", "SOURCES", "leave out the kernel-driver view (DRM ioctls and fences)",
       [&o](Flag, Value) { return SetDrm(DrmCapture::kOff, o.drm); }},
      {0, "--drm-only", "", "SOURCES",
       "capture only the kernel-driver view, e.g. of a program that never uses Level Zero "
       "(OpenCL, media)",
       [&o](Flag, Value) { return SetDrm(DrmCapture::kOnly, o.drm); }},

      {0, "--python-frames", "", "SOURCES",
       "the Python frames of a CPython 3.11-3.13 process's thread on each of its launches, "
       "copies, submissions, synchronizations and ITT tasks (which line of the model made it): "
       "python_function slices in the trace, the line in each device slice, report --by "
       "python. On by default, where a call traps anyway: about 0.6 us per such call at depth "
       "30 on a VM, under a tenth of its trap. Given, it also keeps that process's ITT calls "
       "off the in-process fast path, so that its ITT tasks carry frames too (a trap per ITT "
       "call)",
       [&o](Flag, Value) { return o.python_frames = true, Status::Ok(); }},
      {0, "--no-python-frames", "", "SOURCES",
       "no Python frames at all",
       [&o](Flag, Value) { return o.python_frames = false, Status::Ok(); }},

      {'d', "--duration", "TIME", "CAPTURE", "stop after TIME (e.g. 10, 30s, 500ms, 5m)",
       StoreParsed(o.duration_ns, ParseDuration)},
      {0, "--start-paused", "", "CAPTURE",
       "record nothing until a traced process calls __itt_resume (VTune's \"start paused\"); "
       "__itt_pause pauses again, __itt_detach ends that process's capture",
       SetTrue(o.start_paused)},

      {0, "--no-hold", "", "CAPTURE",
       "never stop a process: by default a process that starts (or loads a library) during the "
       "capture is held, stopped, from its exec or the load until its new files are probed, so "
       "that its first calls are traced (a few ms). Without holds those calls can be lost. "
       "Under --system a program a terminal's shell runs as a job is not held (see "
       "--hold-terminal-jobs)",
       [&o](Flag, Value) { return o.hold = false, Status::Ok(); }},
      {0, "--hold-terminal-jobs", "", "CAPTURE",
       "where each library file is probed once for every process (--system, --probes-per-file), "
       "hold a program a shell with job control runs as a job of its terminal too. Not held by "
       "default, since the shell would report even a millisecond's hold as the job stopping "
       "(\"[1]+ Stopped\", $? = 147, the job sent to the background): the first calls of such "
       "a program into a file new to the capture can be lost instead, and the summary counts "
       "the holds not taken. Probed per process (--comm, --cgroup, children), the programs "
       "selected are held whatever runs them",
       SetTrue(o.hold_terminal_jobs)},
      {0, "--no-query", "", "CAPTURE",
       "never write to a traced process: by default, in a process that was running before the "
       "capture, a launch of a kernel made before the attach stops its thread a moment while "
       "xtrace calls the process's own Level Zero queries (zeKernelGetName; with a 1.9 loader "
       "or newer also the list's device and engine, the queue's engine, the event pool's flags) "
       "through ptrace, everything restored, so that the launch is named, placed and measured. "
       "With --no-query such launches are \"kernel@0x<handle>\" on an unknown device",
       [&o](Flag, Value) { return o.query = false, Status::Ok(); }},
      {0, "--query-max", "MS", "CAPTURE",
       "the longest one thread is held to ask about objects made before the attach, in "
       "milliseconds (default 10000): it asks on while the process answers, each call given up "
       "to 2 s; what is left is asked at a later hold, and launches meanwhile may stay unnamed. "
       "A held thread also waits that long for xtrace to take its hold up",
       [&o](Flag flag, Value value) { return SetMs(flag, value, 600'000, o.query_max_ns); }},
      {0, "--driver-tables", "", "CAPTURE",
       "probe the driver functions the loader's exports lead to in every traced process, "
       "not only in those seen taking the driver's function tables (zeGetKernelProcAddrTable, "
       "...). By default a process that calls a zeGet*ProcAddrTable itself has them probed, "
       "for itself alone, so calls through its tables are captured; one that took its tables "
       "before xtrace saw it (attach) is not, and the summary says so. With this option "
       "those are captured too, but every call through an export then traps twice, and a "
       "trap at a driver function's entry can cost several microseconds more",
       SetTrue(o.driver_tables)},
      {0, "--hold-max", "MS", "CAPTURE",
       "the longest a process is held, in milliseconds (default 500): past it, it goes on "
       "whether or not its probes are in place",
       [&o](Flag flag, Value value) { return SetMs(flag, value, 60'000, o.hold_max_ns); }},

      {0, "--buffer-size", "SIZE", "ADVANCED",
       "BPF ring buffer size, a power of two (default 16M); raise it when the summary reports "
       "dropped events",
       [&o](Flag flag, Value value) { return SetRingBytes(flag, value, o.ring_bytes); }},
      {0, "--itt-ring-size", "SIZE", "ADVANCED",
       "ITT fast-path ring of each thread of a traced program that makes ITT calls, a power of "
       "two from 64K to 64M (default 4M: 36 ms of 2M task begin/end pairs/s). Threads make their "
       "ring at their first call while attached and keep it; a busy thread's ring is resident in "
       "its program. Raise it when the summary says the programs' ITT rings lost calls; lower it "
       "for a program with many threads that each make ITT calls",
       [&o](Flag flag, Value value) { return SetIttRingBytes(flag, value, o.itt_ring_bytes); }},
      {0, "--detach-after", "TIME", "ADVANCED",
       "how long probes stay on a library no traced process uses any more (default 10s), so "
       "that processes started one after another are traced from their first call",
       StoreParsed(o.library_grace_ns, ParseDuration)},
      {0, "--single-uprobes", "", "ADVANCED",
       "one uprobe per probed function instead of one uprobe_multi link per program (what "
       "kernels before 6.6 get anyway); slower to attach and detach",
       SetTrue(o.single_uprobes)},
      {0, "--drm-hook", "HOOK", "ADVANCED",
       "where the DRM ioctl programs attach: 'fentry' (fentry/fexit on ioctl(2): only ioctl "
       "calls pay), 'ioctl-tracepoints' (the syscalls:sys_enter_ioctl/sys_exit_ioctl trace "
       "events, which need tracefs: only ioctl calls run a program, other syscalls take the "
       "kernel's slower traced-syscall path), 'syscall-tracepoints' (raw sys_enter/sys_exit: "
       "every syscall on the machine runs the program). Default 'auto': the first of these "
       "the kernel accepts, in that order",
       [&o](Flag flag, Value value) { return SetDrmHook(flag, value, o.drm_hook); }},
      {0, "--drm-syscall-tracepoints", "", "ADVANCED", "the same as --drm-hook syscall-tracepoints",
       [&o](Flag flag, Value) { return SetDrmHook(flag, "syscall-tracepoints", o.drm_hook); }},
      {0, "--nice", "N", "ADVANCED",
       "the nice value of xtrace's capture loop and ITT drain thread, -20 to 19 (default: -10 "
       "when xtrace runs at nice 0, so that on a busy core it drains events ahead of the "
       "programs instead of losing them when their rings fill; started under nice(1), xtrace "
       "keeps the priority it was given). The traced programs keep theirs",
       [&o](Flag flag, Value value) { return SetNice(flag, value, o.nice); }},
      {'v', "--verbose", "", "ADVANCED", "more detail on stderr", SetTrue(o.verbose)},
  };
}

OptionTable LocalOutputOptionTable(CaptureOptions& o) {
  return {
      {'o', "--output", "FILE", "OUTPUT",
       "event log to write (default: xtrace-PID.capnp for one --pid, xtrace-record.capnp for a "
       "command, else xtrace-system.capnp); %r in it is the rank the launcher (mpirun, srun, "
       "torchrun) gave xtrace, %p xtrace's pid, %h the host name, %% a percent sign",
       [&o](Flag flag, Value value) { return Text(flag, value, "a file name", o.output_path); }},
      {'q', "--quiet", "", "OUTPUT", "no progress or summary on stderr",
       SetTrue(o.quiet)},
  };
}

}  // namespace xtrace
