// Ground-truth file writer (see ground_truth.h for the format).
#include "ground_truth.h"

#include <fcntl.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <string>

#include "config.h"

namespace simze {
namespace {

int ground_truth_fd() {
  static const int fd = [] {
    const std::string& path = config().ground_truth_path;
    if (path.empty()) return -1;
    // Appended, never truncated: several processes (or exec'd children) may share one file.
    int f = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (f < 0) std::perror(("xtrace-simze: cannot open ground truth " + path).c_str());
    return f;
  }();
  return fd;
}

// Tabs and newlines would break the record format; names rarely contain them, but be safe.
void append_field(std::string& line, std::string_view text) {
  for (char c : text) line.push_back(c == '\t' || c == '\n' || c == '\r' ? ' ' : c);
}

}  // namespace

bool ground_truth_enabled() { return ground_truth_fd() >= 0; }

void ground_truth_write(const GroundTruthRecord& r) {
  int fd = ground_truth_fd();
  if (fd < 0) return;
  std::string line;
  line.reserve(160 + r.name.size());
  append_field(line, r.kind);
  line.push_back('\t');
  append_field(line, r.name);
  char numbers[320];
  int n = std::snprintf(numbers, sizeof numbers,
                        "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t0x%" PRIxPTR
                        "\t%" PRIu64 "\t%d\t%" PRIu32 "\t0x%" PRIxPTR "\t%" PRIu64 "\t%d\t%" PRIu64
                        "\n",
                        r.start.mono_ns, r.end.mono_ns, r.start_ticks, r.end_ticks, r.queue,
                        r.submission, static_cast<int>(getpid()), r.device, r.cmdlist,
                        r.submit_mono_ns, r.submit_tid, r.bytes);
  line.append(numbers, static_cast<size_t>(n));
  // One write per record keeps lines whole even with concurrent writers (O_APPEND).
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w <= 0) break;
    p += w;
    left -= static_cast<size_t>(w);
  }
}

}  // namespace simze
