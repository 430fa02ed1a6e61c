// Command-line number parsing.
#include "cli/args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace xtrace {
namespace {

Status Bad(const std::string& option, const std::string& text, const std::string& expected) {
  return Status::Error(option + ": '" + text + "' is not " + expected);
}

}  // namespace

Result<uint64_t> ParseDuration(const std::string& option, const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(begin, &end);
  const std::string unit(end);
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1e9;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "us") scale = 1e3;
  else if (unit == "m" || unit == "min") scale = 60e9;
  else if (unit == "h") scale = 3600e9;
  const std::string expected = "a duration (e.g. 10, 10s, 500ms, 2m)";
  if (end == begin || errno != 0 || scale == 0 || !std::isfinite(value) || value <= 0)
    return Bad(option, text, expected);
  const double ns = value * scale;
  if (ns > 1e18) return Bad(option, text, expected + " of a sane length");
  return static_cast<uint64_t>(ns);
}

Result<uint64_t> ParseSize(const std::string& option, const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(begin, &end, 10);
  std::string unit(end);
  uint64_t scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "K" || unit == "KiB" || unit == "k") scale = 1ull << 10;
  else if (unit == "M" || unit == "MiB") scale = 1ull << 20;
  else if (unit == "G" || unit == "GiB") scale = 1ull << 30;
  const std::string expected = "a size (e.g. 16M, 64MiB, 1G)";
  if (end == begin || errno != 0 || scale == 0 || text[0] == '-' || value == 0)
    return Bad(option, text, expected);
  if (value > (1ull << 40) / scale) return Bad(option, text, expected + " below 1 TiB");
  return value * scale;
}

Result<uint64_t> ParseCount(const std::string& option, const std::string& text, uint64_t min,
                            uint64_t max) {
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(begin, &end, 10);
  if (end == begin || *end != '\0' || errno != 0 || text[0] == '-' || value < min || value > max)
    return Bad(option, text, "a count from " + std::to_string(min) + " to " + std::to_string(max));
  return value;
}

Result<uint32_t> ParsePid(const std::string& option, const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(begin, &end, 10);
  if (end == begin || *end != '\0' || errno != 0 || value <= 0 || value > 0x3fffffff)
    return Bad(option, text, "a process id (a positive number)");
  return static_cast<uint32_t>(value);
}

}  // namespace xtrace
