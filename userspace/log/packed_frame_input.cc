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

namespace xtrace {
namespace {

// Large enough that the read(2) cost per byte vanishes, small enough not to matter in memory.
constexpr size_t kReadChunk = 1 << 20;
// A file smaller than a chunk gets a buffer its size (but no smaller than a page, in case it
// grows while read): converting many small rotated files, or fuzzing the reader, then does
// not clear a megabyte per file.
constexpr size_t kMinReadChunk = 4096;
// Unpacking appends words as they arrive rather than allocating what a (possibly garbage)
// segment table claims; reserving up to this much at once avoids most regrowth.
constexpr uint64_t kMaxReserveWords = 1 << 20;
constexpr int kWordBytes = 8;

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

uint64_t PackedFrameInput::UnpackWords(uint64_t count) {
  uint64_t left = count;
  while (left > 0) {
    // Runs go in bulk: the zero words the event unions leave, and verbatim words (strings).
    if (zero_run_ > 0) {
      const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(zero_run_, left));
      words_.resize(words_.size() + n, 0);
      zero_run_ -= n;
      left -= n;
      continue;
    }
    if (raw_run_ > 0 && end_ - pos_ >= kWordBytes) {
      const uint64_t n = std::min<uint64_t>({raw_run_, left, (end_ - pos_) / kWordBytes});
      const size_t at = words_.size();
      words_.resize(at + n);
      std::memcpy(words_.data() + at, buffer_.data() + pos_, n * kWordBytes);
      pos_ += n * kWordBytes;
      raw_run_ -= static_cast<uint32_t>(n);
      left -= n;
      continue;
    }
    uint64_t word = 0;
    const int got = UnpackWord(&word);
    if (got < kWordBytes) return words_.size() * kWordBytes + static_cast<uint64_t>(got);
    words_.push_back(word);
    --left;
  }
  return words_.size() * kWordBytes;
}

Result<bool> PackedFrameInput::ReadFrame() {
  words_.clear();
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
  const uint32_t* table = reinterpret_cast<const uint32_t*>(words_.data());
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
  table = reinterpret_cast<const uint32_t*>(words_.data());
  uint64_t total_words = table_words;
  for (uint64_t i = 0; i < segment_count; ++i) total_words += table[1 + i];
  if (total_words * kWordBytes > kMaxFrameBytes) {
    return Status::Error("bad message framing: a message of " +
                         std::to_string(total_words * kWordBytes) + " bytes, over the " +
                         std::to_string(kMaxFrameBytes) + "-byte limit");
  }
  words_.reserve(std::min(total_words, kMaxReserveWords));
  if (const uint64_t have = UnpackWords(total_words - table_words);
      have < total_words * kWordBytes) {
    return truncated(total_words * kWordBytes, have);
  }
  if (zero_run_ != 0 || raw_run_ != 0) {
    return Status::Error("corrupt packed encoding: a run continues past the end of the message");
  }

  // Segments point into words_, which no longer grows for this frame.
  table = reinterpret_cast<const uint32_t*>(words_.data());
  const auto* next = reinterpret_cast<const capnp::word*>(words_.data() + table_words);
  for (uint64_t i = 0; i < segment_count; ++i) {
    segments_.emplace_back(next, table[1 + i]);
    next += table[1 + i];
  }
  return true;
}

}  // namespace xtrace
