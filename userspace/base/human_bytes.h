// How xtrace writes a size for people: bytes below 1 KiB, then KiB and MiB with one decimal,
// and GiB with two (a capture or a trace of an hour's job runs to gigabytes, where a tenth is
// too coarse). One way everywhere, so a file's size reads the same in the capture's summary,
// in `convert`'s progress and warnings, in the daemon's status and in the report's tables.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace xtrace {

inline std::string HumanBytes(uint64_t bytes) {
  char text[32];
  const double b = static_cast<double>(bytes);
  if (bytes < 1024)
    std::snprintf(text, sizeof(text), "%llu B", static_cast<unsigned long long>(bytes));
  else if (bytes < (uint64_t{1} << 20))
    std::snprintf(text, sizeof(text), "%.1f KiB", b / 1024);
  else if (bytes < (uint64_t{1} << 30))
    std::snprintf(text, sizeof(text), "%.1f MiB", b / (1 << 20));
  else
    std::snprintf(text, sizeof(text), "%.2f GiB", b / (1 << 30));
  return text;
}

}  // namespace xtrace
