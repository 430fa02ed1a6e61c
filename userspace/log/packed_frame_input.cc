// PackedFrameInput: an unpacker for Cap'n Proto's packed stream encoding that keeps count of
// what it got, so truncation is reported in bytes rather than as "premature EOF".
//
// Packed encoding, per 8-byte word: a tag byte whose bit i says byte i is non-zero, then the
// non-zero bytes. Tag 0x00 is followed by a count of further all-zero words; tag 0xff by its
// 8 bytes and a count of further words copied verbatim. The unpacked stream is the standard
// framing: u32 (segments - 1), u32 size in words of each segment, padding to a word, segments.
#include "log/packed_frame_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace xtrace {
namespace {

// Large enough that the read(2) cost per byte vanishes, small enough not to matter in memory.
constexpr size_t kReadChunk = 1 << 20;
// A file smaller than a chunk gets a buffer its size (but no smaller than a page, in case it
// grows while read): converting many small rotated files, or fuzzing the reader, then does
// not clear a megabyte per file.
constexpr size_t kMinReadChunk = 4096;
// Unpacking appends words as they arrive rather than allocating what a (possibly garbage)
// segment table claims: room grows by at most this much, or the words already unpacked.
constexpr uint64_t kMinGrowWords = 1 << 16;
// Words allocated past the room, for the fast zero fill's overshoot.
constexpr uint64_t kSlackWords = 4;
constexpr int kWordBytes = 8;
// The fast loop unpacks a word only when this many bytes follow its tag in the buffer: the
// word's longest encoding (8 bytes and a run count) fits, and so does the 16-byte load of the
// SSSE3 expansion. What is left at the buffer's end goes word by word, with its refills.
constexpr size_t kFastReadAhead = 16;

// Per tag byte: how many data bytes follow it, and for the SSSE3 expansion the shuffle that
// spreads them to the tag's set bytes (0x80: a zero byte).
struct TagTables {
  alignas(16) uint8_t shuffle[256][16];
  uint8_t length[256];
};
constexpr TagTables MakeTagTables() {
  TagTables t{};
  for (int tag = 0; tag < 256; ++tag) {
    uint8_t next = 0;
    for (int i = 0; i < 16; ++i) {
      t.shuffle[tag][i] = (i < kWordBytes && (tag & (1 << i))) ? next++ : 0x80;
    }
    t.length[tag] = next;
  }
  return t;
}
constexpr TagTables kTags = MakeTagTables();

// The word a tag and its data bytes stand for, reading (but not using) up to 8 bytes ahead.
struct ScalarExpand {
  static uint64_t Expand(const uint8_t* p, unsigned tag) {
    // Branch-free: each byte is taken from the stream if its tag bit is set, the stream
    // advancing by that bit; tags vary word to word.
    uint64_t word = 0;
    for (int i = 0; i < kWordBytes; ++i) {
      const unsigned present = (tag >> i) & 1;
      word |= uint64_t(*p & (0u - present)) << (8 * i);
      p += present;
    }
    return word;
  }
  static unsigned Length(unsigned tag) { return kTags.length[tag]; }
  static void Zero(uint64_t* out, uint64_t n) { std::memset(out, 0, n * kWordBytes); }
};

#if defined(__x86_64__)
// One shuffle instead of eight selects: reads 16 bytes from p.
struct Ssse3Expand {
  __attribute__((target("ssse3"))) static uint64_t Expand(const uint8_t* p, unsigned tag) {
    const __m128i data = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i shuffle = _mm_load_si128(reinterpret_cast<const __m128i*>(kTags.shuffle[tag]));
    return static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_shuffle_epi8(data, shuffle)));
  }
  // A count rather than a table load: the next tag's address waits on it.
  __attribute__((target("popcnt"))) static unsigned Length(unsigned tag) {
    return static_cast<unsigned>(__builtin_popcount(tag));
  }
  // The zero runs between events are short (a dozen words): four words a step, which may
  // write up to three words past n (kSlackWords), beats memset's setup. Words past n are
  // unpacked over later, or lie in the slack.
  __attribute__((target("ssse3"))) static void Zero(uint64_t* out, uint64_t n) {
    const __m128i zero = _mm_setzero_si128();
    for (uint64_t k = 0; k < n; k += 4) {
      asm("" : "+r"(k));  // keeps the compiler from turning the loop back into memset
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + k), zero);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + k + 2), zero);
    }
  }
};
#endif

// The packed stream's state the fast loop carries in and out.
struct Unpacking {
  const uint8_t* p;      // next byte to read
  const uint8_t* end;    // end of the bytes read from the file
  uint64_t* out;         // next word to write
  uint64_t* out_end;     // end of the room for words
  uint32_t zero_run;     // zero words still owed by the last 0x00 tag
  uint32_t raw_run;      // verbatim words still owed by the last 0xff tag
};

// Unpacks the words whose encoding lies wholly before end - kFastReadAhead, and the runs they
// start as far as the buffer and the room allow. Stops with a run still owed when either ends.
template <typename E>
inline void UnpackLoop(Unpacking& u) {
  const uint8_t* p = u.p;
  uint64_t* out = u.out;
  uint64_t* const out_end = u.out_end;
  const uint8_t* const limit =
      u.end - std::min<size_t>(kFastReadAhead + 1, static_cast<size_t>(u.end - u.p));
  while (out < out_end && p < limit) {
    const unsigned tag = *p++;
    if (tag == 0x00) {
      *out++ = 0;
      const uint64_t run = *p++;
      const uint64_t n = std::min<uint64_t>(run, out_end - out);
      E::Zero(out, n);
      out += n;
      u.zero_run = static_cast<uint32_t>(run - n);
      if (u.zero_run != 0) break;
    } else if (tag == 0xff) {
      std::memcpy(out++, p, kWordBytes);
      p += kWordBytes;
      const uint64_t run = *p++;
      const uint64_t n = std::min<uint64_t>(
          {run, static_cast<uint64_t>(out_end - out), static_cast<uint64_t>(u.end - p) / kWordBytes});
      std::memcpy(out, p, n * kWordBytes);
      out += n;
      p += n * kWordBytes;
      u.raw_run = static_cast<uint32_t>(run - n);
      if (u.raw_run != 0) break;
    } else {
      *out++ = E::Expand(p, tag);
      p += E::Length(tag);
    }
  }
  u.p = p;
  u.out = out;
}

#if defined(__x86_64__)
__attribute__((target("ssse3,popcnt"), flatten)) void UnpackSsse3(Unpacking& u) {
  UnpackLoop<Ssse3Expand>(u);
}
const bool kHaveSsse3 = __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("popcnt");
#endif

void UnpackFast(Unpacking& u) {
#if defined(__x86_64__)
  if (kHaveSsse3) return UnpackSsse3(u);
#endif
  UnpackLoop<ScalarExpand>(u);
}

}  // namespace

PackedFrameInput::PackedFrameInput(UniqueFd fd, std::optional<uint64_t> file_size)
    : fd_(std::move(fd)),
      file_size_(file_size),
      buffer_(std::clamp<uint64_t>(file_size.value_or(kReadChunk), kMinReadChunk, kReadChunk)) {}

Result<PackedFrameInput> PackedFrameInput::Open(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::Error(path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Status::Error(path + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return Status::Error(path + ": is a directory, not an xtrace log");
  std::optional<uint64_t> size;
  if (S_ISREG(st.st_mode)) size = static_cast<uint64_t>(st.st_size);
  return PackedFrameInput(std::move(fd), size);
}

bool PackedFrameInput::Refill() {
  if (!read_error_.ok()) return false;
  file_pos_ += end_;
  pos_ = end_ = 0;
  while (true) {
    const ssize_t n = ::read(fd_.get(), buffer_.data(), buffer_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      read_error_ = Status::Error(std::string("read error: ") + std::strerror(errno));
      return false;
    }
    end_ = static_cast<size_t>(n);
    return n > 0;
  }
}

bool PackedFrameInput::NextByte(uint8_t* byte) {
  if (pos_ == end_ && !Refill()) return false;
  *byte = buffer_[pos_++];
  return true;
}

int PackedFrameInput::UnpackWord(uint64_t* out) {
  if (zero_run_ > 0) {
    --zero_run_;
    *out = 0;
    return kWordBytes;
  }
  uint8_t bytes[kWordBytes] = {};
  // Fast path, the usual case: the word's whole encoding (at most a tag, 8 bytes and a run
  // count) is in the buffer, so no byte needs an end-of-buffer check.
  if (end_ - pos_ >= kWordBytes + 2) {
    const uint8_t* p = buffer_.data() + pos_;
    if (raw_run_ > 0) {
      --raw_run_;
      std::memcpy(out, p, kWordBytes);
      pos_ += kWordBytes;
      return kWordBytes;
    }
    const unsigned tag = *p++;
    // Branch-free: each byte is taken from the stream if its tag bit is set (reading one byte
    // ahead is safe here), the stream advancing by that bit; tags vary word to word.
    uint64_t word = 0;
    for (int i = 0; i < kWordBytes; ++i) {
      const unsigned present = (tag >> i) & 1;
      word |= uint64_t(*p & (0u - present)) << (8 * i);
      p += present;
    }
    if (tag == 0x00) zero_run_ = *p++;
    if (tag == 0xff) raw_run_ = *p++;
    pos_ = static_cast<size_t>(p - buffer_.data());
    *out = word;
    return kWordBytes;
  }
  if (raw_run_ > 0) {
    for (int i = 0; i < kWordBytes; ++i) {
      if (!NextByte(&bytes[i])) return i;
    }
    --raw_run_;
    std::memcpy(out, bytes, kWordBytes);
    return kWordBytes;
  }
  uint8_t tag = 0;
  if (!NextByte(&tag)) return 0;
  int produced = 0;
  for (int i = 0; i < kWordBytes; ++i) {
    if ((tag & (1u << i)) && !NextByte(&bytes[i])) return produced;
    produced = i + 1;
  }
  if (tag == 0x00 || tag == 0xff) {
    uint8_t count = 0;
    // The run length is part of this word's encoding: without it the word is incomplete.
    if (!NextByte(&count)) return kWordBytes - 1;
    (tag == 0x00 ? zero_run_ : raw_run_) = count;
  }
  std::memcpy(out, bytes, kWordBytes);
  return kWordBytes;
}

void PackedFrameInput::GrowWords(uint64_t more) {
  if (words_capacity_ - words_size_ >= more) return;
  const uint64_t capacity = words_size_ + std::max(more, std::max(words_size_, kMinGrowWords));
  auto grown = std::make_unique_for_overwrite<uint64_t[]>(capacity + kSlackWords);
  if (words_size_ > 0) std::memcpy(grown.get(), words_.get(), words_size_ * kWordBytes);
  words_ = std::move(grown);
  words_capacity_ = capacity;
}

void PackedFrameInput::UnpackBuffered(uint64_t** out, uint64_t* out_end) {
  Unpacking u{buffer_.data() + pos_, buffer_.data() + end_, *out, out_end, zero_run_, raw_run_};
  UnpackFast(u);
  pos_ = static_cast<size_t>(u.p - buffer_.data());
  zero_run_ = u.zero_run;
  raw_run_ = u.raw_run;
  *out = u.out;
}

uint64_t PackedFrameInput::UnpackWords(uint64_t count) {
  uint64_t left = count;
  while (left > 0) {
    // Room for the next stretch, in steps that grow with what was unpacked, so a garbage
    // segment table cannot make the reader allocate more than twice what the file holds.
    const uint64_t step = std::min(left, std::max(words_size_, kMinGrowWords));
    GrowWords(step);
    uint64_t* out = words_.get() + words_size_;
    uint64_t* const out_end = out + step;
    while (out < out_end) {
      // Runs go in bulk: the zero words the event unions leave, and verbatim words (strings).
      if (zero_run_ > 0) {
        const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(zero_run_, out_end - out));
        std::memset(out, 0, uint64_t{n} * kWordBytes);
        out += n;
        zero_run_ -= n;
        continue;
      }
      if (raw_run_ > 0 && end_ - pos_ >= kWordBytes) {
        const uint64_t n = std::min<uint64_t>(
            {raw_run_, static_cast<uint64_t>(out_end - out), (end_ - pos_) / kWordBytes});
        std::memcpy(out, buffer_.data() + pos_, n * kWordBytes);
        out += n;
        pos_ += n * kWordBytes;
        raw_run_ -= static_cast<uint32_t>(n);
        continue;
      }
      // Whole encodings in the buffer go in the fast loop; one at its end, word by word.
      if (raw_run_ == 0 && end_ - pos_ > kFastReadAhead) {
        uint64_t* const before = out;
        UnpackBuffered(&out, out_end);
        if (out != before) continue;
      }
      uint64_t word = 0;
      const int got = UnpackWord(&word);
      if (got < kWordBytes) {
        words_size_ = static_cast<uint64_t>(out - words_.get());
        return words_size_ * kWordBytes + static_cast<uint64_t>(got);
      }
      *out++ = word;
    }
    words_size_ += step;
    left -= step;
  }
  return words_size_ * kWordBytes;
}

Status PackedFrameInput::Skip(uint64_t bytes) {
  const uint64_t start = offset();
  auto truncated = [&]() {
    return Status::Error("truncated message (a batch of " + std::to_string(bytes) +
                         " packed bytes at byte " + std::to_string(start) +
                         "; the file ends at byte " + std::to_string(offset()) + ")");
  };
  if (end_ - pos_ >= bytes) {
    pos_ += bytes;
    return Status::Ok();
  }
  if (file_size_) {
    // Past what is buffered: seek, unless the file (as it is now: it may be growing) ends
    // before the batch does.
    struct stat st {};
    const uint64_t size = ::fstat(fd_.get(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
    if (start + bytes > size) {
      file_pos_ += end_;
      pos_ = end_ = 0;
      if (size > file_pos_ && ::lseek(fd_.get(), static_cast<off_t>(size), SEEK_SET) >= 0)
        file_pos_ = size;
      return truncated();
    }
    if (::lseek(fd_.get(), static_cast<off_t>(start + bytes), SEEK_SET) < 0) {
      read_error_ = Status::Error(std::string("seek error: ") + std::strerror(errno));
      return read_error_;
    }
    file_pos_ = start + bytes;
    pos_ = end_ = 0;
    return Status::Ok();
  }
  uint64_t left = bytes;
  while (left > 0) {
    if (pos_ == end_ && !Refill()) return read_error_.ok() ? truncated() : read_error_;
    const uint64_t n = std::min<uint64_t>(left, end_ - pos_);
    pos_ += n;
    left -= n;
  }
  return Status::Ok();
}

Status PackedFrameInput::Seek(uint64_t offset) {
  if (!read_error_.ok()) return read_error_;
  if (offset >= file_pos_ && offset - file_pos_ <= end_) {
    pos_ = static_cast<size_t>(offset - file_pos_);
    return Status::Ok();
  }
  if (::lseek(fd_.get(), static_cast<off_t>(offset), SEEK_SET) < 0) {
    read_error_ = Status::Error(std::string("seek error: ") + std::strerror(errno));
    return read_error_;
  }
  file_pos_ = offset;
  pos_ = end_ = 0;
  return Status::Ok();
}

Result<bool> PackedFrameInput::ReadFrame() {
  words_size_ = 0;
  segments_.clear();
  zero_run_ = raw_run_ = 0;
  frame_offset_ = offset();

  // A clean end of file: not one byte of a next frame.
  if (pos_ == end_ && !Refill()) {
    if (!read_error_.ok()) return read_error_;
    return false;
  }

  auto truncated = [&](uint64_t need, uint64_t have) -> Status {
    if (!read_error_.ok()) return read_error_;
    return Status::Error("truncated message (need " + std::to_string(need) +
                         " bytes unpacked, have " + std::to_string(have) +
                         "; the file ends at byte " + std::to_string(offset()) + ")");
  };

  // First word: segment count and the first segment's size.
  if (const uint64_t have = UnpackWords(1); have < kWordBytes) return truncated(kWordBytes, have);
  const uint32_t* table = reinterpret_cast<const uint32_t*>(words_.get());
  const uint64_t segment_count = uint64_t{table[0]} + 1;
  if (segment_count > kMaxSegments) {
    return Status::Error("bad message framing: " + std::to_string(segment_count) +
                         " segments, at most " + std::to_string(kMaxSegments) + " allowed");
  }
  // The table holds 1 + segment_count u32s, padded to a whole word.
  const uint64_t table_words = (segment_count + 2) / 2;
  if (const uint64_t have = UnpackWords(table_words - 1); have < table_words * kWordBytes) {
    return truncated(table_words * kWordBytes, have);
  }
  table = reinterpret_cast<const uint32_t*>(words_.get());
  uint64_t total_words = table_words;
  for (uint64_t i = 0; i < segment_count; ++i) total_words += table[1 + i];
  if (total_words * kWordBytes > kMaxFrameBytes) {
    return Status::Error("bad message framing: a message of " +
                         std::to_string(total_words * kWordBytes) + " bytes, over the " +
                         std::to_string(kMaxFrameBytes) + "-byte limit");
  }
  if (const uint64_t have = UnpackWords(total_words - table_words);
      have < total_words * kWordBytes) {
    return truncated(total_words * kWordBytes, have);
  }
  if (zero_run_ != 0 || raw_run_ != 0) {
    return Status::Error("corrupt packed encoding: a run continues past the end of the message");
  }

  // Segments point into words_, which no longer grows for this frame.
  table = reinterpret_cast<const uint32_t*>(words_.get());
  const auto* next = reinterpret_cast<const capnp::word*>(words_.get() + table_words);
  for (uint64_t i = 0; i < segment_count; ++i) {
    segments_.emplace_back(next, table[1 + i]);
    next += table[1 + i];
  }
  return true;
}

}  // namespace xtrace
