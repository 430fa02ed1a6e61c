// xtrace's version, as reported by `xtrace --version` and written into every log header.
#pragma once

namespace xtrace {
inline constexpr const char* kXtraceVersion = "0.1.0";
}  // namespace xtrace
