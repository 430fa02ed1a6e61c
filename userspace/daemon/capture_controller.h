// Runs the daemon's captures, one at a time, each on a thread of its own: start, stop and
// status as plain calls (the control server only translates RPC to these), so the daemon's
// behaviour is testable without a socket.
#pragma once

#include <atomic>
#include <condition_variable>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "capture/output/capture_output.h"
#include "capture/capture_session.h"

namespace xtrace {

struct DaemonConfig {
  std::string output_dir;  // every capture writes rotated files here
  RotationPolicy rotation;
  bool quiet = false;      // captures' progress lines on stderr
};

// Who asked for a capture, as the control socket's peer credentials say.
struct Requester {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  uint32_t pid = 0;
  bool privileged = true;  // root or the daemon's --group: any process; else their own alone
};

struct ControllerStatus {
  bool capturing = false;
  uid_t owner_uid = 0;     // who asked for the running (or last) capture
  CaptureOptions request;  // targets of the running (or last) capture
  std::string describe;    // "every process in cgroup /x"
  uint64_t started_realtime_ns = 0;
  CaptureProgress progress;
  std::string last_result;  // how the last capture ended: its summary, or the error
};

// The command line a daemon capture's logs carry in their header: the request as `xtrace ctl
// start` options, and who asked. A merged trace tells captures of one machine apart by it, so
// two daemons on one host (one per `slurmd -N` node name) must not both write an empty one.
std::string DescribeDaemonCapture(const CaptureOptions& request);

class CaptureController {
 public:
  explicit CaptureController(DaemonConfig config);
  // Stops a running capture (its open file is finished) and waits for it.
  ~CaptureController();
  CaptureController(const CaptureController&) = delete;
  CaptureController& operator=(const CaptureController&) = delete;

  // Starts a capture of `request`'s targets for `who`. Its files go to the daemon's output
  // directory, or to request.output_dir (absolute) written with `who`'s file-system identity
  // (fs_identity.h). A requester that is not privileged must name an output directory, and
  // the capture covers their own processes alone (CaptureOptions::user); naming another
  // user's is refused before anything is probed. Returns once the capture runs, or with the
  // reason it could not start.
  Status Start(const CaptureOptions& request, const Requester& who = {});
  // Stops the running capture, waits until its last file is finished, and returns the final
  // state (an error if no capture runs, or if it is another user's and `who` not privileged).
  Result<ControllerStatus> Stop(const Requester& who = {});
  ControllerStatus Snapshot();
  // The capture files of the daemon's directory; for a requester that is not privileged,
  // those of the directory of their last capture.
  std::vector<CaptureFileInfo> Files(const Requester& who = {});
  const DaemonConfig& config() const { return config_; }

 private:
  void Run(const Requester& who, bool as_requester);
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
  std::map<uid_t, std::string> last_dir_;  // of each user's last capture
};

}  // namespace xtrace
