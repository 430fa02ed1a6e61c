// Runs the daemon's captures, one at a time, each on a thread of its own: start, stop and
// status as plain calls (the control server only translates RPC to these), so the daemon's
// behaviour is testable without a socket.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "capture/capture_output.h"
#include "capture/capture_session.h"

namespace xtrace {

struct DaemonConfig {
  std::string output_dir;  // every capture writes rotated files here
  RotationPolicy rotation;
  bool quiet = false;      // captures' progress lines on stderr
};

struct ControllerStatus {
  bool capturing = false;
  CaptureOptions request;  // targets of the running (or last) capture
  std::string describe;    // "every process in cgroup /x"
  uint64_t started_realtime_ns = 0;
  CaptureProgress progress;
  std::string last_result;  // how the last capture ended: its summary, or the error
};

class CaptureController {
 public:
  explicit CaptureController(DaemonConfig config);
  // Stops a running capture (its open file is finished) and waits for it.
  ~CaptureController();
  CaptureController(const CaptureController&) = delete;
  CaptureController& operator=(const CaptureController&) = delete;

  // Starts a capture of `request`'s targets (its output fields are replaced by the daemon's).
  // Returns once the capture runs, or with the reason it could not start.
  Status Start(const CaptureOptions& request);
  // Stops the running capture, waits until its last file is finished, and returns the final
  // state (an error if no capture runs).
  Result<ControllerStatus> Stop();
  ControllerStatus Snapshot();
  std::vector<CaptureFileInfo> Files() const;
  const DaemonConfig& config() const { return config_; }

 private:
  void Run();
  void JoinFinished();  // with mu_ held

  DaemonConfig config_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  bool running_ = false;   // the thread has not finished
  bool started_ = false;   // the capture reported progress at least once
  CaptureOptions options_;  // of the running capture; RunCapture holds a reference
  ControllerStatus status_;
};

}  // namespace xtrace
