// One capture from start to summary: loads the probes, attaches them to the targets' Level
// Zero loaders (now, or when they load it later), streams records through decode and
// correlation into the log, and stops on a signal, a deadline or when every target is gone.
#pragma once

#include <csignal>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace xtrace {

// Whether the kernel-driver view (DRM ioctls and fences) is captured, and with what.
enum class DrmCapture {
  kAlongside,  // with every other source (default)
  kOff,        // --no-drm
  kOnly,       // --drm-only: for programs that never use Level Zero (OpenCL, media, ...)
};

struct CaptureOptions {
  std::vector<uint32_t> pids;        // attach: processes already running
  std::vector<std::string> command;  // record: a command to launch and trace
  std::string output_path;
  std::optional<uint64_t> duration_ns;
  uint64_t ring_bytes = 16 << 20;
  int poll_interval_ms = 100;        // ring-buffer poll and maps re-scan period
  uint64_t flush_interval_ns = 1000000000;  // a killed capture loses at most this much
  // Every target starts paused: nothing is recorded until it calls __itt_resume (VTune's
  // "start paused"); __itt_pause pauses again, __itt_detach ends its capture.
  bool start_paused = false;
  DrmCapture drm = DrmCapture::kAlongside;
  bool quiet = false;
  bool verbose = false;
  bool single_uprobes = false;       // never uprobe_multi (see ZeSource)
  std::string xtrace_command_line;
};

struct CaptureReport {
  uint64_t events = 0;
  uint64_t launches = 0;
  uint64_t kernel_creates = 0;
  uint64_t itt_tasks = 0;     // ITT spans (tasks, regions, frames, PyTorch ranges)
  uint64_t itt_markers = 0;
  uint64_t dropped = 0;
  uint64_t malformed = 0;
  uint64_t file_bytes = 0;
  uint32_t processes_attached = 0;
  std::optional<int> command_exit_status;  // record: how the command ended
  std::string summary_text;                // the paragraph printed at the end
};

// Set from a signal handler to end the capture cleanly.
extern volatile std::sig_atomic_t g_capture_stop;

// Runs a capture to its end. Progress and the closing summary go to stderr (unless quiet).
// An error before anything was captured returns a Status; once capturing, problems are
// reported and everything captured is still written.
Result<CaptureReport> RunCapture(const CaptureOptions& options);

}  // namespace xtrace
