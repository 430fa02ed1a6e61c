// Stand-in for the kernel-mode driver: each submission issues one real ioctl(2) carrying the
// i915 or xe exec command, exactly where Intel's user-mode driver would (on the submitting
// thread, inside the API call). The fd is /dev/null, so the kernel answers ENOTTY and nothing
// runs; what matters is that syscall tracing sees the same command numbers and argument layout.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace simze {

enum class EngineClass { kCompute, kCopy };

// Per command queue (or immediate command list): an i915 GEM context / xe exec queue.
struct KmdContext {
  explicit KmdContext(EngineClass engine_class);
  KmdContext(const KmdContext&) = delete;
  KmdContext& operator=(const KmdContext&) = delete;

  const EngineClass engine;
  const uint32_t id;  // i915 context id (execbuffer2.rsvd1) or xe exec_queue_id
  std::atomic<uint32_t> ring_offset{0};  // where the next batch starts in the ring buffer
};

// One exec ioctl for a submission of `num_command_lists` lists holding `num_commands` commands.
void kmd_submit(KmdContext& ctx, uint32_t num_command_lists, size_t num_commands);

// ---- uapi layouts, defined here because Debian's linux-libc-dev ships neither i915_drm.h
// (that comes with libdrm-dev) nor xe_drm.h. Checked against the real header when present.

struct I915ExecObject2 {  // struct drm_i915_gem_exec_object2
  uint32_t handle;
  uint32_t relocation_count;
  uint64_t relocs_ptr;
  uint64_t alignment;
  uint64_t offset;
  uint64_t flags;
  uint64_t rsvd1;
  uint64_t rsvd2;
};

struct I915ExecBuffer2 {  // struct drm_i915_gem_execbuffer2
  uint64_t buffers_ptr;
  uint32_t buffer_count;
  uint32_t batch_start_offset;
  uint32_t batch_len;
  uint32_t DR1;
  uint32_t DR4;
  uint32_t num_cliprects;
  uint64_t cliprects_ptr;
  uint64_t flags;  // bits 0-5: engine (ring) selector
  uint64_t rsvd1;  // context id
  uint64_t rsvd2;
};

struct XeExec {  // struct drm_xe_exec
  uint64_t extensions;
  uint32_t exec_queue_id;
  uint32_t num_syncs;
  uint64_t syncs;
  uint64_t address;
  uint16_t num_batch_buffer;
  uint16_t pad[3];
  uint64_t reserved[2];
};

// _IOW('d', DRM_COMMAND_BASE + nr, struct)
inline constexpr unsigned long kI915GemExecbuffer2 = 0x40406469;
inline constexpr unsigned long kXeExec = 0x40386449;

inline constexpr uint64_t kI915ExecRender = 1;  // I915_EXEC_RENDER
inline constexpr uint64_t kI915ExecBlt = 3;     // I915_EXEC_BLT
inline constexpr uint64_t kI915ExecNoReloc = 1u << 11;
inline constexpr uint64_t kI915ExecHandleLut = 1u << 12;

}  // namespace simze
