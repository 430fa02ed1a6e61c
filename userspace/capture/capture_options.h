// What a capture is asked to do: its targets, its output, its sources and their knobs, and
// how an embedder (the daemon) stops it and hears its progress. Shared by the CLI, the daemon
// and every part of the capture; kept apart from the session so that they need not see it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/event_tap.h"
#include "xtrace/itt_ring.h"
#include "model/log_header.h"

namespace xtrace {

// Whether the kernel-driver view (DRM ioctls and fences) is captured, and with what.
enum class DrmCapture {
  kAlongside,  // with every other source (default)
  kOff,        // --no-drm
  kOnly,       // --drm-only: for programs that never use Level Zero (OpenCL, media, ...)
};

// Where the DRM source's ioctl programs attach (bpf/drm_ioctl.bpf.c, --drm-hook). kAuto takes
// the first of the others, in this order, that the kernel accepts.
enum class DrmHook {
  kAuto,
  kFentry,              // fentry/fexit on ioctl(2): only ioctl calls pay
  kIoctlTracepoints,    // syscalls:sys_{enter,exit}_ioctl: only ioctl calls run a program
  kSyscallTracepoints,  // raw sys_enter/sys_exit: every syscall runs the program
};

// Size/time-based rotation of a capture written to a directory (CaptureOptions::output_dir).
struct RotationPolicy {
  uint64_t max_file_bytes = 0;  // start a new file once one reaches this size (0: never)
  uint64_t max_file_age_ns = 0; // ... or once it is this old (0: never)
  uint32_t max_files = 0;       // keep at most this many finished files, oldest deleted (0: all)
};

// A capture's state while it runs (and at its end), for `xtrace ctl status`.
struct CaptureProgress {
  std::string current_file;
  uint32_t files_finished = 0;
  uint64_t events = 0;
  uint64_t dropped = 0;
  uint32_t processes_tracked = 0;   // processes followed now
  uint32_t processes_traced = 0;    // processes with records or attached probes so far
  uint64_t links = 0;               // BPF links held now (probes and tracepoints)
  uint32_t traced_pid_entries = 0;  // entries in the BPF process filter now
  std::vector<ProcessCaptureStats> per_process;
};

struct CaptureOptions {
  // TARGET (see capture_scope.h for how they combine)
  std::vector<uint32_t> pids;        // processes already running
  std::vector<std::string> command;  // record: a command to launch and trace
  bool system = false;               // every process on the machine (in xtrace's pid namespace)
  std::string comm;                  // processes with this name, now and later
  std::string cgroup;                // only processes in this cgroup (v2) and below
  std::string container;             // only processes of this container (id or prefix)
  std::optional<bool> follow_children;  // default: on for a command, off for --pid
  std::string user;                  // only this user's processes (name or uid): see capture_scope.h
  std::string slurm_job;             // the processes of this Slurm job on this node
  std::string slurm_node;            // ... that Slurm started as this node (SLURMD_NODENAME)
  std::string slurm_cluster;         // ... of this cluster (SLURM_CLUSTER_NAME; see discovery/slurm_job.h)
  uint32_t client_pid = 0;           // who asked the daemon for it: never a target itself

  // OUTPUT: one file, or a directory of rotated files (each a complete log)
  std::string output_path;
  std::string output_dir;
  RotationPolicy rotation;

  std::optional<uint64_t> duration_ns;
  uint64_t ring_bytes = 16 << 20;
  // The data bytes of each ITT fast-path ring the traced programs' threads make while this
  // capture drains them (xt_itt_control.ring_bytes_wanted): XT_ITT_RING_BYTES unless asked.
  uint32_t itt_ring_bytes = XT_ITT_RING_BYTES;
  // The nice value of the capture's own threads (the capture loop and the ITT drain thread):
  // --nice; unset, kCaptureNice (base/thread_nice.h) when xtrace runs at nice 0, else left.
  std::optional<int> nice;
  int poll_interval_ms = 100;        // ring-buffer poll and maps re-scan period
  uint64_t flush_interval_ns = 1000000000;  // a killed capture loses at most this much
  // Makes, for each capture, a tap fed every event written, whose lines end the summary (the
  // top kernels: report::TopKernels). Unset: the summary has none.
  std::function<std::unique_ptr<EventTap>()> summary_tap;
  // How long probes stay on a library file after the last traced process using it is gone,
  // so that short-lived processes started one after another are traced from their first call.
  uint64_t library_grace_ns = 10'000'000'000ull;
  // Every target starts paused: nothing is recorded until it calls __itt_resume (VTune's
  // "start paused"); __itt_pause pauses again, __itt_detach ends its capture.
  bool start_paused = false;
  DrmCapture drm = DrmCapture::kAlongside;
  bool quiet = false;
  bool verbose = false;
  bool single_uprobes = false;       // never uprobe_multi (see ZeSource)
  // With a scope that discovers processes, uprobes go into each selected process (the
  // default, which --probes-per-process names) or, with probes_per_file, once per library
  // file for every process that maps it, outside the scope too (docs/design-notes.md,
  // "Probes per process").
  bool probes_per_process = false;  // asked for by name
  bool probes_per_file = false;
  DrmHook drm_hook = DrmHook::kAuto;
  // Python frames of a CPython process's thread on its launches, copies, submissions,
  // synchronizations and ITT tasks (capture/sources/python_source.h). On by default for the
  // calls that trap anyway: at a model's depth the frames add under a tenth of the trap such a
  // call already pays (make bench, section 10). ITT calls on the in-process fast path pay no
  // trap, and reading their frames would put each back on the probe site (a PyTorch loop ran
  // at 0.69x instead of 0.96x, section 8): they keep the fast path unless --python-frames is
  // given. --no-python-frames: none at all. See docs/design-notes.md, "Python frames".
  std::optional<bool> python_frames;  // unset: on, ITT's fast path kept
  bool wants_python_frames() const { return python_frames.value_or(true); }
  bool python_frames_over_itt_fast_path() const { return python_frames.value_or(false); }
  // Where processes can start or load libraries during the capture, each selected one is held
  // (stopped) from its exec or library load until its new files are probed, at most this long
  // (include/xtrace/hold.h); `hold` false: never held, first calls may be lost.
  bool hold = true;
  // Where the capture probes per file (--system, --probes-per-file), a program a shell with
  // job control runs as a job of its terminal is not held unless this is set: the shell
  // would report the stop as the job's (bpf/hold.bpf.h, xt_terminal_job). Captures that probe
  // per process hold the programs they select whatever runs them.
  bool hold_terminal_jobs = false;
  uint64_t hold_max_ns = 500'000'000;
  // A process running before the capture began made its kernels before it: a launch of one
  // holds the launching thread a moment, and xtrace asks the process's own loader for the
  // kernel's name (capture/sources/ze_query.h). `query` false: such launches stay "kernel@0x...".
  bool query = true;
  // The longest one such hold asks, from its stop (ze_query.h's HoldBound): it asks on while
  // the process answers, each call given up to 2 s; what is left is asked at a later hold.
  uint64_t query_max_ns = 10'000'000'000;
  // Probe the driver functions the loader's exports lead to (capture/sources/ze_source.cc) in
  // every traced process, so that calls through the driver's own function tables are captured
  // also in processes that took them before xtrace saw them. By default only processes seen
  // calling a zeGet*ProcAddrTable have them probed, for themselves alone: in every other
  // process a call through an export traps once (measured with the option: a traced launch
  // +12.1 us instead of +1.95 us, the driver function's entry being single-stepped).
  bool driver_tables = false;
  std::string xtrace_command_line;

  // Embedding (the daemon): a stop request besides g_capture_stop, and where to report
  // progress (called from the capture's thread about every poll interval).
  const std::atomic<bool>* stop_requested = nullptr;
  std::function<void(const CaptureProgress&)> on_progress;
  // record: told the pid of the launched command once it runs. The capture learns how the
  // command ended without reaping it (waitid WNOWAIT): whoever launched the capture reaps it,
  // and so can keep waiting for it however the capture ends.
  std::function<void(int pid)> on_command_started;
};

}  // namespace xtrace
