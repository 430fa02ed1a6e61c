// FramePacker: Cap'n Proto's packed encoding, written a word at a time without a byte loop.
//
// The encoding, per 8-byte word: a tag byte whose bit i says byte i is non-zero, then the
// non-zero bytes in order. After tag 0x00 comes a count (0-255) of further all-zero words
// that the tag stands for too; after tag 0xff, its 8 bytes and a count of further words
// copied verbatim. Any choice of run lengths is a valid encoding — a reader (Cap'n Proto's
// PackedInputStream, PackedFrameInput) just follows the counts, and a count may be 0 — so
// only the size depends on the choices. These are Cap'n Proto's own: a zero run goes on while
// words are zero, a verbatim run while words have at most one zero byte (packing such a word
// saves nothing, and ending the run costs a new tag and count). Runs end where a piece (the
// segment table, a segment) ends, as Cap'n Proto's packer packs each piece on its own.
#include "log/frame_packer.h"

#include <capnp/serialize-packed.h>
#include <kj/io.h>

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace xtrace {
namespace packing {
namespace {

constexpr size_t kWordBytes = 8;
constexpr size_t kMaxRun = 255;  // a run count is one byte
constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
constexpr uint64_t kHighBits = 0x8080808080808080ULL;

// 0x80 in each byte of `w` that is non-zero, 0x00 in the others (the carry of adding 0x7f
// into the low seven bits sets bit 7 of a byte with any of them set; `| w` adds bit 7 itself;
// no carry crosses bytes since each byte's sum is below 0x100).
inline uint64_t NonZeroHighBits(uint64_t w) { return (((w & kLow7) + kLow7) | w) & kHighBits; }

inline void Store64(uint8_t* out, uint64_t v) { std::memcpy(out, &v, sizeof(v)); }

// What a variant supplies: the tag of a word, its count of non-zero bytes, and the word's
// non-zero bytes moved to its low bytes in order (the rest are not kept).
#if defined(__x86_64__)
struct Bmi2Ops {
  __attribute__((target("bmi2"))) static unsigned Tag(uint64_t w) {
    return static_cast<unsigned>(_pext_u64(NonZeroHighBits(w), kHighBits));
  }
  __attribute__((target("popcnt"))) static unsigned Count(unsigned tag) {
    return static_cast<unsigned>(__builtin_popcount(tag));
  }
  // The byte mask (0xff per non-zero byte) from the high bits: 0x80 | (0x80 - 0x01).
  __attribute__((target("bmi2"))) static uint64_t Compress(uint64_t w) {
    const uint64_t high = NonZeroHighBits(w);
    return _pext_u64(w, high | (high - (high >> 7)));
  }
};
#endif

// Packs [in, end) into out. Each word's tag and bytes go out as one byte and one 8-byte store
// (the bytes past popcount(tag) are written over by the next word), so the common word takes
// no branch but the test for the two run tags.
template <typename Ops>
inline size_t PackLoop(const uint64_t* in, size_t count, uint8_t* const out) {
  const uint64_t* p = in;
  const uint64_t* const end = in + count;
  uint8_t* o = out;
  while (p < end) {
    const uint64_t w = *p++;
    const unsigned tag = Ops::Tag(w);
    if (tag == 0x00) [[unlikely]] {
      const uint64_t* const limit = p + std::min<size_t>(kMaxRun, static_cast<size_t>(end - p));
      const uint64_t* const start = p;
      while (p < limit && *p == 0) ++p;
      o[0] = 0x00;
      o[1] = static_cast<uint8_t>(p - start);
      o += 2;
    } else if (tag == 0xff) [[unlikely]] {
      o[0] = 0xff;
      Store64(o + 1, w);
      const uint64_t* const limit = p + std::min<size_t>(kMaxRun, static_cast<size_t>(end - p));
      const uint64_t* const start = p;
      while (p < limit && Ops::Count(Ops::Tag(*p)) >= kWordBytes - 1) ++p;
      const size_t run = static_cast<size_t>(p - start);
      o[9] = static_cast<uint8_t>(run);
      std::memcpy(o + 10, start, run * kWordBytes);
      o += 10 + run * kWordBytes;
    } else {
      o[0] = static_cast<uint8_t>(tag);
      Store64(o + 1, Ops::Compress(w));
      o += 1 + Ops::Count(tag);
    }
  }
  return static_cast<size_t>(o - out);
}

#if defined(__x86_64__)
// pext is microcoded on AMD's first two Zen generations (hundreds of cycles for a scattered
// mask): there Cap'n Proto's byte loop is the faster one.
const bool kHaveBmi2 = [] {
  __builtin_cpu_init();  // this runs among the static constructors
  return __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt") &&
         !__builtin_cpu_is("znver1") && !__builtin_cpu_is("znver2");
}();
#endif

}  // namespace

size_t PackWordsCapnp(const uint64_t* in, size_t count, uint8_t* out) {
  if (count == 0) return 0;
  kj::ArrayOutputStream array(kj::arrayPtr(out, MaxPackedBytes(count)));
  {
    capnp::_::PackedOutputStream packed(array);
    packed.write(in, count * kWordBytes);
  }
  return array.getArray().size();
}

#if defined(__x86_64__)
__attribute__((target("bmi2,popcnt"), flatten)) size_t PackWordsBmi2(const uint64_t* in,
                                                                     size_t count, uint8_t* out) {
  return PackLoop<Bmi2Ops>(in, count, out);
}
bool Bmi2Available() { return kHaveBmi2; }
#else
size_t PackWordsBmi2(const uint64_t* in, size_t count, uint8_t* out) {
  return PackWordsCapnp(in, count, out);
}
bool Bmi2Available() { return false; }
#endif

size_t PackWords(const uint64_t* in, size_t count, uint8_t* out) {
#if defined(__x86_64__)
  if (kHaveBmi2) return PackWordsBmi2(in, count, out);
#endif
  return PackWordsCapnp(in, count, out);
}

}  // namespace packing

size_t FramePacker::Pack(kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments,
                         size_t at) {
  // The stream framing's segment table: the segment count less one and each segment's size
  // in words, as little-endian u32s, padded to a whole word.
  const size_t table_words = (segments.size() + 2) / 2;
  size_t words = table_words;
  for (const auto& segment : segments) words += segment.size();
  // Each piece's encoding is bounded as MaxPackedBytes's is, and the stores past one piece's
  // end land where the next piece or the final slack goes.
  Reserve(at + packing::MaxPackedBytes(words), at);

  uint64_t small_table[8];
  std::unique_ptr<uint64_t[]> large_table;
  uint64_t* table = small_table;
  if (table_words > std::size(small_table)) {
    large_table = std::make_unique<uint64_t[]>(table_words);
    table = large_table.get();
  }
  table[table_words - 1] = 0;  // the padding, when there is one
  auto set_entry = [&](size_t i, uint32_t value) {
    std::memcpy(reinterpret_cast<uint8_t*>(table) + 4 * i, &value, sizeof(value));
  };
  set_entry(0, static_cast<uint32_t>(segments.size() - 1));
  for (size_t i = 0; i < segments.size(); ++i) {
    set_entry(i + 1, static_cast<uint32_t>(segments[i].size()));
  }

  size_t end = at + packing::PackWords(table, table_words, buffer_.get() + at);
  for (const auto& segment : segments) {
    end += packing::PackWords(reinterpret_cast<const uint64_t*>(segment.begin()), segment.size(),
                              buffer_.get() + end);
  }
  return end;
}

void FramePacker::Reserve(size_t bytes, size_t keep) {
  if (bytes <= capacity_) return;
  const size_t grown = std::max(bytes, capacity_ + capacity_ / 2);
  std::unique_ptr<uint8_t[]> bigger(new uint8_t[grown]);
  // Bytes before `at` that the buffer never held have no content to keep.
  keep = std::min(keep, capacity_);
  if (keep > 0) std::memcpy(bigger.get(), buffer_.get(), keep);
  buffer_ = std::move(bigger);
  capacity_ = grown;
}

}  // namespace xtrace
