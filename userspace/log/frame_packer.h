// FramePacker: writes a Cap'n Proto message as one packed, stream-framed frame (the log's frame
// format) into a buffer it keeps and reuses, three times faster than Cap'n Proto's own
// packer where the CPU has BMI2. Internal to the log library (LogWriter uses it).
#pragma once

#include <capnp/message.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace xtrace {

namespace packing {

// Bytes PackWords may touch for `words` input words: the longest encoding is 10 bytes a word
// (tag, 8 bytes, a run count), and every store may write up to 8 bytes past what it keeps.
constexpr size_t MaxPackedBytes(size_t words) { return words * 10 + 16; }

// Packs `count` words into `out` (room for MaxPackedBytes(count)) in Cap'n Proto's packed
// encoding and returns the bytes written. The fastest variant the CPU runs.
size_t PackWords(const uint64_t* in, size_t count, uint8_t* out);

// The variants, for tests and the benchmark: Cap'n Proto's own packer (what PackWords falls
// back to), and ours, which needs BMI2's pext (only when Bmi2Available(): the CPU has it, and
// has it fast).
size_t PackWordsCapnp(const uint64_t* in, size_t count, uint8_t* out);
size_t PackWordsBmi2(const uint64_t* in, size_t count, uint8_t* out);
bool Bmi2Available();

}  // namespace packing

class FramePacker {
 public:
  FramePacker() = default;
  FramePacker(const FramePacker&) = delete;
  FramePacker& operator=(const FramePacker&) = delete;

  // Packs `segments` (a message's getSegmentsForOutput()) as one frame — the segment table
  // and then the segments, as Cap'n Proto's stream framing lays them — starting at byte
  // `at` of the buffer; bytes before `at` are kept. Returns where the frame ends. The buffer
  // grows as needed and is never shrunk, so a writer's batches allocate nothing once it has
  // seen its largest.
  size_t Pack(kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments, size_t at = 0);

  uint8_t* data() { return buffer_.get(); }
  const uint8_t* data() const { return buffer_.get(); }
  size_t capacity() const { return capacity_; }

 private:
  // Makes the buffer at least `bytes` long, keeping its first `keep` bytes.
  void Reserve(size_t bytes, size_t keep);

  std::unique_ptr<uint8_t[]> buffer_;  // not value-initialised: every byte is packed over
  size_t capacity_ = 0;
};

}  // namespace xtrace
