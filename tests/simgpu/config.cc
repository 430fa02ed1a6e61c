// Reads XTRACE_SIMZE_* variables into a Config (documented in README.md).
#include "config.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <algorithm>

namespace simze {
namespace {

// A bad value must not silently change behaviour a test depends on: say so on stderr.
void warn(const char* name, const char* value, const char* why) {
  std::fprintf(stderr, "xtrace-simze: ignoring %s=%s (%s)\n", name, value, why);
}

// Decimal, or hexadecimal with 0x (never octal: a leading zero is not a base prefix).
bool parse_u64(const char* v, unsigned long long& out) {
  if (*v == '\0' || *v == '-' || *v == '+' || *v == ' ') return false;
  int base = (v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) ? 16 : 10;
  errno = 0;
  char* end = nullptr;
  out = std::strtoull(v, &end, base);
  return errno == 0 && end != v && *end == '\0';
}

template <typename Int>
void read_int(const char* name, Int& out, unsigned long long min, unsigned long long max) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return;
  unsigned long long parsed = 0;
  if (!parse_u64(v, parsed)) return warn(name, v, "not a non-negative integer");
  if (parsed < min || parsed > max) return warn(name, v, "out of range");
  out = static_cast<Int>(parsed);
}

// Offsets may be anything modulo 2^64 (the tick counter is unsigned 64-bit): accept the full
// unsigned range as well as negative values.
void read_offset(const char* name, int64_t& out) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return;
  const bool negative = v[0] == '-';
  unsigned long long magnitude = 0;
  if (!parse_u64(negative ? v + 1 : v, magnitude)) return warn(name, v, "not an integer");
  // Two's complement: the same ticks modulo 2^64 either way.
  out = static_cast<int64_t>(negative ? 0 - magnitude : magnitude);
}

void read_double(const char* name, double& out, double min, double max) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return;
  char* end = nullptr;
  double parsed = std::strtod(v, &end);
  if (end == v || *end != '\0' || !std::isfinite(parsed)) return warn(name, v, "not a number");
  if (parsed < min || parsed > max) return warn(name, v, "out of range");
  out = parsed;
}

// XTRACE_SIMZE_DEVICE_ORDER: comma-separated device numbers, each below the device count and
// listed once.
void read_device_order(Config& c) {
  const char* v = std::getenv("XTRACE_SIMZE_DEVICE_ORDER");
  if (v == nullptr || *v == '\0') return;
  std::vector<uint32_t> order;
  const std::string text(v);
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    unsigned long long n = 0;
    const std::string item = text.substr(start, comma - start);
    if (!parse_u64(item.c_str(), n) || n >= c.device_count)
      return warn("XTRACE_SIMZE_DEVICE_ORDER", v, "not a list of device numbers below XTRACE_SIMZE_DEVICES");
    for (uint32_t seen : order)
      if (seen == n) return warn("XTRACE_SIMZE_DEVICE_ORDER", v, "a device listed twice");
    order.push_back(static_cast<uint32_t>(n));
    start = comma + 1;
  }
  c.device_order = std::move(order);
}

Config load() {
  Config c;
  if (const char* v = std::getenv("XTRACE_SIMZE_DEVICE_NAME"); v != nullptr && *v != '\0') {
    c.device_name = v;
  }
  read_int("XTRACE_SIMZE_DEVICES", c.device_count, 1, 64);
  read_device_order(c);
  read_int("XTRACE_SIMZE_TIMER_HZ", c.timer_hz, 1000, 10'000'000'000LL);
  read_offset("XTRACE_SIMZE_CLOCK_OFFSET_TICKS", c.clock_offset_ticks);
  if (const char* v = std::getenv("XTRACE_SIMZE_CLOCK_ORIGIN_NS"); v != nullptr && *v != '\0') {
    if (std::strcmp(v, "init") == 0) {
      c.clock_origin_at_init = true;
    } else {
      read_int("XTRACE_SIMZE_CLOCK_ORIGIN_NS", c.clock_origin_raw_ns, 0, INT64_MAX);
    }
  }
  read_double("XTRACE_SIMZE_DRIFT_PPM", c.drift_ppm, -100'000.0, 100'000.0);
  read_int("XTRACE_SIMZE_DEFAULT_KERNEL_NS", c.default_kernel_ns, 0, 3'600'000'000'000LL);
  read_double("XTRACE_SIMZE_COPY_GBPS", c.copy_gbps, 0.0, 1e6);
  read_int("XTRACE_SIMZE_KERNEL_NAME_DELAY_MS", c.kernel_name_delay_ms, 0, 60'000);
  read_int("XTRACE_SIMZE_KERNEL_NAME_LOCKED", c.kernel_name_locked, 0, 1);
  read_int("XTRACE_SIMZE_KERNEL_NAME_UNSUPPORTED", c.kernel_name_unsupported, 0, 1);
  read_int("XTRACE_SIMZE_HAND_OUT_CORE", c.hand_out_core, 0, 1);
  read_int("XTRACE_SIMZE_SILENT_QUERIES", c.silent_queries, 0, 1);
  read_int("XTRACE_SIMZE_CRASH_IN_INIT", c.crash_in_init, 0, 1);
  read_int("XTRACE_SIMZE_HANG_IN_INIT", c.hang_in_init, 0, 1);
  if (const char* v = std::getenv("XTRACE_SIMZE_DRM"); v != nullptr && *v != '\0') {
    if (std::strcmp(v, "i915") == 0) {
      c.drm = DrmFlavor::kI915;
    } else if (std::strcmp(v, "xe") == 0) {
      c.drm = DrmFlavor::kXe;
    } else if (std::strcmp(v, "none") == 0) {
      c.drm = DrmFlavor::kNone;
    } else {
      warn("XTRACE_SIMZE_DRM", v, "expected i915, xe or none");
    }
  }
  if (const char* v = std::getenv("XTRACE_SIMZE_GROUND_TRUTH"); v != nullptr) {
    c.ground_truth_path = v;
  }
  if (const char* v = std::getenv("XTRACE_SIMZE_KMD_LOG"); v != nullptr) c.kmd_log_path = v;
  return c;
}

}  // namespace

const Config& config() {
  // Never destroyed: worker threads may still read it while the process exits.
  static const Config* const instance = new Config(load());
  return *instance;
}

}  // namespace simze
