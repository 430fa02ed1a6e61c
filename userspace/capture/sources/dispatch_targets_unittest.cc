// Following the loader's dispatch stubs of bookworm's (1.8.12) and trixie's (1.20.6) loaders
// through a made-up memory, and reading maps lines.
#include "capture/sources/dispatch_targets.h"

#include <gtest/gtest.h>

#include <map>

namespace xtrace {
namespace {

// A process memory of a few words; a read elsewhere fails.
ReadWord Memory(std::map<uint64_t, uint64_t> words) {
  return [words](uint64_t at) -> std::optional<uint64_t> {
    auto it = words.find(at);
    if (it == words.end()) return std::nullopt;
    return it->second;
  };
}

constexpr uint64_t kStub = 0x7f0000010000;  // where the stub is mapped
constexpr uint64_t kGot = 0x7f0000020000;
constexpr uint64_t kContext = 0x5600000000;
constexpr uint64_t kDriverFunction = 0x7f1000001234;

// bookworm's zeKernelSetArgumentValue: mov 0x1000(%rip),%rax; mov (%rax),%r8;
// mov 0x368(%r8),%rax; test %rax,%rax; je; jmp *%rax.
const std::vector<uint8_t> kBookworm = {0x48, 0x8b, 0x05, 0x00, 0x10, 0x00, 0x00, 0x4c, 0x8b,
                                        0x00, 0x49, 0x8b, 0x80, 0x68, 0x03, 0x00, 0x00, 0x48,
                                        0x85, 0xc0, 0x74, 0x0a, 0xff, 0xe0};
// Its zeCommandListAppendMemoryCopy saves rdx in r10 before using rdx for the table.
const std::vector<uint8_t> kBookwormSavingAnArgument = {
    0x48, 0x8b, 0x05, 0x00, 0x10, 0x00, 0x00, 0x49, 0x89, 0xd2, 0x48, 0x8b, 0x10, 0x48, 0x8b,
    0x82, 0x80, 0x01, 0x00, 0x00, 0x48, 0x85, 0xc0, 0x74, 0x07, 0x4c, 0x89, 0xd2, 0xff, 0xe0};
// trixie's: endbr64; mov 0x1000(%rip),%rax (ze_lib::destruction); cmpb $0,(%rax); jne;
// mov 0x2000(%rip),%r8 (ze_lib::context); mov (%r8),%rax; mov 0x10(%rax),%rax (the table);
// mov 0x528(%rax),%rax; test %rax,%rax; je; jmp *%rax.
const std::vector<uint8_t> kTrixie = {
    0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x8b, 0x05, 0x00, 0x10, 0x00, 0x00, 0x80, 0x38, 0x00, 0x75,
    0x20, 0x4c, 0x8b, 0x05, 0x00, 0x20, 0x00, 0x00, 0x49, 0x8b, 0x00, 0x48, 0x8b, 0x40, 0x10,
    0x48, 0x8b, 0x80, 0x28, 0x05, 0x00, 0x00, 0x48, 0x85, 0xc0, 0x74, 0x16, 0xff, 0xe0};

TEST(DispatchTargetsTest, FollowsBookwormsStub) {
  // The RIP-relative load reads the word 0x1000 past the instruction's end (7 bytes).
  const auto read = Memory({{kStub + 7 + 0x1000, kGot}, {kGot, kContext},
                            {kContext + 0x368, kDriverFunction}});
  uint64_t slot = 0;
  EXPECT_EQ(FollowDispatchStub(kBookworm, kStub, read, &slot), kDriverFunction);
  EXPECT_EQ(slot, kContext + 0x368);  // its place in the loader's dispatch table
}

TEST(DispatchTargetsTest, FollowsAStubThatSavesAnArgumentFirst) {
  const auto read = Memory({{kStub + 7 + 0x1000, kGot}, {kGot, kContext},
                            {kContext + 0x180, kDriverFunction}});
  EXPECT_EQ(FollowDispatchStub(kBookwormSavingAnArgument, kStub, read), kDriverFunction);
}

TEST(DispatchTargetsTest, FollowsTrixiesStub) {
  constexpr uint64_t kContextSlot = 0x7f0000030000, kTable = 0x5600001000;
  // The first RIP-relative load ends at byte 11 (the teardown flag's address, compared, not
  // read), the second at byte 23.
  const auto read = Memory({{kStub + 11 + 0x1000, 0x7f0000040000},
                            {kStub + 23 + 0x2000, kContextSlot}, {kContextSlot, kContext},
                            {kContext + 0x10, kTable}, {kTable + 0x528, kDriverFunction}});
  uint64_t slot = 0;
  EXPECT_EQ(FollowDispatchStub(kTrixie, kStub, read, &slot), kDriverFunction);
  EXPECT_EQ(slot, kTable + 0x528);
}

// Stubs of functions with more than six parameters save registers first, and trixie's load
// the stack arguments into registers: bookworm's zeCommandListAppendLaunchMultipleKernelsIndirect
// (push %rbx; mov %rdx,%r10; mov (%rax),%rdx; mov 0x208(%rdx),%rax; test; je) ...
const std::vector<uint8_t> kBookwormPushing = {0x48, 0x8b, 0x05, 0x00, 0x10, 0x00, 0x00, 0x53,
                                               0x49, 0x89, 0xd2, 0x48, 0x8b, 0x10, 0x48, 0x8b,
                                               0x82, 0x08, 0x02, 0x00, 0x00, 0x48, 0x85, 0xc0,
                                               0x74, 0x06, 0x4c, 0x89, 0xd2, 0x5b, 0xff, 0xe0};
// ... its zeCommandListAppendMemoryCopyRegion (five pushes, r14 to rbx; the function in r10:
// mov 0x190(%rax),%r10; test %r10,%r10; je) ...
const std::vector<uint8_t> kBookwormInR10 = {
    0x48, 0x8b, 0x05, 0x00, 0x10, 0x00, 0x00, 0x41, 0x56, 0x41, 0x55, 0x41, 0x54, 0x55, 0x53,
    0x48, 0x8b, 0x00, 0x4c, 0x8b, 0x90, 0x90, 0x01, 0x00, 0x00, 0x4d, 0x85, 0xd2, 0x74, 0x12};
// ... and trixie's zeCommandListAppendLaunchMultipleKernelsIndirect (endbr64; mov (rip),%rax;
// push %rbx; mov 0x10(%rsp),%r11d; mov 0x18(%rsp),%rbx; cmpb $0,(%rax); jne;
// mov (rip),%r10; mov (%r10),%rax; mov 0x10(%rax),%rax; mov 0x280(%rax),%rax; test; je).
const std::vector<uint8_t> kTrixieStackArguments = {
    0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x8b, 0x05, 0x00, 0x10, 0x00, 0x00, 0x53, 0x44, 0x8b, 0x5c,
    0x24, 0x10, 0x48, 0x8b, 0x5c, 0x24, 0x18, 0x80, 0x38, 0x00, 0x75, 0x3e, 0x4c, 0x8b, 0x15,
    0x00, 0x20, 0x00, 0x00, 0x49, 0x8b, 0x02, 0x48, 0x8b, 0x40, 0x10, 0x48, 0x8b, 0x80, 0x80,
    0x02, 0x00, 0x00, 0x48, 0x85, 0xc0, 0x74, 0x13};

TEST(DispatchTargetsTest, FollowsStubsThatSaveRegistersAndLoadStackArguments) {
  EXPECT_EQ(FollowDispatchStub(kBookwormPushing, kStub,
                               Memory({{kStub + 7 + 0x1000, kGot}, {kGot, kContext},
                                       {kContext + 0x208, kDriverFunction}})),
            kDriverFunction);
  EXPECT_EQ(FollowDispatchStub(kBookwormInR10, kStub,
                               Memory({{kStub + 7 + 0x1000, kGot}, {kGot, kContext},
                                       {kContext + 0x190, kDriverFunction}})),
            kDriverFunction);
  constexpr uint64_t kContextSlot = 0x7f0000030000, kTable = 0x5600001000;
  // The second RIP-relative load ends at byte 34.
  EXPECT_EQ(FollowDispatchStub(kTrixieStackArguments, kStub,
                               Memory({{kStub + 11 + 0x1000, 0x7f0000040000},
                                       {kStub + 34 + 0x2000, kContextSlot},
                                       {kContextSlot, kContext},
                                       {kContext + 0x10, kTable},
                                       {kTable + 0x280, kDriverFunction}})),
            kDriverFunction);
}

TEST(DispatchTargetsTest, NothingBeforeTheLoaderIsInitialised) {
  // The slot is still null: nothing to probe yet.
  const auto read = Memory({{kStub + 7 + 0x1000, kGot}, {kGot, kContext}, {kContext + 0x368, 0}});
  EXPECT_EQ(FollowDispatchStub(kBookworm, kStub, read), std::nullopt);
  // The context itself is not there yet.
  EXPECT_EQ(FollowDispatchStub(kBookworm, kStub, Memory({{kStub + 7 + 0x1000, kGot}, {kGot, 0}})),
            std::nullopt);
  // Unreadable memory.
  EXPECT_EQ(FollowDispatchStub(kBookworm, kStub, Memory({})), std::nullopt);
}

TEST(DispatchTargetsTest, NotAStub) {
  const auto read = Memory({});
  // push %rbp; mov %rsp,%rbp: a function with a prologue.
  const std::vector<uint8_t> prologue = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10};
  EXPECT_EQ(FollowDispatchStub(prologue, kStub, read), std::nullopt);
  // Cut short before its branch.
  const std::vector<uint8_t> cut(kBookworm.begin(), kBookworm.begin() + 12);
  const auto full = Memory({{kStub + 7 + 0x1000, kGot}, {kGot, kContext},
                            {kContext + 0x368, kDriverFunction}});
  EXPECT_EQ(FollowDispatchStub(cut, kStub, full), std::nullopt);
  EXPECT_EQ(FollowDispatchStub({}, kStub, full), std::nullopt);
}

TEST(DispatchTargetsTest, ParsesMapsLinesAndFindsTheExecutableSegment) {
  const std::string maps =
      "7f0000000000-7f0000010000 r--p 00000000 08:01 1234 /usr/lib/libze_loader.so.1.8.0\n"
      "7f0000010000-7f0000040000 r-xp 00010000 08:01 1234 /usr/lib/libze_loader.so.1.8.0\n"
      "7f0000040000-7f0000041000 rw-p 00000000 00:00 0 \n"
      "7f1000000000-7f1000100000 r-xp 00002000 fd:02 99 /opt/my driver/libze_intel_gpu.so.1\n"
      "7f2000000000-7f2000001000 r-xp 00000000 08:01 77 /tmp/gone.so (deleted)\n"
      "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n";
  const auto segments = ParseMappedSegments(maps);
  ASSERT_EQ(segments.size(), 3u);
  EXPECT_FALSE(segments[0].executable);
  EXPECT_TRUE(segments[1].executable);
  EXPECT_EQ(segments[1].file_offset, 0x10000u);
  EXPECT_EQ(segments[2].path, "/opt/my driver/libze_intel_gpu.so.1");
  EXPECT_EQ(segments[2].dev_major, 0xfdu);
  EXPECT_EQ(segments[2].dev_minor, 2u);
  EXPECT_EQ(segments[2].inode, 99u);
  EXPECT_EQ(segments[2].range, "7f1000000000-7f1000100000");
  const MappedSegment* at = SegmentAt(segments, kDriverFunction);
  ASSERT_NE(at, nullptr);
  EXPECT_EQ(at->inode, 99u);
  EXPECT_EQ(kDriverFunction - at->start + at->file_offset, 0x1234u + 0x2000u);
  EXPECT_EQ(SegmentAt(segments, 0x7f0000000100), nullptr) << "not executable";
  EXPECT_EQ(SegmentAt(segments, 0x1000), nullptr);
}

}  // namespace
}  // namespace xtrace
