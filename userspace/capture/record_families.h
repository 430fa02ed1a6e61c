// Which probe source a record belongs to, by the record type ranges allocated in
// include/xtrace/records.h, for the per-process "records by source" summary.
#pragma once

#include <cstdint>
#include <string_view>

namespace xtrace {

// "Level Zero", "ITT", "DRM", ...; empty for bookkeeping records (thread names, process
// lifecycle) that are not a source's events.
std::string_view RecordFamily(uint16_t type);

}  // namespace xtrace
