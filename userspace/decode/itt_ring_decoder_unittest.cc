// Tests of the ITT fast path's validation (itt_ring_decoder.cc): raw bytes in, including
// truncated, oversized and lying records, fields checked out.
#include "decode/itt_ring_decoder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "xtrace/records.h"

namespace xtrace {
namespace {

// Builds ring bytes the way the collector lays them out.
class RingBytes {
 public:
  RingBytes& Record(uint8_t op, uint8_t fields, uint32_t tid, uint64_t time,
                    std::vector<uint64_t> words, std::string_view text = {}, int size_delta = 0) {
    const size_t padded = (text.size() + 7) & ~size_t{7};
    const size_t size = 16 + 8 * words.size() + padded;
    xt_itt_ring_record head{static_cast<uint16_t>(size + size_delta), op, fields, tid, time};
    Append(&head, sizeof(head));
    for (uint64_t w : words) Append(&w, 8);
    std::vector<char> tail(padded, 0);
    std::memcpy(tail.data(), text.data(), text.size());
    Append(tail.data(), tail.size());
    return *this;
  }
  std::span<const std::byte> bytes() const { return bytes_; }
  std::vector<std::byte>& raw() { return bytes_; }

 private:
  void Append(const void* p, size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
  }
  std::vector<std::byte> bytes_;
};

std::vector<IttRingRecord> Decode(std::span<const std::byte> bytes, IttRingDecodeStats* stats,
                                  std::vector<std::string>* texts = nullptr) {
  std::vector<IttRingRecord> out;
  *stats = DecodeIttRingRecords(bytes, [&](const IttRingRecord& r) {
    out.push_back(r);
    if (texts) texts->emplace_back(r.text);
  });
  return out;
}

TEST(IttRingDecoder, DecodesEveryFieldOfEveryOp) {
  RingBytes ring;
  ring.Record(XT_ITT_TASK_BEGIN, XT_ITT_RF_DOMAIN | XT_ITT_RF_NAME, 7, 100, {0xd0, 0x50})
      .Record(XT_ITT_REGION_BEGIN, XT_ITT_RF_DOMAIN | XT_ITT_RF_NAME | XT_ITT_RF_ID, 7, 101,
              {0xd0, 0x50, 11, 12})
      .Record(XT_ITT_MARKER, XT_ITT_RF_DOMAIN | XT_ITT_RF_NAME | XT_ITT_RF_EXTRA, 8, 102,
              {0xd0, 0x50, 3})
      .Record(XT_ITT_THREAD_NAME, XT_ITT_RF_TEXT, 8, 103, {8}, "worker 1")
      .Record(XT_ITT_TASK_END, XT_ITT_RF_DOMAIN, 7, 104, {0xd0});
  IttRingDecodeStats stats;
  std::vector<std::string> texts;
  const auto got = Decode(ring.bytes(), &stats, &texts);
  EXPECT_EQ(stats.malformed, 0u) << stats.first_error;
  EXPECT_EQ(stats.bytes, ring.bytes().size());
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].op, uint32_t{XT_ITT_TASK_BEGIN});
  EXPECT_EQ(got[0].tid, 7u);
  EXPECT_EQ(got[0].time, 100u);
  EXPECT_EQ(got[0].domain, 0xd0u);
  EXPECT_EQ(got[0].name, 0x50u);
  EXPECT_EQ(got[0].id[0], 0u);
  EXPECT_EQ(got[1].id[0], 11u);
  EXPECT_EQ(got[1].id[1], 12u);
  EXPECT_EQ(got[2].extra, 3u);
  EXPECT_EQ(texts[3], "worker 1");
  EXPECT_EQ(got[4].domain, 0xd0u);
  EXPECT_EQ(got[4].name, 0u);
}

TEST(IttRingDecoder, StopsAtTheFirstRecordThatBreaksARuleAndSaysWhich) {
  struct Case {
    const char* what;
    RingBytes ring;
    const char* error;
  };
  std::vector<Case> cases;
  cases.push_back({"size below the header", {}, "size"});
  cases.back().ring.Record(XT_ITT_TASK_END, XT_ITT_RF_DOMAIN, 1, 1, {1}, {}, -16);
  cases.push_back({"size not a multiple of 8", {}, "size"});
  cases.back().ring.Record(XT_ITT_TASK_END, XT_ITT_RF_DOMAIN, 1, 1, {1}, {}, 4);
  cases.push_back({"size past the bytes", {}, "past the written bytes"});
  cases.back().ring.Record(XT_ITT_TASK_END, XT_ITT_RF_DOMAIN, 1, 1, {1}, {}, 64);
  cases.push_back({"fields that do not fill the size", {}, "does not match"});
  cases.back().ring.Record(XT_ITT_TASK_END, XT_ITT_RF_DOMAIN, 1, 1, {1, 2});
  cases.push_back({"fields that overrun the size", {}, "too small"});
  cases.back().ring.Record(XT_ITT_TASK_BEGIN, XT_ITT_RF_DOMAIN | XT_ITT_RF_NAME, 1, 1, {1});
  cases.push_back({"pause never comes this way", {}, "op 12"});
  cases.back().ring.Record(XT_ITT_PAUSE, 0, 1, 1, {});
  cases.push_back({"unknown op", {}, "op 200"});
  cases.back().ring.Record(200, 0, 1, 1, {});
  cases.push_back({"unknown field bit", {}, "fields"});
  cases.back().ring.Record(XT_ITT_TASK_END, 0x20, 1, 1, {});
  cases.push_back({"text on a task", {}, "fields"});
  cases.back().ring.Record(XT_ITT_TASK_BEGIN, XT_ITT_RF_TEXT, 1, 1, {3}, "abc");
  cases.push_back({"thread id 0", {}, "thread id 0"});
  cases.back().ring.Record(XT_ITT_TASK_END, XT_ITT_RF_DOMAIN, 0, 1, {1});
  cases.push_back({"text longer than allowed", {}, "text of"});
  cases.back().ring.Record(XT_ITT_THREAD_NAME, XT_ITT_RF_TEXT, 1, 1, {100000});
  cases.push_back({"text length beyond the record", {}, "does not match"});
  cases.back().ring.Record(XT_ITT_THREAD_NAME, XT_ITT_RF_TEXT, 1, 1, {64}, "short");
  cases.push_back({"zeroed header", {}, "size 0"});
  cases.back().ring.raw().resize(16);
  for (Case& c : cases) {
    SCOPED_TRACE(c.what);
    RingBytes good;
    good.Record(XT_ITT_TASK_END, XT_ITT_RF_DOMAIN, 5, 1, {1});
    std::vector<std::byte> bytes(good.bytes().begin(), good.bytes().end());
    bytes.insert(bytes.end(), c.ring.bytes().begin(), c.ring.bytes().end());
    bytes.insert(bytes.end(), good.bytes().begin(), good.bytes().end());
    IttRingDecodeStats stats;
    const auto got = Decode(bytes, &stats);
    EXPECT_EQ(got.size(), 1u);  // the record before it, nothing after it
    EXPECT_EQ(stats.malformed, 1u);
    EXPECT_NE(stats.first_error.find(c.error), std::string::npos) << stats.first_error;
    EXPECT_NE(stats.first_error.find("at byte 24"), std::string::npos) << stats.first_error;
  }
}

TEST(IttRingDecoder, ATruncatedLastRecordIsMalformed) {
  RingBytes ring;
  ring.Record(XT_ITT_TASK_END, XT_ITT_RF_DOMAIN, 5, 1, {1});
  ring.raw().resize(ring.raw().size() + 8);
  IttRingDecodeStats stats;
  EXPECT_EQ(Decode(ring.bytes(), &stats).size(), 1u);
  EXPECT_NE(stats.first_error.find("truncated header"), std::string::npos) << stats.first_error;
}

TEST(IttRingDecoder, ControlBlockAndRingHeadersAreChecked) {
  xt_itt_control c{};
  EXPECT_FALSE(ValidateIttControl(c, 0x1000).ok());
  c.magic = XT_ITT_CONTROL_MAGIC;
  c.version = XT_ITT_LAYOUT_VERSION;
  c.max_rings = XT_ITT_MAX_RINGS;
  c.self = 0x2000;
  const Status moved = ValidateIttControl(c, 0x1000);
  EXPECT_NE(moved.message().find("says it is at 0x2000"), std::string::npos) << moved.message();
  c.self = 0x1000;
  EXPECT_TRUE(ValidateIttControl(c, 0x1000).ok());
  c.version = 99;
  EXPECT_FALSE(ValidateIttControl(c, 0x1000).ok());
  c.version = XT_ITT_LAYOUT_VERSION;
  c.ring_count = 5000;  // more threads asked than there are slots
  EXPECT_EQ(IttRingCount(c), uint32_t{XT_ITT_MAX_RINGS});

  xt_itt_ring r{};
  r.magic = XT_ITT_RING_MAGIC;
  r.data_bytes = 3000;
  EXPECT_FALSE(ValidateIttRing(r, 0x3000).ok());
  r.data_bytes = 1u << 30;
  EXPECT_FALSE(ValidateIttRing(r, 0x3000).ok());
  r.data_bytes = 4096;
  EXPECT_TRUE(ValidateIttRing(r, 0x3000).ok());
  r.write_pos = 10000;
  EXPECT_EQ(IttRingPending(r, 9000).value(), 1000u);
  EXPECT_FALSE(IttRingPending(r, 1000).ok());   // more than the ring holds
  EXPECT_FALSE(IttRingPending(r, 20000).ok());  // behind what was already read
}

// What the fuzz harness does, over random and mutated inputs: never a crash, never a read
// outside the bytes (AddressSanitizer builds check the latter).
TEST(IttRingDecoder, FuzzEntryPointSurvivesRandomAndMutatedBytes) {
  std::mt19937_64 rng(42);
  RingBytes valid;
  valid.Record(XT_ITT_TASK_BEGIN, XT_ITT_RF_DOMAIN | XT_ITT_RF_NAME, 7, 100, {1, 2})
      .Record(XT_ITT_THREAD_NAME, XT_ITT_RF_TEXT, 7, 101, {5}, "hello");
  std::vector<std::byte> seed(sizeof(xt_itt_control) + sizeof(xt_itt_ring));
  xt_itt_ring ring{};
  ring.magic = XT_ITT_RING_MAGIC;
  ring.data_bytes = 4096;
  ring.write_pos = valid.bytes().size();
  std::memcpy(seed.data() + sizeof(xt_itt_control), &ring, sizeof(ring));
  seed.insert(seed.end(), valid.bytes().begin(), valid.bytes().end());
  EXPECT_EQ(FuzzIttRingBytes(seed), 2u);
  for (int i = 0; i < 20000; ++i) {
    std::vector<std::byte> input = seed;
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int f = 0; f < flips; ++f) {
      const size_t at = sizeof(xt_itt_control) + rng() % (input.size() - sizeof(xt_itt_control));
      input[at] = static_cast<std::byte>(rng());
    }
    input.resize(sizeof(xt_itt_control) + rng() % (input.size() - sizeof(xt_itt_control) + 1));
    (void)FuzzIttRingBytes(input);
  }
  for (int i = 0; i < 2000; ++i) {
    std::vector<std::byte> input(rng() % 10000);
    for (auto& b : input) b = static_cast<std::byte>(rng());
    (void)FuzzIttRingBytes(input);
  }
}

}  // namespace
}  // namespace xtrace
