// Correlation of the DRM records: looks at each (process, fd) once to say which device it is,
// names and decodes every ioctl, attributes an ioctl to the host API call it ran inside (same
// thread, the call's interval containing the ioctl's) and keeps the per-device counts the
// capture summary reports.
#pragma once

#include <compare>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "correlate/process_inspector.h"
#include "decode/record_decoder.h"
#include "model/event.h"
#include "model/string_table.h"

namespace xtrace {

class EventSink;

// What the summary says per device.
struct DrmDeviceStats {
  std::string device;  // "/dev/dri/renderD128 (i915)", "/dev/null (not a DRM device)"
  uint64_t ioctls = 0;
  uint64_t submissions = 0;
  uint64_t linked_submissions = 0;  // submissions attributed to the API call that made them
  uint64_t bytes_created = 0;
  uint64_t waits = 0;
};

class DrmCorrelator {
 public:
  // An API call's record is emitted when the call returns, after the ioctls inside it: an
  // ioctl waits for the call that may contain it at most this long (in record time) before it
  // is written without one. A call that runs longer after issuing its ioctl loses the link.
  static constexpr uint64_t kHoldNs = 1'000'000'000;
  // And at most this many ioctls wait per thread.
  static constexpr size_t kMaxHeldPerThread = 4096;

  DrmCorrelator(StringTable& strings, EventSink& sink, ProcessInspector& inspector);

  // Whether ioctls wait for a host API call that may contain them; off when nothing records
  // host API calls (--drm-only), so ioctls are written at once.
  void set_link_host_calls(bool on) { link_host_calls_ = on; }
  bool link_host_calls() const { return link_host_calls_; }

  void OnIoctl(const DecodedDrmIoctl& r);
  void OnFence(const DecodedDrmFence& r);
  // Whether a fence was made by a submission ioctl (one of the last kRecentSubmissions on its
  // thread). A fence that signals before its ioctl returned is not recognised.
  bool MadeBySubmission(const DecodedDrmFence& r) const;
  static constexpr size_t kRecentSubmissions = 64;
  // A host API call's record on hdr.pid/tid spanning [hdr.start_ns, hdr.end_ns].
  void OnHostCall(const xt_record_header& hdr, std::string_view name);
  // Record time has reached `ns`: ioctls that waited long enough are written unattributed.
  void AdvanceTo(uint64_t ns);
  // End of capture: writes everything still waiting.
  void Flush();

  const std::vector<DrmDeviceStats>& device_stats() const { return devices_; }
  uint64_t ioctls() const { return ioctls_; }
  uint64_t fences() const { return fences_; }

 private:
  struct Held {
    DrmIoctl event;
    size_t device;  // index into devices_
    bool submission;
  };
  struct File {
    size_t device;       // index into devices_
    std::string driver;  // the DRM driver behind it, empty if none or unknown
  };
  struct FileKey {
    uint32_t pid, fd, rdev, mode;
    auto operator<=>(const FileKey&) const = default;
  };

  // What the file of an ioctl is, looked up (and announced with a DrmFile event) the first
  // time its (pid, fd, device) is seen: an fd closed and reopened on another device is
  // looked up again.
  const File& FileOf(const DecodedDrmIoctl& r);
  void Emit(Held& held);
  void Sweep();

  StringTable& strings_;
  EventSink& sink_;
  ProcessInspector& inspector_;
  bool link_host_calls_ = true;
  std::map<FileKey, File> files_;
  std::map<std::string, size_t> device_index_;  // label -> devices_ index
  std::vector<DrmDeviceStats> devices_;
  std::unordered_map<uint64_t, std::deque<Held>> held_;  // (pid << 32 | tid) -> oldest first
  // (pid << 32 | tid) -> start times of the thread's latest submission ioctls, oldest first.
  std::unordered_map<uint64_t, std::deque<uint64_t>> recent_submissions_;
  uint64_t latest_ns_ = 0;
  uint64_t next_sweep_ns_ = 0;
  uint64_t ioctls_ = 0;
  uint64_t fences_ = 0;
};

}  // namespace xtrace
