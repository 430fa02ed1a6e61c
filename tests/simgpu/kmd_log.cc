// Exec ioctl log writer (see kmd_log.h for the format).
#include "kmd_log.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <string>

#include "config.h"

namespace simze {
namespace {

int kmd_log_fd() {
  static const int fd = [] {
    const std::string& path = config().kmd_log_path;
    if (path.empty()) return -1;
    // Appended, never truncated, one write(2) per line: processes may share the file.
    int f = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (f < 0) std::perror(("xtrace-simze: cannot open kmd log " + path).c_str());
    return f;
  }();
  return fd;
}

void write_line(const char* line, int len) {
  const int fd = kmd_log_fd();
  if (fd < 0 || len <= 0) return;
  (void)!write(fd, line, static_cast<size_t>(len));
}

long thread_id() { return syscall(SYS_gettid); }

}  // namespace

void kmd_log_i915(int fd, uint64_t before_ns, uint64_t after_ns, const I915ExecBuffer2& eb) {
  if (kmd_log_fd() < 0) return;
  char line[320];
  const int n = std::snprintf(
      line, sizeof line,
      "i915\t%d\t%ld\t%" PRIu64 "\t%" PRIu64 "\t0x%lx\t%d\t%" PRIu64 "\t%" PRIu64 "\t0x%" PRIx64
      "\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu32 "\n",
      static_cast<int>(getpid()), thread_id(), before_ns, after_ns, kI915GemExecbuffer2, fd,
      eb.rsvd1, eb.flags & 0x3f, eb.flags, eb.buffer_count, eb.batch_start_offset, eb.batch_len);
  write_line(line, n);
}

void kmd_log_xe(int fd, uint64_t before_ns, uint64_t after_ns, const XeExec& exec) {
  if (kmd_log_fd() < 0) return;
  char line[256];
  const int n = std::snprintf(line, sizeof line,
                              "xe\t%d\t%ld\t%" PRIu64 "\t%" PRIu64 "\t0x%lx\t%d\t%" PRIu32
                              "\t%" PRIu32 "\t0x%" PRIx64 "\t%u\n",
                              static_cast<int>(getpid()), thread_id(), before_ns, after_ns, kXeExec,
                              fd, exec.exec_queue_id, exec.num_syncs, exec.address,
                              static_cast<unsigned>(exec.num_batch_buffer));
  write_line(line, n);
}

}  // namespace simze
