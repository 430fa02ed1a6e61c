// DRM correlation; see drm_correlator.h.
#include "correlate/drm_correlator.h"

#include <algorithm>
#include <cerrno>

#include "correlate/correlator.h"
#include "decode/drm_ioctl_decoder.h"

namespace xtrace {
namespace {

uint64_t ThreadKey(uint32_t pid, uint32_t tid) { return (uint64_t{pid} << 32) | tid; }

// `result` is the first call's on the file: an fd that was never open fails with EBADF, and
// is no file that went away.
std::string DeviceLabel(const FdDevice& dev, int64_t result) {
  switch (dev.kind) {
    case DrmNodeKind::kUnknown:
      if (result == -EBADF) return "no open file (the calls failed with EBADF: not an open fd)";
      return "unidentified files (gone before they could be looked at)";
    case DrmNodeKind::kNotDrm:
      return (dev.path.empty() ? std::string("a file") : dev.path) + " (not a DRM device)";
    default:
      return dev.path + (dev.driver.empty() ? "" : " (" + dev.driver + ")");
  }
}

std::string_view FenceSourceName(uint32_t source) {
  switch (source) {
    case XT_FENCE_SRC_DMA_FENCE:
      return "dma_fence_signaled";
    case XT_FENCE_SRC_I915_RETIRE:
      return "i915_request_retire";
    case XT_FENCE_SRC_XE_HW_FENCE:
      return "xe_hw_fence_signal";
  }
  return "unknown";
}

}  // namespace

DrmCorrelator::DrmCorrelator(StringTable& strings, EventSink& sink, ProcessInspector& inspector)
    : strings_(strings), sink_(sink), inspector_(inspector) {}

const DrmCorrelator::File& DrmCorrelator::FileOf(const DecodedDrmIoctl& r) {
  const uint32_t pid = r.hdr.pid, fd = r.fd;
  const FileKey key{pid, fd, r.rdev, r.mode};
  if (auto it = files_.find(key); it != files_.end()) return it->second;
  const FdDevice dev =
      inspector_.Fd(pid, fd, FdFileAtCall{r.mode, XT_KDEV_MAJOR(r.rdev), XT_KDEV_MINOR(r.rdev)});
  const std::string label = DeviceLabel(dev, r.result);
  auto [dit, added] = device_index_.try_emplace(label, devices_.size());
  if (added) devices_.push_back(DrmDeviceStats{.device = label});
  sink_.OnEvent(DrmFile{.pid = pid,
                        .fd = fd,
                        .kind = dev.kind,
                        .path = strings_.Intern(dev.path),
                        .major = dev.major,
                        .minor = dev.minor,
                        .driver = strings_.Intern(dev.driver)});
  return files_.emplace(key, File{dit->second, dev.driver}).first->second;
}

void DrmCorrelator::OnIoctl(const DecodedDrmIoctl& r) {
  ++ioctls_;
  const File& file = FileOf(r);
  // The fd's driver says what a driver-specific number means; for a file that is not a DRM
  // device (or is gone) the decoder goes by complete command numbers instead.
  const DrmCallInfo info = DecodeDrmCall(file.driver, r.cmd, r.in, r.out, r.result);
  DrmDeviceStats& stats = devices_[file.device];
  ++stats.ioctls;
  const bool submission = info.call_class == DrmCallClass::kSubmission;
  if (submission) {
    ++stats.submissions;
    auto& recent = recent_submissions_[ThreadKey(r.hdr.pid, r.hdr.tid)];
    recent.push_back(r.hdr.start_ns);
    if (recent.size() > kRecentSubmissions) recent.pop_front();
  }
  if (info.call_class == DrmCallClass::kWait) ++stats.waits;
  stats.bytes_created += info.bytes_created;

  Held held{.event = DrmIoctl{.pid = r.hdr.pid,
                              .tid = r.hdr.tid,
                              .start_ns = r.hdr.start_ns,
                              .end_ns = r.hdr.end_ns,
                              .fd = r.fd,
                              .cmd = r.cmd,
                              .result = r.result,
                              .name = strings_.Intern(info.name),
                              .arg = r.arg,
                              .arg_unreadable = (r.hdr.flags & XT_FLAG_ARG_UNREADABLE) != 0,
                              .args = info.args},
            .device = file.device,
            .submission = submission};
  if (!link_host_calls_) {
    Emit(held);
    return;
  }
  auto& queue = held_[ThreadKey(r.hdr.pid, r.hdr.tid)];
  if (queue.size() >= kMaxHeldPerThread) {
    Emit(queue.front());
    queue.pop_front();
  }
  queue.push_back(std::move(held));
}

void DrmCorrelator::OnHostCall(const xt_record_header& hdr, std::string_view name) {
  auto it = held_.find(ThreadKey(hdr.pid, hdr.tid));
  if (it == held_.end()) return;
  // Records of one thread arrive in the order its calls returned, so every ioctl waiting
  // here returned before this call did: it ran inside the call if it began after the call
  // did. One that began earlier ran before it (Level Zero calls do not nest).
  const StringId cause = strings_.Intern(name);
  for (Held& held : it->second) {
    DrmIoctl& e = held.event;
    if (e.start_ns >= hdr.start_ns && e.end_ns <= hdr.end_ns) {
      e.cause_start_ns = hdr.start_ns;
      e.cause = cause;
    }
    Emit(held);
  }
  held_.erase(it);
}

void DrmCorrelator::OnFence(const DecodedDrmFence& r) {
  ++fences_;
  sink_.OnEvent(DrmFenceSignal{.pid = r.hdr.pid,
                               .tid = r.hdr.tid,
                               .created_ns = r.hdr.start_ns,
                               .signaled_ns = r.hdr.end_ns,
                               .ioctl_start_ns = r.ioctl_start_ns,
                               .context = r.context,
                               .seqno = r.seqno,
                               .source = strings_.Intern(FenceSourceName(r.source))});
}

bool DrmCorrelator::MadeBySubmission(const DecodedDrmFence& r) const {
  auto it = recent_submissions_.find(ThreadKey(r.hdr.pid, r.hdr.tid));
  if (it == recent_submissions_.end()) return false;
  return std::find(it->second.begin(), it->second.end(), r.ioctl_start_ns) != it->second.end();
}

void DrmCorrelator::Emit(Held& held) {
  if (held.submission && held.event.cause != kEmptyString)
    ++devices_[held.device].linked_submissions;
  sink_.OnEvent(held.event);
}

void DrmCorrelator::AdvanceTo(uint64_t ns) {
  if (ns > latest_ns_) latest_ns_ = ns;
  if (latest_ns_ < next_sweep_ns_) return;
  next_sweep_ns_ = latest_ns_ + kHoldNs / 8;
  Sweep();
}

void DrmCorrelator::Sweep() {
  for (auto it = held_.begin(); it != held_.end();) {
    auto& queue = it->second;
    while (!queue.empty() && queue.front().event.end_ns + kHoldNs <= latest_ns_) {
      Emit(queue.front());
      queue.pop_front();
    }
    it = queue.empty() ? held_.erase(it) : std::next(it);
  }
}

void DrmCorrelator::Flush() {
  for (auto& [key, queue] : held_)
    for (Held& held : queue) Emit(held);
  held_.clear();
}

}  // namespace xtrace
