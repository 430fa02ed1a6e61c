// Strict option-value parsing shared by ze_workload, ze_lateload and ze_noload.
#include "workload_cli.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "ze_result.h"

namespace xtrace::workloads {

void usage_error(std::string_view message) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %.*s\n%s: try --help\n", program_name(),
               static_cast<int>(message.size()), message.data(), program_name());
  std::exit(kUsageExit);
}

std::uint64_t parse_count(std::string_view option, const char* text, std::uint64_t min,
                          std::uint64_t max) {
  std::string what = std::string(option) + ": expected an integer from " + std::to_string(min) +
                     " to " + std::to_string(max) + ", got \"" + text + "\"";
  std::string_view digits(text);
  // strtoull alone would accept " 5", "+5", "-5" (wrapping) and "5x"; reject all of them.
  if (digits.empty() || digits.size() > 20) usage_error(what);
  for (char c : digits)
    if (c < '0' || c > '9') usage_error(what);
  errno = 0;
  unsigned long long value = std::strtoull(text, nullptr, 10);
  if (errno == ERANGE || value < min || value > max) usage_error(what);
  return value;
}

double parse_seconds(std::string_view option, const char* text, double max) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", max);
  std::string what = std::string(option) + ": expected a number of seconds greater than 0 and at most " +
                     buf + ", got \"" + text + "\"";
  std::string_view s(text);
  // Plain decimal only: strtod would also take hex, "inf", "nan" and exponents.
  bool seen_digit = false, seen_dot = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      seen_digit = true;
    } else if (c == '.' && !seen_dot) {
      seen_dot = true;
    } else {
      usage_error(what);
    }
  }
  if (!seen_digit) usage_error(what);
  double value = std::strtod(text, nullptr);
  if (!std::isfinite(value) || value <= 0.0 || value > max) usage_error(what);
  return value;
}

const char* option_value(int argc, char** argv, int& i) {
  if (i + 1 >= argc) usage_error(std::string(argv[i]) + ": missing value");
  return argv[++i];
}

}  // namespace xtrace::workloads
