// Host facts for the log header.
#include "capture/output/host_info.h"

#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <fstream>

#include "base/version.h"

namespace xtrace {
namespace {

uint64_t Now(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

}  // namespace

ClockAnchor ReadClockAnchor() {
  ClockAnchor a;
  const uint64_t before = Now(CLOCK_MONOTONIC);
  a.monotonic_raw_ns = Now(CLOCK_MONOTONIC_RAW);
  a.realtime_ns = Now(CLOCK_REALTIME);
  const uint64_t after = Now(CLOCK_MONOTONIC);
  a.monotonic_ns = before + (after - before) / 2;
  return a;
}

LogHeader MakeLogHeader(const std::string& xtrace_command_line) {
  LogHeader h;
  h.xtrace_version = kXtraceVersion;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) h.host = host;
  utsname u{};
  if (uname(&u) == 0) h.kernel_release = u.release;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::getline(boot, h.boot_id);
  h.command_line = xtrace_command_line;
  h.start_clock = ReadClockAnchor();
  return h;
}

}  // namespace xtrace
