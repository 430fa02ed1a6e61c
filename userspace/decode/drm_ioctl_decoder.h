// Names DRM ioctl commands and decodes the argument structs of the ones that matter (i915 and
// xe submission, buffer creation, mapping, waits, contexts/queues) from the bytes the BPF
// probe copied. Layouts are the kernel's uapi (i915_drm.h, xe_drm.h, drm.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "model/drm_event.h"

namespace xtrace {

// How an ioctl counts in the per-device summary.
enum class DrmCallClass { kOther, kSubmission, kBufferCreate, kWait };

struct DrmCallInfo {
  std::string name;  // DRM_IOCTL_I915_GEM_EXECBUFFER2, DRM_IOCTL_VERSION, DRM_IOCTL_XE_0x0f, ...
  DrmIoctlArgs args;
  DrmCallClass call_class = DrmCallClass::kOther;
  uint64_t bytes_created = 0;  // buffer creations that succeeded: their size
};

// Names and decodes `cmd` issued on an fd whose kernel driver is `driver` ("i915", "xe",
// another DRM driver's name, or empty when the fd is not a DRM device or could not be looked
// at). Driver-specific numbers overlap between drivers (i915's GETPARAM and xe's
// EXEC_QUEUE_CREATE are both 'd' 0x46), so they are matched on type and number for a known
// driver; for an unknown one only a command whose complete number (size and direction
// included) is one this decoder knows is decoded. `in` is the struct as passed, `out` as
// written back (empty when the call failed); `result` is the syscall's return.
DrmCallInfo DecodeDrmCall(std::string_view driver, uint32_t cmd, std::span<const std::byte> in,
                          std::span<const std::byte> out, int64_t result);

}  // namespace xtrace
