// Strict command-line value parsing for the test workloads: a typo in a test script must
// stop the run with a message naming the option, never silently become 0 or a default.
#pragma once

#include <cstdint>
#include <string_view>

namespace xtrace::workloads {

// Exit status for usage errors (Level Zero failures exit with 1).
inline constexpr int kUsageExit = 2;

// Prints "<program>: <message>" and "try --help" to stderr, exits with kUsageExit.
[[noreturn]] void usage_error(std::string_view message);

// Decimal integer in [min, max], digits only (no sign, no spaces, no suffix).
std::uint64_t parse_count(std::string_view option, const char* text, std::uint64_t min,
                          std::uint64_t max);

// Seconds as a decimal number ("2", "0.5"), strictly greater than 0 and at most max.
double parse_seconds(std::string_view option, const char* text, double max);

// Returns the value following option `argv[i]` and advances i, or reports a missing value.
const char* option_value(int argc, char** argv, int& i);

}  // namespace xtrace::workloads
