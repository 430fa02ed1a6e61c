// Parsing of the numbers users type on the command line, each with a clear error.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace xtrace {

// "30", "30s", "1.5s", "500ms", "2m", "1h" -> nanoseconds. Bare numbers are seconds.
Result<uint64_t> ParseDuration(const std::string& option, const std::string& text);

// "16M", "64MiB", "1G", "4096" -> bytes (binary units).
Result<uint64_t> ParseSize(const std::string& option, const std::string& text);

// A whole number from `min` to `max`.
Result<uint64_t> ParseCount(const std::string& option, const std::string& text, uint64_t min,
                            uint64_t max);

// A positive process id.
Result<uint32_t> ParsePid(const std::string& option, const std::string& text);

}  // namespace xtrace
