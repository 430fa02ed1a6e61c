// The kernel-driver (DRM) view in the event model: what each fd of a traced process is, every
// DRM ioctl with its decoded arguments and the host API call that issued it, and when work a
// submission created fences for completed.
#pragma once

#include <cstdint>
#include <variant>

#include "model/string_table.h"

namespace xtrace {

// What an fd turned out to be when its first DRM ioctl was seen.
enum class DrmNodeKind : uint8_t {
  kUnknown = 0,   // could not be looked at (the fd was closed or the process was gone)
  kNotDrm = 1,    // not a DRM device: the command number is DRM's, the file is not
  kPrimary = 2,   // a primary node, /dev/dri/cardN
  kRender = 3,    // a render node, /dev/dri/renderDN
  kOtherDrm = 4,  // another DRM minor (e.g. an accel or control node)
};

// Emitted once per (process, fd), before the first ioctl on that fd.
struct DrmFile {
  uint32_t pid = 0;
  uint32_t fd = 0;
  DrmNodeKind kind = DrmNodeKind::kUnknown;
  StringId path = kEmptyString;  // as the process sees it, e.g. /dev/dri/renderD128
  uint32_t major = 0;            // device numbers; 0 for what is not a device
  uint32_t minor = 0;
  StringId driver = kEmptyString;  // kernel driver of a DRM device (i915, xe, ...), if known

  bool operator==(const DrmFile&) const = default;
};

// Decoded arguments, one struct per decoded command. Fields the kernel writes back (handles,
// ids, offsets) are 0 when the call failed.

// i915 GEM_EXECBUFFER2 / GEM_EXECBUFFER2_WR: one submission.
struct I915ExecbufferArgs {
  uint32_t context_id = 0;  // rsvd1: the GEM context
  uint32_t engine = 0;      // flags & I915_EXEC_RING_MASK: ring, or index in the engine map
  uint64_t flags = 0;       // every flag, fence bits included
  uint32_t buffer_count = 0;
  uint32_t batch_start_offset = 0;
  uint32_t batch_len = 0;

  bool operator==(const I915ExecbufferArgs&) const = default;
};

// i915 GEM_CREATE / GEM_CREATE_EXT.
struct I915GemCreateArgs {
  uint64_t size = 0;  // bytes; as rounded by the kernel when the call succeeded
  uint32_t handle = 0;
  uint32_t flags = 0;  // GEM_CREATE_EXT only
  bool extended = false;

  bool operator==(const I915GemCreateArgs&) const = default;
};

// i915 GEM_MMAP_OFFSET.
struct I915MmapOffsetArgs {
  uint32_t handle = 0;
  uint64_t offset = 0;  // the fake offset to mmap
  uint64_t flags = 0;   // mapping type

  bool operator==(const I915MmapOffsetArgs&) const = default;
};

// i915 GEM_WAIT.
struct I915GemWaitArgs {
  uint32_t handle = 0;
  uint32_t flags = 0;
  int64_t timeout_ns = 0;  // as passed; negative waits forever

  bool operator==(const I915GemWaitArgs&) const = default;
};

// i915 GEM_CONTEXT_CREATE(_EXT).
struct I915ContextCreateArgs {
  uint32_t context_id = 0;
  uint32_t flags = 0;

  bool operator==(const I915ContextCreateArgs&) const = default;
};

// xe EXEC: one submission.
struct XeExecArgs {
  uint32_t exec_queue_id = 0;
  uint32_t num_syncs = 0;
  uint64_t address = 0;  // batch buffer GPU address (or of the address array)
  uint32_t num_batch_buffer = 0;

  bool operator==(const XeExecArgs&) const = default;
};

// xe VM_BIND; the operation fields describe the single bind when num_binds is 1.
struct XeVmBindArgs {
  uint32_t vm_id = 0;
  uint32_t exec_queue_id = 0;
  uint32_t num_binds = 0;
  uint32_t num_syncs = 0;
  uint32_t op = 0;
  uint32_t obj = 0;
  uint64_t obj_offset = 0;
  uint64_t range = 0;
  uint64_t addr = 0;
  uint32_t bind_flags = 0;

  bool operator==(const XeVmBindArgs&) const = default;
};

// xe GEM_CREATE.
struct XeGemCreateArgs {
  uint64_t size = 0;
  uint32_t placement = 0;
  uint32_t flags = 0;
  uint32_t vm_id = 0;
  uint32_t handle = 0;
  uint32_t cpu_caching = 0;

  bool operator==(const XeGemCreateArgs&) const = default;
};

// xe EXEC_QUEUE_CREATE.
struct XeExecQueueCreateArgs {
  uint32_t width = 0;
  uint32_t num_placements = 0;
  uint32_t vm_id = 0;
  uint32_t flags = 0;
  uint32_t exec_queue_id = 0;

  bool operator==(const XeExecQueueCreateArgs&) const = default;
};

// xe WAIT_USER_FENCE.
struct XeWaitUserFenceArgs {
  uint64_t addr = 0;
  uint32_t op = 0;
  uint32_t flags = 0;
  uint64_t value = 0;
  uint64_t mask = 0;
  int64_t timeout_ns = 0;
  uint32_t exec_queue_id = 0;

  bool operator==(const XeWaitUserFenceArgs&) const = default;
};

// monostate: not decoded (another command, or its struct was unreadable or too short).
using DrmIoctlArgs =
    std::variant<std::monostate, I915ExecbufferArgs, I915GemCreateArgs, I915MmapOffsetArgs,
                 I915GemWaitArgs, I915ContextCreateArgs, XeExecArgs, XeVmBindArgs, XeGemCreateArgs,
                 XeExecQueueCreateArgs, XeWaitUserFenceArgs>;

// One ioctl(2) with a DRM command, from syscall entry to exit.
struct DrmIoctl {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t fd = 0;
  uint32_t cmd = 0;              // as passed, size bits included
  int64_t result = 0;            // syscall return: >= 0, or -errno
  StringId name = kEmptyString;  // e.g. DRM_IOCTL_I915_GEM_EXECBUFFER2
  uint64_t arg = 0;              // argument pointer
  bool arg_unreadable = false;   // the argument struct could not be read (NULL, unmapped)
  DrmIoctlArgs args;
  // The host API call (e.g. a Level Zero call) this ioctl ran inside, on the same thread:
  // its start time, which with pid and tid identifies it, and its name. 0 / empty: none.
  uint64_t cause_start_ns = 0;
  StringId cause = kEmptyString;

  bool operator==(const DrmIoctl&) const = default;
};

// A fence created inside a traced DRM ioctl signaled: the GPU finished that work.
struct DrmFenceSignal {
  uint32_t pid = 0;
  uint32_t tid = 0;  // the thread whose ioctl created the fence
  uint64_t created_ns = 0;
  uint64_t signaled_ns = 0;
  uint64_t ioctl_start_ns = 0;  // start of that ioctl (DrmIoctl::start_ns on the same thread)
  uint64_t context = 0;         // dma_fence timeline
  uint64_t seqno = 0;
  StringId source = kEmptyString;  // the tracepoint that saw the signal

  bool operator==(const DrmFenceSignal&) const = default;
};

// Submissions: the ioctls that hand work to the GPU.
inline bool IsDrmSubmission(const DrmIoctlArgs& a) {
  return std::holds_alternative<I915ExecbufferArgs>(a) || std::holds_alternative<XeExecArgs>(a);
}

}  // namespace xtrace
