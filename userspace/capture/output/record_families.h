// Which probe source a record belongs to, by the record type ranges allocated in
// include/xtrace/records.h, for the per-process "records by source" summary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace xtrace {

// "Level Zero", "ITT", "DRM", ...; empty for bookkeeping records (thread names, process
// lifecycle) that are not a source's events.
std::string_view RecordFamily(uint16_t type);

// The same for a whole record, which also tells an ITT handle's text (bookkeeping: sent once
// per process, again after a loss, by either ITT path) from the ITT calls, so a source's
// count is its calls, as its drop counter's is (XT_CNT_DROPPED_ITT).
std::string_view RecordFamily(std::span<const std::byte> record);

}  // namespace xtrace
