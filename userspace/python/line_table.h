// The line of an instruction from a code object's location table (co_linetable), in the
// format of CPython 3.11 to 3.13 (Objects/locations.md in CPython's sources): entries of
// one start byte (bit 7 set; bits 3-6 the kind, bits 0-2 the code units covered minus one)
// followed by the kind's varints.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace xtrace {

// The line of the code unit at `index` (instruction offset / 2) of a code object whose first
// line is `first_line`; nullopt when the table does not cover it or says it has no line, or
// is malformed.
std::optional<uint32_t> LineOfCodeUnit(std::span<const uint8_t> table, int32_t first_line,
                                       uint64_t index);

}  // namespace xtrace
