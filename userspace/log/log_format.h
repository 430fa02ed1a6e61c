// Identity of the log format this build writes and reads (the schema is xtrace_log.capnp).
#pragma once

#include <cstdint>

namespace xtrace {

// Header.formatVersion written by LogWriter. Must equal the schema's `formatVersion`
// constant (checked at compile time in event_codec.cc).
inline constexpr uint32_t kLogFormatVersion = 2;

// LogReader reads versions from this one to kLogFormatVersion (see the history in the schema).
inline constexpr uint32_t kOldestReadableLogFormatVersion = 1;

}  // namespace xtrace
