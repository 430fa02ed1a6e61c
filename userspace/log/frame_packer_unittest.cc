// Tests for FramePacker and the word packers (userspace/log/frame_packer.cc): what they write
// is read back exactly, by Cap'n Proto's own unpacker and by PackedFrameInput.
#include "log/frame_packer.h"

#include <capnp/serialize-packed.h>
#include <gtest/gtest.h>
#include <kj/io.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "log/packed_frame_input.h"
#include "log/xtrace_log.capnp.h"
#include "log_file_test_util.h"
#include "log_test_util.h"

namespace xtrace {
namespace {

using test_util::ScratchDir;
using Words = std::vector<uint64_t>;
using PackFn = size_t (*)(const uint64_t*, size_t, uint8_t*);

constexpr uint8_t kGuard = 0xa5;
constexpr size_t kGuardBytes = 64;

// Packs `words` with `pack` into a buffer of exactly MaxPackedBytes plus a guard, and fails
// the test if anything past MaxPackedBytes was written.
std::vector<uint8_t> PackWith(PackFn pack, const Words& words) {
  const size_t room = packing::MaxPackedBytes(words.size());
  std::vector<uint8_t> out(room + kGuardBytes, kGuard);
  const size_t n = pack(words.data(), words.size(), out.data());
  EXPECT_LE(n, room);
  for (size_t i = room; i < out.size(); ++i) {
    EXPECT_EQ(out[i], kGuard) << "byte " << i << " past the room of " << room;
  }
  out.resize(n);
  return out;
}

// Unpacks with Cap'n Proto's own reader of the packed encoding.
Words UnpackWithCapnp(const std::vector<uint8_t>& packed, size_t words) {
  kj::ArrayInputStream input(kj::arrayPtr(packed.data(), packed.size()));
  capnp::_::PackedInputStream unpacked(input);
  Words out(words);
  if (words > 0) unpacked.read(out.data(), words * sizeof(uint64_t));
  EXPECT_EQ(input.tryGetReadBuffer().size(), 0u) << "packed bytes left over";
  return out;
}

// What Cap'n Proto's packer writes for the same words: the size ours is held to.
size_t CapnpPackedSize(const Words& words) {
  kj::VectorOutputStream out;
  {
    capnp::_::PackedOutputStream packed(out);
    packed.write(words.data(), words.size() * sizeof(uint64_t));
  }
  return out.getArray().size();
}

struct Variant {
  const char* name;
  PackFn pack;
};
std::vector<Variant> Variants() {
  std::vector<Variant> v{{"capnp", packing::PackWordsCapnp}, {"chosen", packing::PackWords}};
  if (packing::Bmi2Available()) v.push_back({"bmi2", packing::PackWordsBmi2});
  return v;
}

void ExpectRoundTrip(const Words& words, const std::string& what) {
  for (const Variant& variant : Variants()) {
    SCOPED_TRACE(what + ", " + variant.name + ", " + std::to_string(words.size()) + " words");
    const std::vector<uint8_t> packed = PackWith(variant.pack, words);
    EXPECT_EQ(UnpackWithCapnp(packed, words.size()), words);
    EXPECT_LE(packed.size(), CapnpPackedSize(words));
  }
}

// A word whose each byte is non-zero with probability density/8, any non-zero value.
uint64_t WordOfDensity(std::mt19937_64& rng, unsigned density) {
  uint64_t w = 0;
  for (unsigned i = 0; i < 8; ++i) {
    if (rng() % 8 < density) w |= uint64_t{1 + rng() % 255} << (8 * i);
  }
  return w;
}

TEST(FramePackerTest, EmptyInputPacksToNothing) {
  for (const Variant& variant : Variants()) {
    uint8_t out[packing::MaxPackedBytes(0)];
    EXPECT_EQ(variant.pack(nullptr, 0, out), 0u) << variant.name;
  }
}

TEST(FramePackerTest, RandomWordsOfEveryByteDensityRoundTrip) {
  std::mt19937_64 rng(23);
  for (unsigned density = 0; density <= 8; ++density) {
    Words words(1000);
    for (uint64_t& w : words) w = WordOfDensity(rng, density);
    ExpectRoundTrip(words, "density " + std::to_string(density) + "/8");
  }
  // Densities mixed word to word, at odd lengths (the last word is where a store overshoots).
  for (size_t length : {1, 2, 3, 7, 9, 63, 255, 256, 257, 4097}) {
    Words words(length);
    for (uint64_t& w : words) w = WordOfDensity(rng, static_cast<unsigned>(rng() % 9));
    ExpectRoundTrip(words, "mixed densities");
  }
}

TEST(FramePackerTest, EverySingleByteValueInEveryPositionRoundTrips) {
  Words words;
  for (unsigned pos = 0; pos < 8; ++pos) {
    for (uint64_t value = 0; value < 256; ++value) words.push_back(value << (8 * pos));
  }
  ExpectRoundTrip(words, "single bytes");
}

TEST(FramePackerTest, ZeroRunsLongerThanOneCountRoundTrip) {
  for (size_t run : {1, 2, 255, 256, 257, 511, 512, 1000}) {
    Words alone(run, 0);
    ExpectRoundTrip(alone, "zeros alone");
    Words between(run + 2, 0);
    between.front() = 0x1122334455667788ULL;
    between.back() = 0x42;
    ExpectRoundTrip(between, "zeros between words");
  }
  // A zero run of 256 words is a tag and count for 256 and another for the last one: 4 bytes.
  for (const Variant& variant : Variants()) {
    EXPECT_EQ(PackWith(variant.pack, Words(257, 0)).size(), 4u) << variant.name;
  }
}

TEST(FramePackerTest, VerbatimRunsOfDenseWordsRoundTrip) {
  for (size_t run : {1, 2, 255, 256, 257, 600}) {
    ExpectRoundTrip(Words(run, ~uint64_t{0}), "all-0xff words");
    // Words with one zero byte continue a verbatim run; with two they end it.
    Words mixed(run, 0x0101010101010101ULL);
    for (size_t i = 1; i < run; i += 3) mixed[i] = 0x0101010100010101ULL;
    if (run > 5) mixed[5] = 0x0100010100010101ULL;
    ExpectRoundTrip(mixed, "dense words with zero bytes");
  }
  // 300 all-0xff words: tag, 8 bytes, count 255, 255 words; tag, 8 bytes, count 43, 43 words.
  for (const Variant& variant : Variants()) {
    EXPECT_EQ(PackWith(variant.pack, Words(300, ~uint64_t{0})).size(), 300u * 8 + 4)
        << variant.name;
  }
}

TEST(FramePackerTest, SparseWordsPackToTagAndNonZeroBytes) {
  // A word of 3 non-zero bytes takes its tag and those bytes: the packing that makes logs small.
  for (const Variant& variant : Variants()) {
    const std::vector<uint8_t> packed = PackWith(variant.pack, {0x0000330000220011ULL});
    EXPECT_EQ(packed, (std::vector<uint8_t>{0b00100101, 0x11, 0x22, 0x33})) << variant.name;
  }
}

// A message of many segments (and both parities of segment count, for the table's padding).
void BuildManySegments(capnp::MallocMessageBuilder& message, unsigned strings) {
  auto batch = message.initRoot<log_schema::LogFrame>().initBatch();
  batch.setBaseNs(0x0123456789abcdefULL);
  auto list = batch.initStrings(strings);
  for (unsigned i = 0; i < strings; ++i) {
    list.set(i, std::string(5 + i % 40, static_cast<char>('a' + i % 26)) + std::to_string(i));
  }
}

TEST(FramePackerTest, FramesReadBackByCapnpAndPackedFrameInput) {
  ScratchDir dir;
  const std::string path = dir.File("frames.capnp");
  FramePacker packer;
  std::vector<std::vector<std::vector<uint64_t>>> expected;  // frame -> segment -> words
  size_t end = 0;
  // (strings, first segment's words): one segment; a few; hundreds (an even and an odd
  // count); a large one after small ones, so the buffer grows with frames in it.
  const std::pair<unsigned, unsigned> shapes[] = {{0, 1024}, {3, 1024}, {3, 4},  {40, 5},
                                                  {200, 4},  {201, 4},  {5000, 1 << 16}};
  for (const auto& [strings, first_words] : shapes) {
    capnp::MallocMessageBuilder message(first_words, capnp::AllocationStrategy::FIXED_SIZE);
    BuildManySegments(message, strings);
    auto segments = message.getSegmentsForOutput();
    auto& frame = expected.emplace_back();
    for (const auto& s : segments) {
      frame.emplace_back(reinterpret_cast<const uint64_t*>(s.begin()),
                         reinterpret_cast<const uint64_t*>(s.end()));
    }
    const size_t start = end;
    end = packer.Pack(segments, start);  // after the frames before it, which are kept

    // Cap'n Proto reads this frame alone back as the same message.
    kj::ArrayInputStream input(kj::arrayPtr(packer.data() + start, end - start));
    capnp::PackedMessageReader reader(input);
    auto batch = reader.getRoot<log_schema::LogFrame>().getBatch();
    EXPECT_EQ(batch.getBaseNs(), 0x0123456789abcdefULL);
    ASSERT_EQ(batch.getStrings().size(), strings);
    if (strings > 0) {
      const unsigned last = strings - 1;
      EXPECT_EQ(batch.getStrings()[last].size(), 5 + last % 40 + std::to_string(last).size());
    }
    for (size_t i = 0; i < segments.size(); ++i) {
      auto got = reader.getSegment(static_cast<unsigned>(i));
      ASSERT_EQ(got.size(), segments[i].size());
      EXPECT_EQ(std::memcmp(got.begin(), segments[i].begin(), got.size() * 8), 0);
    }
    EXPECT_EQ(input.tryGetReadBuffer().size(), 0u);
  }
  size_t most_segments = 0;
  for (const auto& frame : expected) most_segments = std::max(most_segments, frame.size());
  ASSERT_GT(most_segments, 100u) << "the test meant to pack many segments";
  test_util::WriteFileBytes(path, std::string(reinterpret_cast<const char*>(packer.data()), end));

  auto input = PackedFrameInput::Open(path);
  ASSERT_TRUE(input.ok()) << input.status().message();
  for (size_t f = 0; f < expected.size(); ++f) {
    SCOPED_TRACE("frame " + std::to_string(f));
    auto read = input->ReadFrame();
    ASSERT_TRUE(read.ok()) << read.status().message();
    ASSERT_TRUE(*read);
    const auto segments = input->segments();
    ASSERT_EQ(segments.size(), expected[f].size());
    for (size_t i = 0; i < segments.size(); ++i) {
      ASSERT_EQ(segments[i].size(), expected[f][i].size());
      EXPECT_EQ(std::memcmp(segments[i].begin(), expected[f][i].data(), segments[i].size() * 8), 0);
    }
  }
  auto last = input->ReadFrame();
  ASSERT_TRUE(last.ok());
  EXPECT_FALSE(*last);
}

TEST(FramePackerTest, AFramePackedAfterRoomInAFreshBufferIsTheSameFrame) {
  capnp::MallocMessageBuilder message;
  BuildManySegments(message, 10);
  FramePacker at_start, after_room;
  const size_t size = at_start.Pack(message.getSegmentsForOutput());
  ASSERT_EQ(after_room.Pack(message.getSegmentsForOutput(), 100), 100 + size);
  EXPECT_EQ(std::memcmp(after_room.data() + 100, at_start.data(), size), 0);
}

TEST(FramePackerTest, RandomWordsReadBackByPackedFrameInput) {
  // Segments of raw random words (a frame need not hold a valid message to be read as one),
  // with every density and long runs, through the project's own unpacker.
  std::mt19937_64 rng(7);
  std::vector<Words> segments;
  for (unsigned density = 0; density <= 8; ++density) {
    Words words(300 + density);
    for (uint64_t& w : words) w = WordOfDensity(rng, density);
    segments.push_back(std::move(words));
  }
  segments.push_back(Words(700, 0));
  segments.push_back(Words(700, ~uint64_t{0}));
  segments.push_back(Words(1, 5));
  std::vector<kj::ArrayPtr<const capnp::word>> pieces;
  for (const Words& s : segments) {
    pieces.push_back(kj::arrayPtr(reinterpret_cast<const capnp::word*>(s.data()), s.size()));
  }
  FramePacker packer;
  const size_t end = packer.Pack(kj::arrayPtr(pieces.data(), pieces.size()));

  ScratchDir dir;
  const std::string path = dir.File("random.capnp");
  test_util::WriteFileBytes(path, std::string(reinterpret_cast<const char*>(packer.data()), end));
  auto input = PackedFrameInput::Open(path);
  ASSERT_TRUE(input.ok()) << input.status().message();
  auto read = input->ReadFrame();
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_TRUE(*read);
  ASSERT_EQ(input->segments().size(), segments.size());
  for (size_t i = 0; i < segments.size(); ++i) {
    const auto got = input->segments()[i];
    EXPECT_EQ(Words(reinterpret_cast<const uint64_t*>(got.begin()),
                    reinterpret_cast<const uint64_t*>(got.end())),
              segments[i])
        << "segment " << i;
  }
}

}  // namespace
}  // namespace xtrace
