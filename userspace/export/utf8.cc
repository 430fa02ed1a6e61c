// UTF-8 validation and repair.
#include "export/utf8.h"

#include <cstdint>
#include <cstring>

namespace xtrace {

size_t WellFormedUtf8Length(std::string_view s, size_t* invalid_len) {
  const auto lead = static_cast<unsigned char>(s[0]);
  if (lead < 0x80) return 1;
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  } else {
    *invalid_len = 1;
    return 0;
  }
  for (size_t i = 1; i < len; ++i) {
    const auto c = i < s.size() ? static_cast<unsigned char>(s[i]) : 0;
    const bool ok = i == 1 ? (c >= lo && c <= hi) : (c >= 0x80 && c <= 0xBF);
    if (i >= s.size() || !ok) {
      *invalid_len = i;
      return 0;
    }
  }
  return len;
}

namespace {

// Bytes of `s` from `i` on that are ASCII, eight at a time while a whole word is.
size_t SkipAscii(std::string_view s, size_t i) {
  while (s.size() - i >= 8) {
    uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    if (word & 0x8080808080808080ull) break;
    i += 8;
  }
  while (i < s.size() && static_cast<unsigned char>(s[i]) < 0x80) ++i;
  return i;
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while ((i = SkipAscii(s, i)) < s.size()) {
    size_t invalid_len = 0;
    const size_t len = WellFormedUtf8Length(s.substr(i), &invalid_len);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

void AppendValidUtf8(std::string* out, std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const size_t plain = SkipAscii(s, i);
    out->append(s.data() + i, plain - i);
    i = plain;
    if (i == s.size()) break;
    size_t invalid_len = 0;
    if (const size_t len = WellFormedUtf8Length(s.substr(i), &invalid_len); len > 0) {
      out->append(s.data() + i, len);
      i += len;
    } else {
      out->append(kReplacementCharacter);
      i += invalid_len;
    }
  }
}

}  // namespace xtrace
