// UTF-8 validity for the exporters: every text a traced program gave (kernel and ITT names,
// command lines) is bytes, not necessarily UTF-8, while JSON and Perfetto's protobuf strings
// must be UTF-8. Ill-formed bytes become U+FFFD, one per maximal ill-formed prefix, as
// Unicode recommends; well-formed text passes unchanged.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace xtrace {

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

// Length of the well-formed UTF-8 sequence at the start of non-empty `s`, or 0 if there is
// none; then *invalid_len is how many bytes one U+FFFD replaces (at least 1). Ranges are
// Unicode 15 table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF.
size_t WellFormedUtf8Length(std::string_view s, size_t* invalid_len);

bool IsValidUtf8(std::string_view s);

// Appends `s` to `out` with each ill-formed sequence replaced by U+FFFD.
void AppendValidUtf8(std::string* out, std::string_view s);

}  // namespace xtrace
