// drm_ioctls: a program that issues DRM ioctl command numbers directly — no Level Zero, no
// GPU — the way an OpenCL or media driver talks to i915/xe, plus terminal ioctls that are
// not DRM, and DRM commands with NULL and unmapped argument pointers. Its fd is /dev/null,
// so the kernel answers ENOTTY; what a tracer sees at the syscall is what a real driver
// would have passed. It logs every DRM ioctl it issues, for tests to compare against.
#include <fcntl.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "control_signals.h"
#include "workload_cli.h"
#include "ze_result.h"

namespace {

constexpr const char kHelp[] = R"(usage: drm_ioctls [options]

Issues DRM ioctl commands on /dev/null from worker threads (named xt-drm-<t>), without Level
Zero: per repetition, i915 GEM_CREATE, GEM_CREATE_EXT, GEM_MMAP_OFFSET, GEM_CONTEXT_CREATE_EXT,
GEM_EXECBUFFER2, GEM_EXECBUFFER2_WR, GEM_WAIT; xe GEM_CREATE, EXEC_QUEUE_CREATE, VM_BIND, EXEC,
WAIT_USER_FENCE; DRM_IOCTL_VERSION and an unknown driver-specific number; EXECBUFFER2 with a
NULL and with an unmapped argument pointer; and, in between, the terminal ioctls TCGETS and
FIONREAD, which are not DRM commands. Values differ by thread and repetition.

Options:
  --threads T        worker threads (default 1, 1..64)
  --repeat R         repetitions per thread (default 1, 1..100000)
  --log FILE         append "<tid>\t<cmd>\t<fields>" per DRM ioctl issued: cmd as 0x hex;
                     fields "key=value ..." as passed, "unreadable" for a bad pointer, "-"
                     for a command with nothing to decode
  --wait-for-signal  print "ready <pid>" and start only at SIGUSR1
  --help             this text

Output: "ready <pid>" (with --wait-for-signal), then "done ioctls=<n>" (DRM ioctls issued).
Exit status: 0, or 2 on a usage error.
)";

// uapi layouts (i915_drm.h, xe_drm.h, drm.h), which Debian's kernel headers do not ship.
struct I915GemCreate {
  uint64_t size;
  uint32_t handle, pad;
};
struct I915GemCreateExt {
  uint64_t size;
  uint32_t handle, flags;
  uint64_t extensions;
};
struct I915MmapOffset {
  uint32_t handle, pad;
  uint64_t offset, flags, extensions;
};
struct I915ContextCreateExt {
  uint32_t ctx_id, flags;
  uint64_t extensions;
};
struct I915Execbuffer2 {
  uint64_t buffers_ptr;
  uint32_t buffer_count, batch_start_offset, batch_len, dr1, dr4, num_cliprects;
  uint64_t cliprects_ptr, flags, rsvd1, rsvd2;
};
struct I915GemWait {
  uint32_t bo_handle, flags;
  int64_t timeout_ns;
};
struct XeGemCreate {
  uint64_t extensions, size;
  uint32_t placement, flags, vm_id, handle;
  uint16_t cpu_caching, pad[3];
  uint64_t reserved[2];
};
struct XeExecQueueCreate {
  uint64_t extensions;
  uint16_t width, num_placements;
  uint32_t vm_id, flags, exec_queue_id;
  uint64_t instances, reserved[2];
};
struct XeVmBindOp {
  uint64_t extensions;
  uint32_t obj;
  uint16_t pat_index, pad;
  uint64_t obj_offset, range, addr;
  uint32_t op, flags, prefetch_mem_region_instance, pad2;
  uint64_t reserved[3];
};
struct XeVmBind {
  uint64_t extensions;
  uint32_t vm_id, exec_queue_id, pad, num_binds;
  XeVmBindOp bind;
  uint32_t pad2, num_syncs;
  uint64_t syncs, reserved[2];
};
struct XeExec {
  uint64_t extensions;
  uint32_t exec_queue_id, num_syncs;
  uint64_t syncs, address;
  uint16_t num_batch_buffer, pad[3];
  uint64_t reserved[2];
};
struct XeWaitUserFence {
  uint64_t extensions, addr;
  uint16_t op, flags;
  uint32_t pad;
  uint64_t value, mask;
  int64_t timeout;
  uint32_t exec_queue_id, pad2;
  uint64_t reserved[2];
};
struct DrmVersion {
  int major, minor, patch;
  size_t name_len;
  char* name;
  size_t date_len;
  char* date;
  size_t desc_len;
  char* desc;
};

// The command numbers encode the struct sizes: a layout slip fails to compile.
constexpr unsigned long Size(unsigned long cmd) { return (cmd >> 16) & 0x3fff; }
constexpr unsigned long kI915GemCreate = 0xC010645B;
constexpr unsigned long kI915GemCreateExt = 0xC018647C;
constexpr unsigned long kI915MmapOffset = 0xC0206464;
constexpr unsigned long kI915ContextCreateExt = 0xC010646D;
constexpr unsigned long kI915Execbuffer2 = 0x40406469;
constexpr unsigned long kI915Execbuffer2Wr = 0xC0406469;
constexpr unsigned long kI915GemWait = 0xC010646C;
constexpr unsigned long kXeGemCreate = 0xC0386441;
constexpr unsigned long kXeExecQueueCreate = 0xC0306446;
constexpr unsigned long kXeVmBind = 0x40886445;
constexpr unsigned long kXeExec = 0x40386449;
constexpr unsigned long kXeWaitUserFence = 0xC048644A;
constexpr unsigned long kDrmVersion = 0xC0406400;
constexpr unsigned long kUnknownDriverCommand = 0x4008649F;  // _IOW('d', 0x9f, u64)
static_assert(Size(kI915GemCreate) == sizeof(I915GemCreate));
static_assert(Size(kI915GemCreateExt) == sizeof(I915GemCreateExt));
static_assert(Size(kI915MmapOffset) == sizeof(I915MmapOffset));
static_assert(Size(kI915ContextCreateExt) == sizeof(I915ContextCreateExt));
static_assert(Size(kI915Execbuffer2) == sizeof(I915Execbuffer2));
static_assert(Size(kI915GemWait) == sizeof(I915GemWait));
static_assert(Size(kXeGemCreate) == sizeof(XeGemCreate));
static_assert(Size(kXeExecQueueCreate) == sizeof(XeExecQueueCreate));
static_assert(Size(kXeVmBind) == sizeof(XeVmBind));
static_assert(Size(kXeExec) == sizeof(XeExec));
static_assert(Size(kXeWaitUserFence) == sizeof(XeWaitUserFence));
static_assert(Size(kDrmVersion) == sizeof(DrmVersion));

struct Options {
  uint64_t threads = 1;
  uint64_t repeat = 1;
  std::string log_path;
  bool wait_for_signal = false;
};

class IoctlLog {
 public:
  explicit IoctlLog(const std::string& path) {
    if (!path.empty()) fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  }
  ~IoctlLog() {
    if (fd_ >= 0) close(fd_);
  }
  void Write(unsigned long cmd, const std::string& fields) {
    char head[64];
    const int n = std::snprintf(head, sizeof head, "%ld\t0x%lx\t", syscall(SYS_gettid), cmd);
    const std::string line = std::string(head, static_cast<size_t>(n)) + fields + "\n";
    if (fd_ >= 0) (void)!write(fd_, line.data(), line.size());  // one write: lines stay whole
  }

 private:
  int fd_ = -1;
};

std::string Fields(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Fields(const char* format, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, format);
  std::vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  return buf;
}

// One repetition on one thread: `k` makes every value distinct.
uint64_t IssueRound(int fd, IoctlLog& log, uint32_t k, void* unmapped) {
  uint64_t issued = 0;
  auto drm = [&](unsigned long cmd, void* arg, const std::string& fields) {
    (void)ioctl(fd, cmd, arg);
    log.Write(cmd, fields);
    ++issued;
  };
  termios tio{};
  int pending = 0;

  I915GemCreate create{.size = 4096ull * (k + 1), .handle = 0, .pad = 0};
  drm(kI915GemCreate, &create, Fields("size=%" PRIu64, create.size));
  I915GemCreateExt create_ext{
      .size = 65536ull * (k + 1), .handle = 0, .flags = k & 1, .extensions = 0};
  drm(kI915GemCreateExt, &create_ext,
      Fields("size=%" PRIu64 " flags=0x%x", create_ext.size, create_ext.flags));
  I915MmapOffset mmap_offset{.handle = 40 + k, .pad = 0, .offset = 0, .flags = 3, .extensions = 0};
  drm(kI915MmapOffset, &mmap_offset,
      Fields("handle=%u flags=%" PRIu64, mmap_offset.handle, mmap_offset.flags));
  I915ContextCreateExt context{.ctx_id = 0, .flags = 2, .extensions = 0};
  drm(kI915ContextCreateExt, &context, Fields("flags=0x%x", context.flags));

  (void)ioctl(fd, TCGETS, &tio);  // not DRM: a tracer must not show it

  I915Execbuffer2 eb{};
  eb.buffer_count = 2 + k % 5;
  eb.batch_start_offset = 0x40 * k;
  eb.batch_len = 64 * (k + 1) + 8;
  eb.flags = 1 | (1u << 11) | (1u << 17);  // RENDER | NO_RELOC | FENCE_OUT
  eb.rsvd1 = 100 + k;
  const std::string eb_fields = Fields("context_id=%" PRIu64 " engine=%" PRIu64
                                       " buffer_count=%u batch_start_offset=%u"
                                       " batch_len=%u flags=0x%" PRIx64,
                                       eb.rsvd1, eb.flags & 0x3f, eb.buffer_count,
                                       eb.batch_start_offset, eb.batch_len, eb.flags);
  drm(kI915Execbuffer2, &eb, eb_fields);
  eb.flags = 3;  // BLT
  drm(kI915Execbuffer2Wr, &eb,
      Fields("context_id=%" PRIu64 " engine=3 buffer_count=%u batch_start_offset=%u"
             " batch_len=%u flags=0x3",
             eb.rsvd1, eb.buffer_count, eb.batch_start_offset, eb.batch_len));
  I915GemWait wait{.bo_handle = 7 + k, .flags = 0, .timeout_ns = 1'000'000'000 + k};
  drm(kI915GemWait, &wait,
      Fields("handle=%u timeout_ns=%" PRId64, wait.bo_handle, wait.timeout_ns));

  XeGemCreate xe_create{};
  xe_create.size = 2ull << 20;
  xe_create.placement = 1u << (k % 3);
  xe_create.flags = 4;
  xe_create.vm_id = 9;
  xe_create.cpu_caching = 2;
  drm(kXeGemCreate, &xe_create,
      Fields("size=%" PRIu64 " placement=0x%x flags=0x%x vm_id=%u cpu_caching=%u", xe_create.size,
             xe_create.placement, xe_create.flags, xe_create.vm_id,
             static_cast<unsigned>(xe_create.cpu_caching)));
  XeExecQueueCreate queue{};
  queue.width = 1;
  queue.num_placements = 1 + k % 2;
  queue.vm_id = 9;
  drm(kXeExecQueueCreate, &queue,
      Fields("width=%u num_placements=%u vm_id=%u flags=0x0", static_cast<unsigned>(queue.width),
             static_cast<unsigned>(queue.num_placements), queue.vm_id));
  XeVmBind bind{};
  bind.vm_id = 9;
  bind.exec_queue_id = 0;
  bind.num_binds = 1;
  bind.bind.obj = 3 + k;
  bind.bind.obj_offset = 0x1000;
  bind.bind.range = 0x10000;
  bind.bind.addr = 0x7000'0000ull + 0x10000ull * k;
  bind.bind.op = 0;  // MAP
  bind.num_syncs = 1;
  drm(kXeVmBind, &bind,
      Fields("vm_id=9 exec_queue_id=0 num_binds=1 num_syncs=1 op=0 obj=%u obj_offset=0x1000"
             " range=65536 addr=0x%" PRIx64,
             bind.bind.obj, bind.bind.addr));

  (void)ioctl(fd, FIONREAD, &pending);  // not DRM either

  XeExec exec{};
  exec.exec_queue_id = 20 + k;
  exec.num_syncs = k % 3;
  exec.address = 0x1'0000'0000ull + 0x100ull * k;
  exec.num_batch_buffer = 1;
  drm(kXeExec, &exec,
      Fields("exec_queue_id=%u num_syncs=%u address=0x%" PRIx64 " num_batch_buffer=1",
             exec.exec_queue_id, exec.num_syncs, exec.address));
  XeWaitUserFence ufence{};
  ufence.addr = 0x5000'0000ull + 8 * k;
  ufence.op = 0;
  ufence.value = k + 1;
  ufence.mask = ~0ull;
  ufence.timeout = -1;
  ufence.exec_queue_id = exec.exec_queue_id;
  drm(kXeWaitUserFence, &ufence,
      Fields("addr=0x%" PRIx64 " op=0 value=0x%" PRIx64 " mask=0xffffffffffffffff"
             " timeout_ns=-1 exec_queue_id=%u",
             ufence.addr, ufence.value, ufence.exec_queue_id));

  DrmVersion version{};
  drm(kDrmVersion, &version, "-");
  uint64_t payload = k;
  drm(kUnknownDriverCommand, &payload, "-");
  drm(kI915Execbuffer2, nullptr, "unreadable");
  drm(kI915Execbuffer2, unmapped, "unreadable");
  return issued;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace xtrace::workloads;
  block_control_signals();
  set_program_name(argv[0]);
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kHelp, stdout);
      return 0;
    } else if (arg == "--threads") {
      opt.threads = parse_count(arg, option_value(argc, argv, i), 1, 64);
    } else if (arg == "--repeat") {
      opt.repeat = parse_count(arg, option_value(argc, argv, i), 1, 100000);
    } else if (arg == "--log") {
      opt.log_path = option_value(argc, argv, i);
    } else if (arg == "--wait-for-signal") {
      opt.wait_for_signal = true;
    } else {
      usage_error("unknown argument \"" + std::string(arg) + "\"");
    }
  }
  if (opt.wait_for_signal) {
    std::printf("ready %d\n", static_cast<int>(getpid()));
    std::fflush(stdout);
    wait_control_signal(std::nullopt);
  }

  const int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  // A page that is certainly not mapped: mapped, then unmapped.
  void* unmapped = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(unmapped, 4096);
  IoctlLog log(opt.log_path);

  std::vector<std::thread> workers;
  std::vector<uint64_t> issued(opt.threads, 0);
  for (uint64_t t = 0; t < opt.threads; ++t) {
    workers.emplace_back([&, t] {
      pthread_setname_np(pthread_self(), ("xt-drm-" + std::to_string(t)).c_str());
      for (uint64_t r = 0; r < opt.repeat; ++r)
        issued[t] += IssueRound(fd, log, static_cast<uint32_t>(t * 1000 + r), unmapped);
    });
  }
  uint64_t total = 0;
  for (uint64_t t = 0; t < opt.threads; ++t) {
    workers[t].join();
    total += issued[t];
  }
  close(fd);
  std::printf("done ioctls=%" PRIu64 "\n", total);
  return 0;
}
