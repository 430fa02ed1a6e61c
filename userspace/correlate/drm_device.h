// Which device an fd of a process is: the path it was opened by, its device numbers and, for
// a DRM node, the kind of minor and the kernel driver behind it (from sysfs). Looked at once
// per (process, fd, device), when the first DRM ioctl on it arrives.
#pragma once

#include <cstdint>
#include <string>

#include "model/drm_event.h"

namespace xtrace {

// Character-device major of every DRM minor (DRM_MAJOR).
inline constexpr uint32_t kDrmMajor = 226;

// The file behind the fd as the BPF probe read it from the task at the call: what it was
// then, even if the fd has been closed or the process has exited since.
struct FdFileAtCall {
  uint32_t mode = 0;  // inode mode; 0: the probe found no file
  uint32_t major = 0;
  uint32_t minor = 0;
};

struct FdDevice {
  DrmNodeKind kind = DrmNodeKind::kUnknown;
  std::string path;    // e.g. /dev/dri/renderD128; empty when it cannot be told
  uint32_t major = 0;  // 0 when the file is not a device
  uint32_t minor = 0;
  std::string driver;  // DRM nodes: the driver's name in sysfs (i915, xe, ...); else empty
};

// Identifies `fd` of `pid` from what the probe saw, named through `proc_root` (normally /proc:
// the path the process opened, when the fd still holds that file) or, for a device, through
// `sysfs_root` (normally /sys: its node name and, for DRM, its driver). Without the probe's
// view (mode 0), /proc alone decides. The fd is stat'ed through the /proc link itself, so a
// device inside another mount namespace (a container) is still the right one.
FdDevice ResolveFdDevice(const std::string& proc_root, const std::string& sysfs_root, uint32_t pid,
                         uint32_t fd, const FdFileAtCall& at_call);

// The kind of a DRM minor: 0-63 primary (cardN), 128-191 render (renderDN), others.
DrmNodeKind DrmMinorKind(uint32_t minor);

}  // namespace xtrace
