// PackedFrameInput: reads a file of stream-framed, packed Cap'n Proto messages one message at
// a time, with memory bounded by the largest message, and says exactly where and how a
// damaged file stops making sense. Internal to the log library (LogReader uses it).
#pragma once

#include <capnp/common.h>
#include <kj/common.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace xtrace {

class PackedFrameInput {
 public:
  // Limits that keep a damaged or hostile file from making the reader allocate without
  // bound. Cap'n Proto's own stream reader also refuses more than 512 segments.
  static constexpr uint32_t kMaxSegments = 512;
  static constexpr uint64_t kMaxFrameBytes = uint64_t{1} << 30;

  // Opens `path` for reading; the error names the path and the reason.
  static Result<PackedFrameInput> Open(const std::string& path);

  PackedFrameInput(PackedFrameInput&&) = default;
  PackedFrameInput& operator=(PackedFrameInput&&) = default;

  // Reads the next message. True: segments() holds it until the next call. False: the file
  // ended cleanly, before the first byte of another message. An error (without the path;
  // the caller knows what the frame was meant to be) says what is wrong, e.g. "truncated
  // message (need 40960 bytes unpacked, have 880; the file ends at byte 5000)". Sizes are of
  // the unpacked message: how many packed bytes are missing cannot be known.
  Result<bool> ReadFrame();

  // Steps over the next `bytes` bytes of the file unread (a frame whose length is known):
  // within the buffer, by seeking in a regular file, by reading and dropping them otherwise.
  // An error (without the path) when the file ends first, or a read or seek fails.
  Status Skip(uint64_t bytes);

  // Goes to byte `offset` of the file (a regular file: a frame boundary the caller knows, such
  // as the batch index's); the next ReadFrame starts there. An error (without the path) when
  // the seek fails.
  Status Seek(uint64_t offset);

  kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments() const {
    return kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>>(segments_.data(), segments_.size());
  }
  uint64_t frame_words() const { return words_size_; }
  uint64_t frame_offset() const { return frame_offset_; }           // where the last frame began
  uint64_t offset() const { return file_pos_ + pos_; }              // bytes consumed so far
  std::optional<uint64_t> file_size() const { return file_size_; }  // regular files only
  // The last error came from read(2) (EIO and the like), not from the file's contents.
  bool read_failed() const { return !read_error_.ok(); }

 private:
  explicit PackedFrameInput(UniqueFd fd, std::optional<uint64_t> file_size);

  // Unpacks the next word of the packed stream into `out`. Returns the bytes of it that
  // could be produced: 8, or fewer when the file ends (or a read fails: see read_error_).
  int UnpackWord(uint64_t* out);
  // One byte from the file; false at end of file or on a read error.
  bool NextByte(uint8_t* byte);
  bool Refill();
  // Unpacks `count` words onto words_; on a short file returns the bytes that were present.
  uint64_t UnpackWords(uint64_t count);
  // Unpacks into [*out, out_end) the words whose whole encoding is in the buffer, leaving the
  // last few bytes (fewer than a word's longest encoding plus a read-ahead) and run states
  // that cross the buffer's end to UnpackWord. Advances *out and pos_.
  void UnpackBuffered(uint64_t** out, uint64_t* out_end);
  // Makes room for `more` words after words_size_ (growing geometrically, never zero-filling).
  void GrowWords(uint64_t more);

  UniqueFd fd_;
  std::optional<uint64_t> file_size_;
  std::vector<uint8_t> buffer_;
  size_t pos_ = 0;         // next unread byte in buffer_
  size_t end_ = 0;         // bytes valid in buffer_
  uint64_t file_pos_ = 0;  // file offset of buffer_[0]
  uint64_t frame_offset_ = 0;
  Status read_error_;
  // Packed-encoding state: after a 0x00 tag, zero words still to emit; after 0xff, raw
  // words still to copy.
  uint32_t zero_run_ = 0;
  uint32_t raw_run_ = 0;
  // The current message, unpacked (reused between frames; not a vector, whose resize would
  // zero-fill every word before it is unpacked over).
  std::unique_ptr<uint64_t[]> words_;
  uint64_t words_size_ = 0;
  uint64_t words_capacity_ = 0;
  std::vector<kj::ArrayPtr<const capnp::word>> segments_;
};

}  // namespace xtrace
