// Tests for resolving frames from code objects in a process's memory, served here by a fake
// memory laid out as CPython 3.11 lays its objects out: names, lines, and what happens when a
// code object's address is reused for another one.
#include "python/python_frames.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace xtrace {
namespace {

constexpr uint32_t kPid = 4242;
constexpr uint64_t kCodeType = 0x7000'0000;

// Regions of another process's memory, keyed by their start.
class FakeMemory final : public ProcessMemory {
 public:
  bool Read(uint32_t pid, uint64_t address, void* out, size_t size) override {
    ++reads;
    if (pid != kPid) return false;
    auto it = regions.upper_bound(address);
    if (it == regions.begin()) return false;
    --it;
    const uint64_t offset = address - it->first;
    if (offset + size > it->second.size()) return false;
    std::memcpy(out, it->second.data() + offset, size);
    return true;
  }

  template <typename T>
  void Put(uint64_t region, uint32_t offset, T value) {
    auto& bytes = regions.at(region);
    std::memcpy(bytes.data() + offset, &value, sizeof(T));
  }

  std::map<uint64_t, std::vector<uint8_t>> regions;
  int reads = 0;
};

class PythonFramesTest : public testing::Test {
 protected:
  void SetUp() override {
    layout_ = CPythonLayoutFor(3, 11);
    ASSERT_NE(layout_, nullptr);
    interpreters_.Set(kPid, PythonInterpreter{std::shared_ptr<const CPythonLayout>(
                                                  layout_, [](const CPythonLayout*) {}),
                                              0x1000, kCodeType});
  }

  // A compact ASCII string object at `at`.
  void PutString(uint64_t at, const std::string& text) {
    const CPythonLayout& l = *layout_;
    // Read as a whole compact header first, so as long as that at least.
    memory_.regions[at].assign(l.unicode_compact_data + text.size() + 1, 0);
    memory_.Put<int64_t>(at, l.unicode_length, static_cast<int64_t>(text.size()));
    memory_.Put<uint32_t>(at, l.unicode_state, (1u << 2) | (1u << 5) | (1u << 6));
    std::memcpy(memory_.regions[at].data() + l.unicode_ascii_data, text.data(), text.size());
  }

  // A code object at `at` named `function` in `file`, starting at `first_line`, whose strings
  // and (empty) line table lie at `at` + 0x1000 and on.
  void PutCode(uint64_t at, const std::string& file, const std::string& function,
               int32_t first_line) {
    const CPythonLayout& l = *layout_;
    const uint64_t file_at = at + 0x1000, function_at = at + 0x2000, table_at = at + 0x3000;
    PutString(file_at, file);
    PutString(function_at, function);
    memory_.regions[table_at].assign(l.bytes_data + 1, 0);  // a bytes object of size 0
    memory_.regions[at].assign(l.code_header_size + 64, 0);
    memory_.Put<uint64_t>(at, l.object_type, kCodeType);
    memory_.Put<uint64_t>(at, l.code_filename, file_at);
    memory_.Put<uint64_t>(at, l.code_qualname, function_at);
    memory_.Put<uint64_t>(at, l.code_linetable, table_at);
    memory_.Put<int32_t>(at, l.code_firstlineno, first_line);
  }

  // The innermost frame's function and line, for a frame of the code object at `code`.
  std::optional<std::pair<std::string, uint32_t>> FrameOf(PythonFrameResolver& resolver,
                                                          uint64_t code) {
    auto frames = resolver.Resolve(kPid, {{code, code + layout_->code_adaptive}});
    if (!frames || frames->size() != 1) return std::nullopt;
    return std::pair{std::string(strings_.Get((*frames)[0].function)), (*frames)[0].line};
  }

  const CPythonLayout* layout_ = nullptr;
  PythonInterpreters interpreters_;
  FakeMemory memory_;
  StringTable strings_;
  uint64_t now_ = 1'000'000'000;
};

TEST_F(PythonFramesTest, ACodeObjectIsReadOnceWhileItIsTrusted) {
  PutCode(0x10'0000, "a.py", "f", 10);
  PythonFrameResolver resolver(interpreters_, memory_, strings_, [this] { return now_; });
  EXPECT_EQ(FrameOf(resolver, 0x10'0000), (std::pair<std::string, uint32_t>{"f", 10}));
  const int reads = memory_.reads;
  now_ += kCodeRecheckNs - 1;
  for (int i = 0; i < 100; ++i) EXPECT_EQ(FrameOf(resolver, 0x10'0000)->first, "f");
  EXPECT_EQ(memory_.reads, reads);
  EXPECT_EQ(resolver.stats().code_objects, 1u);
  EXPECT_EQ(resolver.stats().rechecks, 0u);
}

TEST_F(PythonFramesTest, AnAddressReusedForAnotherCodeObjectGetsTheNewNameWithinTheInterval) {
  PutCode(0x10'0000, "a.py", "f", 10);
  PythonFrameResolver resolver(interpreters_, memory_, strings_, [this] { return now_; });
  EXPECT_EQ(FrameOf(resolver, 0x10'0000)->first, "f");

  // f is freed and g made at its address (as exec() or a recompile does), with strings and a
  // line table elsewhere.
  memory_.regions.clear();
  PutCode(0x10'0000, "b.py", "g", 20);
  memory_.Put<uint64_t>(0x10'0000, layout_->code_filename, 0x50'0000);
  PutString(0x50'0000, "b.py");

  // Within the interval the cached name stands (the bound on how long it can be stale)...
  now_ += kCodeRecheckNs / 2;
  EXPECT_EQ(FrameOf(resolver, 0x10'0000)->first, "f");
  // ...after it, the header is checked, found to be another code object, and read afresh.
  now_ += kCodeRecheckNs;
  EXPECT_EQ(FrameOf(resolver, 0x10'0000), (std::pair<std::string, uint32_t>{"g", 20}));
  auto frames = resolver.Resolve(kPid, {{0x10'0000, 0x10'0000 + layout_->code_adaptive}});
  ASSERT_TRUE(frames);
  EXPECT_EQ(strings_.Get((*frames)[0].file), "b.py");
  EXPECT_EQ(resolver.stats().rechecks, 1u);
  EXPECT_EQ(resolver.stats().replaced, 1u);
}

TEST_F(PythonFramesTest, ARecheckOfAnUnchangedCodeObjectReadsOnlyItsHeader) {
  PutCode(0x10'0000, "a.py", "f", 10);
  PythonFrameResolver resolver(interpreters_, memory_, strings_, [this] { return now_; });
  EXPECT_EQ(FrameOf(resolver, 0x10'0000)->first, "f");
  const int reads = memory_.reads;
  now_ += kCodeRecheckNs;
  EXPECT_EQ(FrameOf(resolver, 0x10'0000), (std::pair<std::string, uint32_t>{"f", 10}));
  EXPECT_EQ(memory_.reads, reads + 1);
  EXPECT_EQ(resolver.stats().rechecks, 1u);
  EXPECT_EQ(resolver.stats().replaced, 0u);
  // Checked just now: trusted for another interval.
  now_ += kCodeRecheckNs - 1;
  EXPECT_EQ(FrameOf(resolver, 0x10'0000)->first, "f");
  EXPECT_EQ(memory_.reads, reads + 1);
}

TEST_F(PythonFramesTest, AFreedCodeObjectAtRecheckLeavesTheStackUnresolved) {
  PutCode(0x10'0000, "a.py", "f", 10);
  PutCode(0x20'0000, "a.py", "outer", 3);
  PythonFrameResolver resolver(interpreters_, memory_, strings_, [this] { return now_; });
  const std::vector<std::pair<uint64_t, uint64_t>> stack = {{0x10'0000, 0}, {0x20'0000, 0}};
  ASSERT_TRUE(resolver.Resolve(kPid, stack));

  // The inner code object's memory now holds something that is not a code object.
  memory_.Put<uint64_t>(0x10'0000, layout_->object_type, 0x1234);
  now_ += kCodeRecheckNs;
  EXPECT_FALSE(resolver.Resolve(kPid, stack));
  EXPECT_EQ(resolver.stats().replaced, 1u);
  EXPECT_EQ(resolver.stats().unresolved, 1u);
  // Not cached as bad: once a code object is there again, it is read.
  PutCode(0x10'0000, "c.py", "h", 7);
  auto frames = resolver.Resolve(kPid, stack);
  ASSERT_TRUE(frames);
  EXPECT_EQ(strings_.Get((*frames)[0].function), "h");
  EXPECT_EQ(strings_.Get((*frames)[1].function), "outer");
}

TEST_F(PythonFramesTest, AStackReadsTheClockOnceWhateverItsDepth) {
  // Each frame would otherwise cost a clock read on the collector's path for every stack.
  constexpr int kDepth = 30;
  std::vector<std::pair<uint64_t, uint64_t>> stack;
  for (int i = 0; i < kDepth; ++i) {
    const uint64_t at = 0x10'0000 + static_cast<uint64_t>(i) * 0x10'0000;
    PutCode(at, "deep.py", "f" + std::to_string(i), i + 1);
    stack.emplace_back(at, 0);
  }
  int clock_reads = 0;
  PythonFrameResolver resolver(interpreters_, memory_, strings_, [&] {
    ++clock_reads;
    return now_;
  });
  ASSERT_TRUE(resolver.Resolve(kPid, stack));  // every code object read for the first time
  EXPECT_EQ(clock_reads, 1);
  ASSERT_TRUE(resolver.Resolve(kPid, stack));  // every code object from the cache
  EXPECT_EQ(clock_reads, 2);
  now_ += kCodeRecheckNs;
  auto frames = resolver.Resolve(kPid, stack);  // every code object re-checked
  ASSERT_TRUE(frames);
  EXPECT_EQ(clock_reads, 3);
  EXPECT_EQ(resolver.stats().rechecks, static_cast<uint64_t>(kDepth));
  EXPECT_EQ(strings_.Get((*frames)[kDepth - 1].function), "f29");
}

TEST(PythonFramesSummary, SaysWhatWasResolvedLostAndReadAgain) {
  EXPECT_EQ(PythonFramesSummary({}), "");
  EXPECT_EQ(PythonFramesSummary({.stacks = 1, .code_objects = 1}),
            " Python frames: 1 stack resolved; 1 code object read.");
  EXPECT_EQ(PythonFramesSummary({.stacks = 120, .unresolved = 3, .code_objects = 17, .rechecks = 40,
                                 .replaced = 2}),
            " Python frames: 120 stacks resolved, 3 left without frames (a frame could not be "
            "read, or was not a code object when read); 17 code objects read, 2 found replaced "
            "at their address and read again.");
  // What the ring carried of the stacks' frames.
  EXPECT_EQ(PythonFramesSummary({.stacks = 40, .code_objects = 6}, 400, 330),
            " Python frames: 40 stacks resolved; 6 code objects read; 400 frames in the stacks, "
            "330 of them the same as in their thread's stack before (not written again).");
  // Every stack lost is still said.
  EXPECT_EQ(PythonFramesSummary({.unresolved = 5}),
            " Python frames: 0 stacks resolved, 5 left without frames (a frame could not be "
            "read, or was not a code object when read); 0 code objects read.");
}

}  // namespace
}  // namespace xtrace
