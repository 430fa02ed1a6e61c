// Tests for decode/drm_ioctl_decoder: names and decoded fields from raw argument bytes, laid
// out as the uapi headers lay them out; driver disambiguation; short and missing structs.
#include "decode/drm_ioctl_decoder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace xtrace {
namespace {

// A struct image of `size` bytes with fields put at their uapi offsets.
class Bytes {
 public:
  explicit Bytes(size_t size) : bytes_(size) {}
  template <typename T>
  Bytes& Put(size_t offset, T value) {
    std::memcpy(bytes_.data() + offset, &value, sizeof(T));
    return *this;
  }
  std::span<const std::byte> span() const { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
};

const std::span<const std::byte> kNone;

TEST(DrmIoctlDecoderTest, I915ExecbufferFieldsAndEngineFromFlags) {
  Bytes eb(64);
  eb.Put<uint64_t>(0, 0x7f00'1234'0000)  // buffers_ptr
      .Put<uint32_t>(8, 3)               // buffer_count
      .Put<uint32_t>(12, 0x1c0)          // batch_start_offset
      .Put<uint32_t>(16, 200)            // batch_len
      .Put<uint64_t>(40, 0x22803)        // flags: BLT | NO_RELOC | FENCE_OUT | FENCE_ARRAY-less
      .Put<uint64_t>(48, 0x0000'0001'0000'002a);  // rsvd1: context id in the low 32 bits
  const DrmCallInfo info = DecodeDrmCall("i915", 0x40406469, eb.span(), kNone, 0);
  EXPECT_EQ(info.name, "DRM_IOCTL_I915_GEM_EXECBUFFER2");
  EXPECT_EQ(info.call_class, DrmCallClass::kSubmission);
  const auto& a = std::get<I915ExecbufferArgs>(info.args);
  EXPECT_EQ(a.context_id, 42u);
  EXPECT_EQ(a.engine, 3u);
  EXPECT_EQ(a.flags, 0x22803u);
  EXPECT_EQ(a.buffer_count, 3u);
  EXPECT_EQ(a.batch_start_offset, 0x1c0u);
  EXPECT_EQ(a.batch_len, 200u);

  // The _WR twin shares the number; the direction tells it apart, the struct is the same.
  const DrmCallInfo wr = DecodeDrmCall("i915", 0xC0406469, eb.span(), eb.span(), 0);
  EXPECT_EQ(wr.name, "DRM_IOCTL_I915_GEM_EXECBUFFER2_WR");
  EXPECT_EQ(std::get<I915ExecbufferArgs>(wr.args).context_id, 42u);
}

TEST(DrmIoctlDecoderTest, SizeBitsDoNotMatterForAKnownDriver) {
  // A newer user-mode driver may pass a larger struct: the same command, decoded the same.
  Bytes eb(72);
  eb.Put<uint32_t>(8, 5).Put<uint64_t>(48, 9);
  const uint32_t bigger = (0x40406469 & ~(0x3fffu << 16)) | (72u << 16);
  const DrmCallInfo info = DecodeDrmCall("i915", bigger, eb.span(), kNone, 0);
  EXPECT_EQ(info.name, "DRM_IOCTL_I915_GEM_EXECBUFFER2");
  EXPECT_EQ(std::get<I915ExecbufferArgs>(info.args).buffer_count, 5u);
}

TEST(DrmIoctlDecoderTest, CreateOutputsComeFromWhatTheKernelWroteBack) {
  Bytes in(16), out(16);
  in.Put<uint64_t>(0, 5000);
  out.Put<uint64_t>(0, 8192).Put<uint32_t>(8, 17);  // rounded size, new handle
  const DrmCallInfo ok = DecodeDrmCall("i915", 0xC010645B, in.span(), out.span(), 0);
  EXPECT_EQ(ok.name, "DRM_IOCTL_I915_GEM_CREATE");
  EXPECT_EQ(std::get<I915GemCreateArgs>(ok.args), (I915GemCreateArgs{.size = 8192, .handle = 17}));
  EXPECT_EQ(ok.bytes_created, 8192u);

  // Failed: no output; what was asked is still shown, nothing counts as created.
  const DrmCallInfo failed = DecodeDrmCall("i915", 0xC010645B, in.span(), kNone, -12);
  EXPECT_EQ(std::get<I915GemCreateArgs>(failed.args), (I915GemCreateArgs{.size = 5000}));
  EXPECT_EQ(failed.bytes_created, 0u);

  Bytes ext(24);
  ext.Put<uint64_t>(0, 1 << 20).Put<uint32_t>(12, 1);
  const DrmCallInfo e = DecodeDrmCall("i915", 0xC018647C, ext.span(), ext.span(), 0);
  EXPECT_EQ(e.name, "DRM_IOCTL_I915_GEM_CREATE_EXT");
  EXPECT_EQ(std::get<I915GemCreateArgs>(e.args),
            (I915GemCreateArgs{.size = 1 << 20, .flags = 1, .extended = true}));
  EXPECT_EQ(e.bytes_created, 1u << 20);
}

TEST(DrmIoctlDecoderTest, I915MmapWaitAndContext) {
  Bytes mmap_in(32), mmap_out(32);
  mmap_in.Put<uint32_t>(0, 7).Put<uint64_t>(16, 3);
  mmap_out.Put<uint32_t>(0, 7).Put<uint64_t>(8, 0x1'0010'0000).Put<uint64_t>(16, 3);
  EXPECT_EQ(std::get<I915MmapOffsetArgs>(
                DecodeDrmCall("i915", 0xC0206464, mmap_in.span(), mmap_out.span(), 0).args),
            (I915MmapOffsetArgs{.handle = 7, .offset = 0x1'0010'0000, .flags = 3}));

  Bytes wait(16);
  wait.Put<uint32_t>(0, 9).Put<int64_t>(8, -1);
  const DrmCallInfo w = DecodeDrmCall("i915", 0xC010646C, wait.span(), wait.span(), 0);
  EXPECT_EQ(w.name, "DRM_IOCTL_I915_GEM_WAIT");
  EXPECT_EQ(w.call_class, DrmCallClass::kWait);
  EXPECT_EQ(std::get<I915GemWaitArgs>(w.args), (I915GemWaitArgs{.handle = 9, .timeout_ns = -1}));

  Bytes ctx_in(16), ctx_out(16);
  ctx_in.Put<uint32_t>(4, 1);
  ctx_out.Put<uint32_t>(0, 12).Put<uint32_t>(4, 1);
  const DrmCallInfo c = DecodeDrmCall("i915", 0xC010646D, ctx_in.span(), ctx_out.span(), 0);
  EXPECT_EQ(c.name, "DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT");
  EXPECT_EQ(std::get<I915ContextCreateArgs>(c.args),
            (I915ContextCreateArgs{.context_id = 12, .flags = 1}));
  // The plain create (8 bytes) shares the number.
  EXPECT_EQ(DecodeDrmCall("i915", 0xC008646D, Bytes(8).span(), kNone, 0).name,
            "DRM_IOCTL_I915_GEM_CONTEXT_CREATE");
}

TEST(DrmIoctlDecoderTest, XeSubmissionBindCreateQueueAndWait) {
  Bytes exec(56);
  exec.Put<uint32_t>(8, 4)
      .Put<uint32_t>(12, 2)
      .Put<uint64_t>(24, 0x8000'0001'0000)
      .Put<uint16_t>(32, 1);
  const DrmCallInfo e = DecodeDrmCall("xe", 0x40386449, exec.span(), kNone, 0);
  EXPECT_EQ(e.name, "DRM_IOCTL_XE_EXEC");
  EXPECT_EQ(e.call_class, DrmCallClass::kSubmission);
  EXPECT_EQ(
      std::get<XeExecArgs>(e.args),
      (XeExecArgs{
          .exec_queue_id = 4, .num_syncs = 2, .address = 0x8000'0001'0000, .num_batch_buffer = 1}));

  Bytes bind(136);
  bind.Put<uint32_t>(8, 2)                  // vm_id
      .Put<uint32_t>(12, 0)                 // exec_queue_id
      .Put<uint32_t>(20, 1)                 // num_binds
      .Put<uint32_t>(24 + 8, 33)            // bind.obj
      .Put<uint64_t>(24 + 16, 0x2000)       // bind.obj_offset
      .Put<uint64_t>(24 + 24, 0x10000)      // bind.range
      .Put<uint64_t>(24 + 32, 0x7000'0000)  // bind.addr
      .Put<uint32_t>(24 + 40, 2)            // bind.op
      .Put<uint32_t>(24 + 44, 1)            // bind.flags
      .Put<uint32_t>(108, 3);               // num_syncs
  EXPECT_EQ(std::get<XeVmBindArgs>(DecodeDrmCall("xe", 0x40886445, bind.span(), kNone, 0).args),
            (XeVmBindArgs{.vm_id = 2,
                          .exec_queue_id = 0,
                          .num_binds = 1,
                          .num_syncs = 3,
                          .op = 2,
                          .obj = 33,
                          .obj_offset = 0x2000,
                          .range = 0x10000,
                          .addr = 0x7000'0000,
                          .bind_flags = 1}));

  Bytes create_in(56), create_out(56);
  create_in.Put<uint64_t>(8, 1 << 21)
      .Put<uint32_t>(16, 2)
      .Put<uint32_t>(20, 4)
      .Put<uint32_t>(24, 5)
      .Put<uint16_t>(32, 1);
  create_out = create_in;
  create_out.Put<uint32_t>(28, 99);
  const DrmCallInfo c = DecodeDrmCall("xe", 0xC0386441, create_in.span(), create_out.span(), 0);
  EXPECT_EQ(c.call_class, DrmCallClass::kBufferCreate);
  EXPECT_EQ(c.bytes_created, 1u << 21);
  EXPECT_EQ(std::get<XeGemCreateArgs>(c.args), (XeGemCreateArgs{.size = 1 << 21,
                                                                .placement = 2,
                                                                .flags = 4,
                                                                .vm_id = 5,
                                                                .handle = 99,
                                                                .cpu_caching = 1}));

  Bytes queue_in(48), queue_out(48);
  queue_in.Put<uint16_t>(8, 1).Put<uint16_t>(10, 2).Put<uint32_t>(12, 5);
  queue_out = queue_in;
  queue_out.Put<uint32_t>(20, 7);
  EXPECT_EQ(std::get<XeExecQueueCreateArgs>(
                DecodeDrmCall("xe", 0xC0306446, queue_in.span(), queue_out.span(), 0).args),
            (XeExecQueueCreateArgs{
                .width = 1, .num_placements = 2, .vm_id = 5, .flags = 0, .exec_queue_id = 7}));

  Bytes ufence(72);
  ufence.Put<uint64_t>(8, 0x5000)
      .Put<uint16_t>(16, 3)
      .Put<uint16_t>(18, 1)
      .Put<uint64_t>(24, 8)
      .Put<uint64_t>(32, 0xff)
      .Put<int64_t>(40, 1000)
      .Put<uint32_t>(48, 7);
  const DrmCallInfo w = DecodeDrmCall("xe", 0xC048644A, ufence.span(), ufence.span(), 0);
  EXPECT_EQ(w.call_class, DrmCallClass::kWait);
  EXPECT_EQ(std::get<XeWaitUserFenceArgs>(w.args), (XeWaitUserFenceArgs{.addr = 0x5000,
                                                                        .op = 3,
                                                                        .flags = 1,
                                                                        .value = 8,
                                                                        .mask = 0xff,
                                                                        .timeout_ns = 1000,
                                                                        .exec_queue_id = 7}));
}

TEST(DrmIoctlDecoderTest, DriverSpecificNumbersDependOnTheDriver) {
  // 'd' 0x46 is i915's GETPARAM and xe's EXEC_QUEUE_CREATE.
  Bytes b(48);
  EXPECT_EQ(DecodeDrmCall("i915", 0xC0106446, b.span(), kNone, 0).name, "DRM_IOCTL_I915_GETPARAM");
  EXPECT_EQ(DecodeDrmCall("xe", 0xC0306446, b.span(), kNone, 0).name,
            "DRM_IOCTL_XE_EXEC_QUEUE_CREATE");
  // Without a known driver, only a complete command number this decoder knows is trusted.
  EXPECT_EQ(DecodeDrmCall("", 0xC0306446, b.span(), kNone, 0).name,
            "DRM_IOCTL_XE_EXEC_QUEUE_CREATE");
  const DrmCallInfo unknown = DecodeDrmCall("", 0xC0106446, b.span(), kNone, 0);
  EXPECT_EQ(unknown.name, "DRM_IOCTL_DRIVER_0x06");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(unknown.args));
  // Another driver's own commands are named after it, undecoded.
  EXPECT_EQ(DecodeDrmCall("amdgpu", 0xC0106446, b.span(), kNone, 0).name, "DRM_IOCTL_AMDGPU_0x06");
  EXPECT_EQ(DecodeDrmCall("i915", 0x40086490, b.span(), kNone, 0).name, "DRM_IOCTL_I915_0x50");
}

TEST(DrmIoctlDecoderTest, CoreCommandsAreNamedForAnyDriver) {
  EXPECT_EQ(DecodeDrmCall("", 0xC0406400, kNone, kNone, 0).name, "DRM_IOCTL_VERSION");
  EXPECT_EQ(DecodeDrmCall("i915", 0x40086409, kNone, kNone, 0).name, "DRM_IOCTL_GEM_CLOSE");
  EXPECT_EQ(DecodeDrmCall("xe", 0xC00C642D, kNone, kNone, 0).name, "DRM_IOCTL_PRIME_HANDLE_TO_FD");
  const DrmCallInfo wait = DecodeDrmCall("xe", 0xC02864C3, kNone, kNone, 0);
  EXPECT_EQ(wait.name, "DRM_IOCTL_SYNCOBJ_WAIT");
  EXPECT_EQ(wait.call_class, DrmCallClass::kWait);
  EXPECT_EQ(DecodeDrmCall("xe", 0xC03064CA, kNone, kNone, 0).call_class, DrmCallClass::kWait);
  EXPECT_EQ(DecodeDrmCall("", 0x0000643F, kNone, kNone, 0).name, "DRM_IOCTL_0x3f");
}

TEST(DrmIoctlDecoderTest, ShortOrMissingStructsAreNotDecoded) {
  // Unreadable at entry: nothing copied; a struct cut short of the decoded fields.
  EXPECT_TRUE(std::holds_alternative<std::monostate>(
      DecodeDrmCall("i915", 0x40406469, kNone, kNone, -14).args));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(
      DecodeDrmCall("i915", 0x40406469, Bytes(40).span(), kNone, 0).args));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(
      DecodeDrmCall("xe", 0x40886445, Bytes(100).span(), kNone, 0).args));
  // The name still comes from the command.
  EXPECT_EQ(DecodeDrmCall("xe", 0x40386449, kNone, kNone, 0).name, "DRM_IOCTL_XE_EXEC");
}

}  // namespace
}  // namespace xtrace
