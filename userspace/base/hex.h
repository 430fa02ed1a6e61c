// A number as the messages and tables show addresses and handles: 0x and lower-case hex.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace xtrace {

inline std::string Hex(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(v));
  return text;
}

}  // namespace xtrace
