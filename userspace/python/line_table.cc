// CPython's location table; see line_table.h.
#include "python/line_table.h"

namespace xtrace {
namespace {

// Kinds of entry (bits 3-6 of its start byte).
constexpr int kNoLocation = 15;
constexpr int kLong = 14;
constexpr int kNoColumns = 13;
constexpr int kOneLine0 = 10;  // 10, 11, 12: the line moves by 0, 1, 2
constexpr int kOneLine2 = 12;

class Cursor {
 public:
  explicit Cursor(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  bool done() const { return pos_ >= bytes_.size(); }
  bool Byte(uint8_t* out) {
    if (done()) return false;
    *out = bytes_[pos_++];
    return true;
  }
  // Six bits per byte, bit 6 says another follows.
  bool Varint(uint64_t* out) {
    uint8_t b = 0;
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 6) {
      if (!Byte(&b)) return false;
      value |= uint64_t{b & 63u} << shift;
      if (!(b & 64)) {
        *out = value;
        return true;
      }
    }
    return false;
  }
  bool SignedVarint(int64_t* out) {
    uint64_t u = 0;
    if (!Varint(&u)) return false;
    *out = (u & 1) ? -static_cast<int64_t>(u >> 1) : static_cast<int64_t>(u >> 1);
    return true;
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

}  // namespace

std::optional<uint32_t> LineOfCodeUnit(std::span<const uint8_t> table, int32_t first_line,
                                       uint64_t index) {
  Cursor c(table);
  int64_t line = first_line;
  uint64_t start = 0;
  uint8_t b = 0, skip = 0;
  while (c.Byte(&b)) {
    if (!(b & 0x80)) return std::nullopt;  // not at an entry's start: malformed
    const int kind = (b >> 3) & 15;
    const uint64_t units = (b & 7u) + 1;
    int64_t delta = 0;
    uint64_t ignored = 0;
    bool has_line = true;
    if (kind == kNoLocation) {
      has_line = false;
    } else if (kind == kLong) {
      if (!c.SignedVarint(&delta) || !c.Varint(&ignored) || !c.Varint(&ignored) ||
          !c.Varint(&ignored))
        return std::nullopt;
    } else if (kind == kNoColumns) {
      if (!c.SignedVarint(&delta)) return std::nullopt;
    } else if (kind >= kOneLine0 && kind <= kOneLine2) {
      delta = kind - kOneLine0;
      if (!c.Byte(&skip) || !c.Byte(&skip)) return std::nullopt;
    } else {  // short form: same line, one byte of columns
      if (!c.Byte(&skip)) return std::nullopt;
    }
    line += delta;
    if (index < start + units) {
      if (!has_line || line <= 0 || line > UINT32_MAX) return std::nullopt;
      return static_cast<uint32_t>(line);
    }
    start += units;
  }
  return std::nullopt;
}

}  // namespace xtrace
