// How xtrace marks a text it had to cut (a name or command line longer than the limit the
// probe or the reader copies): the cut text ends in "…" (U+2026), so every output — the log,
// Chrome JSON, Perfetto, the report — shows that more was there. A multi-byte UTF-8
// character the cut split is dropped first, so the mark never follows half a character.
#pragma once

#include <string>
#include <string_view>

namespace xtrace {

inline constexpr std::string_view kCutMark = "\xE2\x80\xA6";  // U+2026 HORIZONTAL ELLIPSIS

inline std::string MarkCut(std::string_view text) {
  // Back up over continuation bytes (10xxxxxx) to the lead byte of the last character; if
  // that character needs more bytes than remain, it was split: drop it.
  size_t lead = text.size();
  size_t continuation = 0;
  while (lead > 0 && continuation < 3 &&
         (static_cast<unsigned char>(text[lead - 1]) & 0xC0) == 0x80) {
    --lead;
    ++continuation;
  }
  if (lead > 0) {
    const unsigned char b = static_cast<unsigned char>(text[lead - 1]);
    // Lead bytes of 2-, 3- and 4-byte characters; anything else is not UTF-8 and stays.
    const size_t need = b >= 0xF5 ? 0 : b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : b >= 0xC2 ? 1 : 0;
    if (need > continuation) text = text.substr(0, lead - 1);
  }
  std::string out(text);
  out += kCutMark;
  return out;
}

}  // namespace xtrace
