// DRM ioctl names and argument decoding; see drm_ioctl_decoder.h.
#include "decode/drm_ioctl_decoder.h"

#include <cstdio>
#include <cstring>
#include <optional>

#include "xtrace/drm_records.h"

namespace xtrace {
namespace {

// DRM_COMMAND_BASE..DRM_COMMAND_END: numbers each driver defines for itself (drm.h).
constexpr uint32_t kDriverBase = 0x40;
constexpr uint32_t kDriverEnd = 0xA0;

// i915_drm.h: I915_EXEC_RING_MASK.
constexpr uint64_t kI915RingMask = 0x3f;

enum class Driver { kUnknown, kI915, kXe };

// Reads a little-endian field of type T at `offset`; nullopt if the bytes do not reach it.
class StructBytes {
 public:
  explicit StructBytes(std::span<const std::byte> bytes) : bytes_(bytes) {}
  bool Has(size_t size) const { return bytes_.size() >= size; }
  template <typename T>
  T Get(size_t offset) const {
    T v{};
    if (offset + sizeof(T) <= bytes_.size()) std::memcpy(&v, bytes_.data() + offset, sizeof(T));
    return v;
  }

 private:
  std::span<const std::byte> bytes_;
};

// What a decoder sees: the struct as passed in and as written back.
struct Call {
  StructBytes in;
  StructBytes out;
};

using Decoder = std::optional<DrmIoctlArgs> (*)(const Call&);

// Each decoder needs the struct prefix that holds its input fields; outputs are read from
// what the kernel wrote back and stay 0 when the call failed.

std::optional<DrmIoctlArgs> I915Execbuffer(const Call& c) {
  if (!c.in.Has(56)) return std::nullopt;
  I915ExecbufferArgs a;
  a.buffer_count = c.in.Get<uint32_t>(8);
  a.batch_start_offset = c.in.Get<uint32_t>(12);
  a.batch_len = c.in.Get<uint32_t>(16);
  a.flags = c.in.Get<uint64_t>(40);
  a.engine = static_cast<uint32_t>(a.flags & kI915RingMask);
  a.context_id = static_cast<uint32_t>(c.in.Get<uint64_t>(48));
  return a;
}

std::optional<DrmIoctlArgs> I915GemCreate(const Call& c) {
  if (!c.in.Has(8)) return std::nullopt;
  I915GemCreateArgs a;
  a.size = c.out.Has(8) ? c.out.Get<uint64_t>(0) : c.in.Get<uint64_t>(0);
  a.handle = c.out.Get<uint32_t>(8);
  return a;
}

std::optional<DrmIoctlArgs> I915GemCreateExt(const Call& c) {
  if (!c.in.Has(16)) return std::nullopt;
  I915GemCreateArgs a;
  a.size = c.out.Has(8) ? c.out.Get<uint64_t>(0) : c.in.Get<uint64_t>(0);
  a.handle = c.out.Get<uint32_t>(8);
  a.flags = c.in.Get<uint32_t>(12);
  a.extended = true;
  return a;
}

std::optional<DrmIoctlArgs> I915MmapOffset(const Call& c) {
  if (!c.in.Has(4)) return std::nullopt;
  I915MmapOffsetArgs a;
  a.handle = c.in.Get<uint32_t>(0);
  a.offset = c.out.Get<uint64_t>(8);
  a.flags = c.in.Get<uint64_t>(16);
  return a;
}

std::optional<DrmIoctlArgs> I915GemWait(const Call& c) {
  if (!c.in.Has(16)) return std::nullopt;
  return I915GemWaitArgs{.handle = c.in.Get<uint32_t>(0),
                         .flags = c.in.Get<uint32_t>(4),
                         .timeout_ns = c.in.Get<int64_t>(8)};
}

std::optional<DrmIoctlArgs> I915ContextCreate(const Call& c) {
  if (!c.in.Has(8)) return std::nullopt;
  return I915ContextCreateArgs{.context_id = c.out.Get<uint32_t>(0),
                               .flags = c.in.Get<uint32_t>(4)};
}

std::optional<DrmIoctlArgs> XeExec(const Call& c) {
  if (!c.in.Has(34)) return std::nullopt;
  return XeExecArgs{.exec_queue_id = c.in.Get<uint32_t>(8),
                    .num_syncs = c.in.Get<uint32_t>(12),
                    .address = c.in.Get<uint64_t>(24),
                    .num_batch_buffer = c.in.Get<uint16_t>(32)};
}

std::optional<DrmIoctlArgs> XeVmBind(const Call& c) {
  if (!c.in.Has(112)) return std::nullopt;
  XeVmBindArgs a;
  a.vm_id = c.in.Get<uint32_t>(8);
  a.exec_queue_id = c.in.Get<uint32_t>(12);
  a.num_binds = c.in.Get<uint32_t>(20);
  a.num_syncs = c.in.Get<uint32_t>(108);
  if (a.num_binds == 1) {  // the bind op is inline at 24 (a struct drm_xe_vm_bind_op)
    a.obj = c.in.Get<uint32_t>(24 + 8);
    a.obj_offset = c.in.Get<uint64_t>(24 + 16);
    a.range = c.in.Get<uint64_t>(24 + 24);
    a.addr = c.in.Get<uint64_t>(24 + 32);
    a.op = c.in.Get<uint32_t>(24 + 40);
    a.bind_flags = c.in.Get<uint32_t>(24 + 44);
  }
  return a;
}

std::optional<DrmIoctlArgs> XeGemCreate(const Call& c) {
  if (!c.in.Has(34)) return std::nullopt;
  return XeGemCreateArgs{.size = c.in.Get<uint64_t>(8),
                         .placement = c.in.Get<uint32_t>(16),
                         .flags = c.in.Get<uint32_t>(20),
                         .vm_id = c.in.Get<uint32_t>(24),
                         .handle = c.out.Get<uint32_t>(28),
                         .cpu_caching = c.in.Get<uint16_t>(32)};
}

std::optional<DrmIoctlArgs> XeExecQueueCreate(const Call& c) {
  if (!c.in.Has(20)) return std::nullopt;
  return XeExecQueueCreateArgs{.width = c.in.Get<uint16_t>(8),
                               .num_placements = c.in.Get<uint16_t>(10),
                               .vm_id = c.in.Get<uint32_t>(12),
                               .flags = c.in.Get<uint32_t>(16),
                               .exec_queue_id = c.out.Get<uint32_t>(20)};
}

std::optional<DrmIoctlArgs> XeWaitUserFence(const Call& c) {
  if (!c.in.Has(52)) return std::nullopt;
  return XeWaitUserFenceArgs{.addr = c.in.Get<uint64_t>(8),
                             .op = c.in.Get<uint16_t>(16),
                             .flags = c.in.Get<uint16_t>(18),
                             .value = c.in.Get<uint64_t>(24),
                             .mask = c.in.Get<uint64_t>(32),
                             .timeout_ns = c.in.Get<int64_t>(40),
                             .exec_queue_id = c.in.Get<uint32_t>(48)};
}

struct Command {
  Driver driver;
  uint32_t nr;  // within 'd'
  const char* name;
  Decoder decode;  // nullptr: named only
  DrmCallClass call_class;
  uint32_t full_cmd;  // the uapi's complete number, for fds of unknown driver; 0: none
};

// Driver-specific commands this decoder decodes or names (numbers: DRM_COMMAND_BASE + nr).
// Commands that share a number (EXECBUFFER2 and its _WR twin, CONTEXT_CREATE and _EXT,
// GEM_MMAP_GTT and GEM_MMAP_OFFSET) are told apart below by direction or size.
constexpr Command kDriverCommands[] = {
    {Driver::kI915, 0x46, "DRM_IOCTL_I915_GETPARAM", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x47, "DRM_IOCTL_I915_SETPARAM", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x54, "DRM_IOCTL_I915_GEM_EXECBUFFER", nullptr, DrmCallClass::kSubmission, 0},
    {Driver::kI915, 0x55, "DRM_IOCTL_I915_GEM_PIN", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x56, "DRM_IOCTL_I915_GEM_UNPIN", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x57, "DRM_IOCTL_I915_GEM_BUSY", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x58, "DRM_IOCTL_I915_GEM_THROTTLE", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x5b, "DRM_IOCTL_I915_GEM_CREATE", &I915GemCreate, DrmCallClass::kBufferCreate,
     0xC010645B},
    {Driver::kI915, 0x5c, "DRM_IOCTL_I915_GEM_PREAD", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x5d, "DRM_IOCTL_I915_GEM_PWRITE", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x5e, "DRM_IOCTL_I915_GEM_MMAP", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x5f, "DRM_IOCTL_I915_GEM_SET_DOMAIN", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x60, "DRM_IOCTL_I915_GEM_SW_FINISH", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x61, "DRM_IOCTL_I915_GEM_SET_TILING", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x62, "DRM_IOCTL_I915_GEM_GET_TILING", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x63, "DRM_IOCTL_I915_GEM_GET_APERTURE", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x64, "DRM_IOCTL_I915_GEM_MMAP_OFFSET", &I915MmapOffset, DrmCallClass::kOther,
     0xC0206464},
    {Driver::kI915, 0x66, "DRM_IOCTL_I915_GEM_MADVISE", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x69, "DRM_IOCTL_I915_GEM_EXECBUFFER2", &I915Execbuffer,
     DrmCallClass::kSubmission, 0x40406469},
    {Driver::kI915, 0x69, "DRM_IOCTL_I915_GEM_EXECBUFFER2_WR", &I915Execbuffer,
     DrmCallClass::kSubmission, 0xC0406469},
    {Driver::kI915, 0x6c, "DRM_IOCTL_I915_GEM_WAIT", &I915GemWait, DrmCallClass::kWait, 0xC010646C},
    {Driver::kI915, 0x6d, "DRM_IOCTL_I915_GEM_CONTEXT_CREATE", &I915ContextCreate,
     DrmCallClass::kOther, 0xC008646D},
    {Driver::kI915, 0x6d, "DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT", &I915ContextCreate,
     DrmCallClass::kOther, 0xC010646D},
    {Driver::kI915, 0x6e, "DRM_IOCTL_I915_GEM_CONTEXT_DESTROY", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x6f, "DRM_IOCTL_I915_GEM_SET_CACHING", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x70, "DRM_IOCTL_I915_GEM_GET_CACHING", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x71, "DRM_IOCTL_I915_REG_READ", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x72, "DRM_IOCTL_I915_GET_RESET_STATS", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x73, "DRM_IOCTL_I915_GEM_USERPTR", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x74, "DRM_IOCTL_I915_GEM_CONTEXT_GETPARAM", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x75, "DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x76, "DRM_IOCTL_I915_PERF_OPEN", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x77, "DRM_IOCTL_I915_PERF_ADD_CONFIG", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x78, "DRM_IOCTL_I915_PERF_REMOVE_CONFIG", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x79, "DRM_IOCTL_I915_QUERY", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x7a, "DRM_IOCTL_I915_GEM_VM_CREATE", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x7b, "DRM_IOCTL_I915_GEM_VM_DESTROY", nullptr, DrmCallClass::kOther, 0},
    {Driver::kI915, 0x7c, "DRM_IOCTL_I915_GEM_CREATE_EXT", &I915GemCreateExt,
     DrmCallClass::kBufferCreate, 0xC018647C},
    {Driver::kXe, 0x40, "DRM_IOCTL_XE_DEVICE_QUERY", nullptr, DrmCallClass::kOther, 0},
    {Driver::kXe, 0x41, "DRM_IOCTL_XE_GEM_CREATE", &XeGemCreate, DrmCallClass::kBufferCreate,
     0xC0386441},
    {Driver::kXe, 0x42, "DRM_IOCTL_XE_GEM_MMAP_OFFSET", nullptr, DrmCallClass::kOther, 0},
    {Driver::kXe, 0x43, "DRM_IOCTL_XE_VM_CREATE", nullptr, DrmCallClass::kOther, 0},
    {Driver::kXe, 0x44, "DRM_IOCTL_XE_VM_DESTROY", nullptr, DrmCallClass::kOther, 0},
    {Driver::kXe, 0x45, "DRM_IOCTL_XE_VM_BIND", &XeVmBind, DrmCallClass::kOther, 0x40886445},
    {Driver::kXe, 0x46, "DRM_IOCTL_XE_EXEC_QUEUE_CREATE", &XeExecQueueCreate, DrmCallClass::kOther,
     0xC0306446},
    {Driver::kXe, 0x47, "DRM_IOCTL_XE_EXEC_QUEUE_DESTROY", nullptr, DrmCallClass::kOther, 0},
    {Driver::kXe, 0x48, "DRM_IOCTL_XE_EXEC_QUEUE_GET_PROPERTY", nullptr, DrmCallClass::kOther, 0},
    {Driver::kXe, 0x49, "DRM_IOCTL_XE_EXEC", &XeExec, DrmCallClass::kSubmission, 0x40386449},
    {Driver::kXe, 0x4a, "DRM_IOCTL_XE_WAIT_USER_FENCE", &XeWaitUserFence, DrmCallClass::kWait,
     0xC048644A},
    {Driver::kXe, 0x4b, "DRM_IOCTL_XE_OBSERVATION", nullptr, DrmCallClass::kOther, 0},
};

struct CoreCommand {
  uint32_t nr;
  const char* name;
  DrmCallClass call_class;
};

// The common DRM core commands (drm.h), named whatever the driver.
constexpr CoreCommand kCoreCommands[] = {
    {0x00, "DRM_IOCTL_VERSION", DrmCallClass::kOther},
    {0x01, "DRM_IOCTL_GET_UNIQUE", DrmCallClass::kOther},
    {0x02, "DRM_IOCTL_GET_MAGIC", DrmCallClass::kOther},
    {0x03, "DRM_IOCTL_IRQ_BUSID", DrmCallClass::kOther},
    {0x04, "DRM_IOCTL_GET_MAP", DrmCallClass::kOther},
    {0x05, "DRM_IOCTL_GET_CLIENT", DrmCallClass::kOther},
    {0x06, "DRM_IOCTL_GET_STATS", DrmCallClass::kOther},
    {0x07, "DRM_IOCTL_SET_VERSION", DrmCallClass::kOther},
    {0x08, "DRM_IOCTL_MODESET_CTL", DrmCallClass::kOther},
    {0x09, "DRM_IOCTL_GEM_CLOSE", DrmCallClass::kOther},
    {0x0a, "DRM_IOCTL_GEM_FLINK", DrmCallClass::kOther},
    {0x0b, "DRM_IOCTL_GEM_OPEN", DrmCallClass::kOther},
    {0x0c, "DRM_IOCTL_GET_CAP", DrmCallClass::kOther},
    {0x0d, "DRM_IOCTL_SET_CLIENT_CAP", DrmCallClass::kOther},
    {0x10, "DRM_IOCTL_SET_UNIQUE", DrmCallClass::kOther},
    {0x11, "DRM_IOCTL_AUTH_MAGIC", DrmCallClass::kOther},
    {0x1e, "DRM_IOCTL_SET_MASTER", DrmCallClass::kOther},
    {0x1f, "DRM_IOCTL_DROP_MASTER", DrmCallClass::kOther},
    {0x2d, "DRM_IOCTL_PRIME_HANDLE_TO_FD", DrmCallClass::kOther},
    {0x2e, "DRM_IOCTL_PRIME_FD_TO_HANDLE", DrmCallClass::kOther},
    {0x3a, "DRM_IOCTL_WAIT_VBLANK", DrmCallClass::kOther},
    {0x3b, "DRM_IOCTL_CRTC_GET_SEQUENCE", DrmCallClass::kOther},
    {0x3c, "DRM_IOCTL_CRTC_QUEUE_SEQUENCE", DrmCallClass::kOther},
    {0xa0, "DRM_IOCTL_MODE_GETRESOURCES", DrmCallClass::kOther},
    {0xa1, "DRM_IOCTL_MODE_GETCRTC", DrmCallClass::kOther},
    {0xa2, "DRM_IOCTL_MODE_SETCRTC", DrmCallClass::kOther},
    {0xa3, "DRM_IOCTL_MODE_CURSOR", DrmCallClass::kOther},
    {0xa4, "DRM_IOCTL_MODE_GETGAMMA", DrmCallClass::kOther},
    {0xa5, "DRM_IOCTL_MODE_SETGAMMA", DrmCallClass::kOther},
    {0xa6, "DRM_IOCTL_MODE_GETENCODER", DrmCallClass::kOther},
    {0xa7, "DRM_IOCTL_MODE_GETCONNECTOR", DrmCallClass::kOther},
    {0xaa, "DRM_IOCTL_MODE_GETPROPERTY", DrmCallClass::kOther},
    {0xab, "DRM_IOCTL_MODE_SETPROPERTY", DrmCallClass::kOther},
    {0xac, "DRM_IOCTL_MODE_GETPROPBLOB", DrmCallClass::kOther},
    {0xad, "DRM_IOCTL_MODE_GETFB", DrmCallClass::kOther},
    {0xae, "DRM_IOCTL_MODE_ADDFB", DrmCallClass::kOther},
    {0xaf, "DRM_IOCTL_MODE_RMFB", DrmCallClass::kOther},
    {0xb0, "DRM_IOCTL_MODE_PAGE_FLIP", DrmCallClass::kOther},
    {0xb1, "DRM_IOCTL_MODE_DIRTYFB", DrmCallClass::kOther},
    {0xb2, "DRM_IOCTL_MODE_CREATE_DUMB", DrmCallClass::kOther},
    {0xb3, "DRM_IOCTL_MODE_MAP_DUMB", DrmCallClass::kOther},
    {0xb4, "DRM_IOCTL_MODE_DESTROY_DUMB", DrmCallClass::kOther},
    {0xb5, "DRM_IOCTL_MODE_GETPLANERESOURCES", DrmCallClass::kOther},
    {0xb6, "DRM_IOCTL_MODE_GETPLANE", DrmCallClass::kOther},
    {0xb7, "DRM_IOCTL_MODE_SETPLANE", DrmCallClass::kOther},
    {0xb8, "DRM_IOCTL_MODE_ADDFB2", DrmCallClass::kOther},
    {0xb9, "DRM_IOCTL_MODE_OBJ_GETPROPERTIES", DrmCallClass::kOther},
    {0xba, "DRM_IOCTL_MODE_OBJ_SETPROPERTY", DrmCallClass::kOther},
    {0xbb, "DRM_IOCTL_MODE_CURSOR2", DrmCallClass::kOther},
    {0xbc, "DRM_IOCTL_MODE_ATOMIC", DrmCallClass::kOther},
    {0xbd, "DRM_IOCTL_MODE_CREATEPROPBLOB", DrmCallClass::kOther},
    {0xbe, "DRM_IOCTL_MODE_DESTROYPROPBLOB", DrmCallClass::kOther},
    {0xbf, "DRM_IOCTL_SYNCOBJ_CREATE", DrmCallClass::kOther},
    {0xc0, "DRM_IOCTL_SYNCOBJ_DESTROY", DrmCallClass::kOther},
    {0xc1, "DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD", DrmCallClass::kOther},
    {0xc2, "DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE", DrmCallClass::kOther},
    {0xc3, "DRM_IOCTL_SYNCOBJ_WAIT", DrmCallClass::kWait},
    {0xc4, "DRM_IOCTL_SYNCOBJ_RESET", DrmCallClass::kOther},
    {0xc5, "DRM_IOCTL_SYNCOBJ_SIGNAL", DrmCallClass::kOther},
    {0xc6, "DRM_IOCTL_MODE_CREATE_LEASE", DrmCallClass::kOther},
    {0xc7, "DRM_IOCTL_MODE_LIST_LESSEES", DrmCallClass::kOther},
    {0xc8, "DRM_IOCTL_MODE_GET_LEASE", DrmCallClass::kOther},
    {0xc9, "DRM_IOCTL_MODE_REVOKE_LEASE", DrmCallClass::kOther},
    {0xca, "DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT", DrmCallClass::kWait},
    {0xcb, "DRM_IOCTL_SYNCOBJ_QUERY", DrmCallClass::kOther},
    {0xcc, "DRM_IOCTL_SYNCOBJ_TRANSFER", DrmCallClass::kOther},
    {0xcd, "DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL", DrmCallClass::kOther},
    {0xce, "DRM_IOCTL_MODE_GETFB2", DrmCallClass::kOther},
    {0xcf, "DRM_IOCTL_SYNCOBJ_EVENTFD", DrmCallClass::kOther},
};

Driver DriverNamed(std::string_view name) {
  if (name == "i915") return Driver::kI915;
  if (name == "xe") return Driver::kXe;
  return Driver::kUnknown;
}

// Picks among commands sharing a number by what sets them apart.
bool Distinguishes(const Command& c, uint32_t cmd) {
  if (c.full_cmd == 0) return true;
  const uint32_t dir = XT_IOC_DIR(cmd), size = XT_IOC_SIZE(cmd);
  const uint32_t want_dir = XT_IOC_DIR(c.full_cmd), want_size = XT_IOC_SIZE(c.full_cmd);
  if (c.decode == &I915Execbuffer) return (dir & XT_IOC_READ) == (want_dir & XT_IOC_READ);
  if (c.decode == &I915ContextCreate) return (size >= 16) == (want_size >= 16);
  return true;
}

const Command* FindDriverCommand(Driver driver, uint32_t cmd) {
  const uint32_t nr = XT_IOC_NR(cmd);
  for (const Command& c : kDriverCommands) {
    if (driver == Driver::kUnknown) {
      if (c.full_cmd == cmd) return &c;
    } else if (c.driver == driver && c.nr == nr && Distinguishes(c, cmd)) {
      return &c;
    }
  }
  return nullptr;
}

std::string Unnamed(std::string_view prefix, uint32_t nr) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*s0x%02x", static_cast<int>(prefix.size()), prefix.data(), nr);
  return buf;
}

std::string UpperCase(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

}  // namespace

DrmCallInfo DecodeDrmCall(std::string_view driver, uint32_t cmd, std::span<const std::byte> in,
                          std::span<const std::byte> out, int64_t result) {
  DrmCallInfo info;
  const uint32_t nr = XT_IOC_NR(cmd);
  if (nr < kDriverBase || nr >= kDriverEnd) {
    for (const CoreCommand& c : kCoreCommands) {
      if (c.nr != nr) continue;
      info.name = c.name;
      info.call_class = c.call_class;
      return info;
    }
    info.name = Unnamed("DRM_IOCTL_", nr);
    return info;
  }
  const Command* c = FindDriverCommand(DriverNamed(driver), cmd);
  if (!c) {
    info.name = Unnamed(
        driver.empty() ? std::string("DRM_IOCTL_DRIVER_") : "DRM_IOCTL_" + UpperCase(driver) + "_",
        nr - kDriverBase);
    return info;
  }
  info.name = c->name;
  info.call_class = c->call_class;
  if (c->decode) {
    const Call call{StructBytes(in), StructBytes(out)};
    if (auto args = c->decode(call)) info.args = std::move(*args);
  }
  if (c->call_class == DrmCallClass::kBufferCreate && result >= 0) {
    if (const auto* a = std::get_if<I915GemCreateArgs>(&info.args)) info.bytes_created = a->size;
    if (const auto* a = std::get_if<XeGemCreateArgs>(&info.args)) info.bytes_created = a->size;
  }
  return info;
}

}  // namespace xtrace
