// Issues the stand-in exec ioctls (see kmd_stub.h). The argument structs are filled the way a
// user-mode driver fills them, so a tracer decoding them reads plausible, consistent values.
#include "kmd_stub.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <vector>

#include "config.h"
#include "device_clock.h"
#include "kmd_log.h"

#if __has_include(<drm/i915_drm.h>)
#include <drm/i915_drm.h>
static_assert(sizeof(drm_i915_gem_execbuffer2) == sizeof(simze::I915ExecBuffer2));
static_assert(sizeof(drm_i915_gem_exec_object2) == sizeof(simze::I915ExecObject2));
static_assert(DRM_IOCTL_I915_GEM_EXECBUFFER2 == simze::kI915GemExecbuffer2);
static_assert(I915_EXEC_NO_RELOC == simze::kI915ExecNoReloc);
#endif

namespace simze {
namespace {

static_assert(sizeof(I915ExecBuffer2) == 64);
static_assert(offsetof(I915ExecBuffer2, buffer_count) == 8);
static_assert(offsetof(I915ExecBuffer2, batch_start_offset) == 12);
static_assert(offsetof(I915ExecBuffer2, batch_len) == 16);
static_assert(offsetof(I915ExecBuffer2, flags) == 40);
static_assert(offsetof(I915ExecBuffer2, rsvd1) == 48);
static_assert(sizeof(I915ExecObject2) == 56);
static_assert(sizeof(XeExec) == 56);
static_assert(offsetof(XeExec, exec_queue_id) == 8);
static_assert(offsetof(XeExec, num_syncs) == 12);
static_assert(offsetof(XeExec, syncs) == 16);
static_assert(offsetof(XeExec, address) == 24);
static_assert(offsetof(XeExec, num_batch_buffer) == 32);
static_assert(offsetof(XeExec, reserved) == 40);
// The command numbers encode the struct size: keep them in step.
static_assert(((kI915GemExecbuffer2 >> 16) & 0x3fff) == sizeof(I915ExecBuffer2));
static_assert(((kXeExec >> 16) & 0x3fff) == sizeof(XeExec));

constexpr uint32_t kRingSize = 64 * 1024;      // per-context ring buffer the batches cycle through
constexpr uint32_t kBytesPerCommand = 64;      // rough size of one GPU command's encoding
constexpr uint32_t kBatchEnd = 8;              // MI_BATCH_BUFFER_END, padded to a qword
constexpr uint64_t kBatchGpuBase = 0x0000'8000'0000'0000ULL;  // where xe batches "live"

// Opened once and kept, like a driver keeps its render node open.
int stand_in_fd() {
  static const int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  return fd;
}

std::atomic<uint32_t> next_context_id{1};

}  // namespace

KmdContext::KmdContext(EngineClass engine_class)
    : engine(engine_class), id(next_context_id.fetch_add(1)) {}

void kmd_submit(KmdContext& ctx, uint32_t num_command_lists, size_t num_commands) {
  const DrmFlavor flavor = config().drm;
  if (flavor == DrmFlavor::kNone) return;

  uint32_t batch_len = static_cast<uint32_t>(num_commands) * kBytesPerCommand + kBatchEnd;
  if (batch_len > kRingSize / 2) batch_len = kRingSize / 2;
  uint32_t start = ctx.ring_offset.fetch_add(batch_len) % kRingSize;
  if (start + batch_len > kRingSize) start = 0;  // wrap: a batch never straddles the ring end

  int saved_errno = errno;  // the application should not see our stand-in's ENOTTY
  if (flavor == DrmFlavor::kI915) {
    // One buffer object per command list plus the batch buffer, which i915 expects last.
    std::vector<I915ExecObject2> objects(num_command_lists + 1);
    for (uint32_t i = 0; i < objects.size(); ++i) {
      objects[i] = {};
      objects[i].handle = ctx.id * 0x100 + i + 1;
    }
    I915ExecBuffer2 eb{};
    eb.buffers_ptr = reinterpret_cast<uintptr_t>(objects.data());
    eb.buffer_count = static_cast<uint32_t>(objects.size());
    eb.batch_start_offset = start;
    eb.batch_len = batch_len;
    eb.flags = (ctx.engine == EngineClass::kCopy ? kI915ExecBlt : kI915ExecRender) |
               kI915ExecNoReloc | kI915ExecHandleLut;
    eb.rsvd1 = ctx.id;
    const uint64_t before = mono_now_ns();
    (void)ioctl(stand_in_fd(), kI915GemExecbuffer2, &eb);
    kmd_log_i915(stand_in_fd(), before, mono_now_ns(), eb);
  } else {
    XeExec exec{};
    exec.exec_queue_id = ctx.id;
    exec.num_syncs = 0;
    exec.address = kBatchGpuBase + uint64_t{ctx.id} * kRingSize + start;
    exec.num_batch_buffer = 1;
    const uint64_t before = mono_now_ns();
    (void)ioctl(stand_in_fd(), kXeExec, &exec);
    kmd_log_xe(stand_in_fd(), before, mono_now_ns(), exec);
  }
  errno = saved_errno;
}

}  // namespace simze
