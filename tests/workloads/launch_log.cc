// Append-only, thread-safe launch log (format in launch_log.h).
#include "launch_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ze_result.h"

namespace xtrace::workloads {

LaunchLog::LaunchLog(const std::string& path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    std::fprintf(stderr, "%s: cannot open launch log %s: %s\n", program_name(), path.c_str(),
                 std::strerror(errno));
    std::exit(1);
  }
}

LaunchLog::~LaunchLog() {
  if (fd_ >= 0) ::close(fd_);
}

void LaunchLog::record(std::string_view kernel_name, std::uint32_t x, std::uint32_t y,
                       std::uint32_t z) {
  std::string line = std::to_string(::gettid());
  line += '\t';
  line += kernel_name;
  line += '\t';
  line += std::to_string(x) + ',' + std::to_string(y) + ',' + std::to_string(z) + '\n';
  // One write() per line under the lock: lines from different threads never interleave,
  // and nothing sits in a user-space buffer if the process is killed.
  std::lock_guard lock(mutex_);
  std::string_view rest = line;
  while (!rest.empty()) {
    ssize_t n = ::write(fd_, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::fprintf(stderr, "%s: writing the launch log failed: %s\n", program_name(),
                   std::strerror(errno));
      std::_Exit(1);
    }
    rest.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace xtrace::workloads
