#include "decode/py_stack_chains.h"

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace xtrace {
namespace {

// A stack record of thread (pid, tid) as BPF writes it: `frames` in all, the outermost
// `shared` not written, the others (innermost first) in `inner`. Decoded, not hand-built.
class Record {
 public:
  Record(uint32_t pid, uint32_t tid, uint32_t frames, uint32_t shared,
         std::vector<xt_py_frame> inner) {
    xt_py_stack rec{};
    rec.hdr.type = XT_REC_PY_STACK;
    rec.hdr.size = static_cast<uint16_t>(sizeof(rec) + inner.size() * sizeof(xt_py_frame));
    rec.hdr.pid = pid;
    rec.hdr.tid = tid;
    rec.frames = frames;
    rec.shared = shared;
    bytes_.resize(rec.hdr.size);
    std::memcpy(bytes_.data(), &rec, sizeof(rec));
    if (!inner.empty())
      std::memcpy(bytes_.data() + sizeof(rec), inner.data(), inner.size() * sizeof(xt_py_frame));
  }
  DecodedPyStack Decoded() const {
    auto decoded = DecodeRecord(bytes_);
    EXPECT_TRUE(decoded.ok()) << decoded.status().message();
    return std::get<DecodedPyStack>(*decoded);
  }

 private:
  std::vector<std::byte> bytes_;
};

std::vector<xt_py_frame> Frames(const DecodedPyStack& s) {
  EXPECT_EQ(s.shared, 0u);
  std::vector<xt_py_frame> out;
  for (uint32_t i = 0; i < s.frames; ++i) out.push_back(s.frame(i));
  return out;
}

std::vector<uint64_t> Codes(const std::vector<xt_py_frame>& frames) {
  std::vector<uint64_t> codes;
  for (const xt_py_frame& f : frames) codes.push_back(f.code);
  return codes;
}

TEST(PyStackChains, SharedOuterFramesComeFromTheThreadsLastStack) {
  PyStackChains chains;
  // main -> loop -> f, then main -> loop -> g -> h: two outer frames shared.
  auto first = chains.Expand(Record(7, 8, 3, 0, {{0xf, 1}, {0x10, 2}, {0x11, 3}}).Decoded());
  EXPECT_EQ(Codes(Frames(first)), (std::vector<uint64_t>{0xf, 0x10, 0x11}));
  auto second = chains.Expand(Record(7, 8, 4, 2, {{0x13, 5}, {0x12, 4}}).Decoded());
  const auto whole = Frames(second);
  EXPECT_EQ(Codes(whole), (std::vector<uint64_t>{0x13, 0x12, 0x10, 0x11}));
  EXPECT_EQ(whole[2].instr, 2u);
  EXPECT_EQ(whole[3].instr, 3u);
  // Everything shared: the same stack again; then a shallower one.
  EXPECT_EQ(Codes(Frames(chains.Expand(Record(7, 8, 4, 4, {}).Decoded()))), (std::vector<uint64_t>{0x13, 0x12, 0x10, 0x11}));
  EXPECT_EQ(Codes(Frames(chains.Expand(Record(7, 8, 1, 1, {}).Decoded()))), (std::vector<uint64_t>{0x11}));
  EXPECT_EQ(chains.broken(), 0u);
  // 3 + 4 + 4 + 1 frames made whole, 2 + 4 + 1 of them from the stack before.
  EXPECT_EQ(chains.frame_counts().frames, 12u);
  EXPECT_EQ(chains.frame_counts().shared, 7u);
}

TEST(PyStackChains, ThreadsKeepTheirOwnChains) {
  PyStackChains chains;
  chains.Expand(Record(7, 8, 2, 0, {{0xa, 0}, {0xb, 0}}).Decoded());
  chains.Expand(Record(7, 9, 2, 0, {{0xc, 0}, {0xd, 0}}).Decoded());
  chains.Expand(Record(6, 8, 2, 0, {{0xe, 0}, {0xf, 0}}).Decoded());  // same tid, other pid
  EXPECT_EQ(Codes(Frames(chains.Expand(Record(7, 8, 2, 1, {{0x1, 0}}).Decoded()))), (std::vector<uint64_t>{0x1, 0xb}));
  EXPECT_EQ(Codes(Frames(chains.Expand(Record(7, 9, 2, 1, {{0x2, 0}}).Decoded()))), (std::vector<uint64_t>{0x2, 0xd}));
  EXPECT_EQ(Codes(Frames(chains.Expand(Record(6, 8, 2, 1, {{0x3, 0}}).Decoded()))), (std::vector<uint64_t>{0x3, 0xf}));
}

// The stack a record shares frames with was lost (or the capture began after it): no frames
// until the thread writes a stack whole, as BPF does after a lost one; never the frames of
// an older stack.
TEST(PyStackChains, AStackAfterALostOneHasNoFramesUntilOneIsWhole) {
  PyStackChains chains;
  EXPECT_EQ(chains.Expand(Record(7, 8, 3, 1, {{0x1, 0}, {0x2, 0}}).Decoded()).frames, 0u);
  chains.Expand(Record(7, 8, 2, 0, {{0xa, 0}, {0xb, 0}}).Decoded());
  // Says it shares three; the last stack the chain holds had two.
  EXPECT_EQ(chains.Expand(Record(7, 8, 4, 3, {{0x1, 0}}).Decoded()).frames, 0u);
  // Shares one with the stack above, which could not be made whole: still none.
  EXPECT_EQ(chains.Expand(Record(7, 8, 2, 1, {{0x1, 0}}).Decoded()).frames, 0u);
  EXPECT_EQ(chains.broken(), 3u);
  EXPECT_EQ(Codes(Frames(chains.Expand(Record(7, 8, 1, 0, {{0x5, 0}}).Decoded()))), (std::vector<uint64_t>{0x5}));
  // Only the stacks made whole count.
  EXPECT_EQ(chains.frame_counts().frames, 3u);
  EXPECT_EQ(chains.frame_counts().shared, 0u);
}

TEST(PyStackChains, ARecordSharingMoreThanItsFramesIsMalformed) {
  xt_py_stack rec{};
  rec.hdr.type = XT_REC_PY_STACK;
  rec.hdr.size = sizeof(rec);
  rec.frames = 1;
  rec.shared = 2;
  std::vector<std::byte> bytes(sizeof(rec));
  std::memcpy(bytes.data(), &rec, sizeof(rec));
  EXPECT_FALSE(DecodeRecord(bytes).ok());
}

// An exited process's chains go, every thread's, and no other process's; a process that
// reuses the pid starts without them (its first stack is whole, as BPF's new task storage
// makes it, and a record claiming shared frames gets none).
TEST(PyStackChains, AnExitedProcessesChainsAreForgotten) {
  PyStackChains chains;
  chains.Expand(Record(7, 7, 2, 0, {{0xa, 0}, {0xb, 0}}).Decoded());
  chains.Expand(Record(7, 9, 2, 0, {{0xc, 0}, {0xd, 0}}).Decoded());
  chains.Expand(Record(6, 7, 2, 0, {{0xe, 0}, {0xf, 0}}).Decoded());
  ASSERT_EQ(chains.threads(), 3u);
  chains.ForgetProcess(7);
  EXPECT_EQ(chains.threads(), 1u);
  EXPECT_EQ(chains.Expand(Record(7, 7, 2, 1, {{0x1, 0}}).Decoded()).frames, 0u);
  EXPECT_EQ(Codes(Frames(chains.Expand(Record(6, 7, 2, 1, {{0x3, 0}}).Decoded()))),
            (std::vector<uint64_t>{0x3, 0xf}));
}

}  // namespace
}  // namespace xtrace
