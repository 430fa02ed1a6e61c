// Tests for the layouts of CPython: the tables pass the checks BPF depends on, and the
// interpreter's own debug offsets (3.13) give the layout, as Debian trixie's python3.13 3.13.5
// lays them out (the words below are its _PyRuntime's first 584 bytes after the cookie, as its
// binary holds them), and are refused when they are of another version or build or do not hold
// together.
#include "python/cpython_layout.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace xtrace {
namespace {

constexpr uint64_t kPython3135 = 0x30d05f0;

// Debian trixie's python3.13 (3.13.5-2): _Py_DebugOffsets after the cookie.
constexpr uint64_t kTrixieDebugOffsets[] = {
    0x30d05f0, 0x0, 0x452f0, 0x260, 0x278, 0x2f9a0, 0x1c68, 0x1c60,
    0x1cb0, 0x1ce8, 0x1de8, 0x1dd8, 0x1de0, 0x10, 0x1e48, 0x0,
    0x1e58, 0x1e50, 0x130, 0x0, 0x8, 0x10, 0x48, 0x98,
    0xa0, 0xe8, 0x20, 0x50, 0x8, 0x0, 0x38, 0x48,
    0x46, 0xd0, 0x70, 0x78, 0x80, 0x88, 0x44, 0x34,
    0x60, 0x68, 0xc8, 0x10, 0x8, 0x1a0, 0x18, 0x58,
    0xa8, 0x20, 0x18, 0x10, 0x28, 0x18, 0x10, 0x30,
    0x20, 0x28, 0x18, 0x10, 0x20, 0x10, 0x18, 0x28,
    0x10, 0x20, 0x40, 0x20, 0x10, 0x28, 0xf0, 0xc8,
};

std::vector<uint8_t> TrixieBytes() {
  std::vector<uint8_t> bytes(kDebugOffsets313Size);
  std::memcpy(bytes.data(), kDebugOffsetsCookie, sizeof(kDebugOffsetsCookie));
  std::memcpy(bytes.data() + 8, kTrixieDebugOffsets, sizeof(kTrixieDebugOffsets));
  return bytes;
}

void SetWord(std::vector<uint8_t>& bytes, size_t at, uint64_t value) {
  std::memcpy(bytes.data() + at, &value, sizeof(value));
}

TEST(CPythonLayout, TablesPassTheChecks) {
  for (uint32_t minor : {11u, 12u}) {
    const CPythonLayout* l = CPythonLayoutFor(3, minor);
    ASSERT_NE(l, nullptr) << minor;
    EXPECT_TRUE(CheckCPythonLayout(*l).ok()) << minor << ": " << CheckCPythonLayout(*l).message();
  }
  // 3.13 on carry their own offsets; 3.10 has no frames xtrace reads.
  EXPECT_EQ(CPythonLayoutFor(3, 13), nullptr);
  EXPECT_EQ(CPythonLayoutFor(3, 10), nullptr);
  // 3.12 skips the interpreter's entry frames; 3.11 has none.
  EXPECT_EQ(CPythonLayoutFor(3, 11)->frame_owner, XT_PY_NO_OFFSET);
  EXPECT_EQ(CPythonLayoutFor(3, 12)->frame_owner, 70u);
  // Both give their data stack's chunk (BPF reads frames from its start).
  EXPECT_EQ(CPythonLayoutFor(3, 11)->tstate_datastack_chunk, 296u);
  EXPECT_EQ(CPythonLayoutFor(3, 12)->tstate_datastack_chunk, 232u);
  EXPECT_EQ(BpfLayout(*CPythonLayoutFor(3, 11), 0, 64, 1).tstate_chunk, 296u);
}

// BPF reads a thread state's first XT_PY_TSTATE_READ bytes and takes its thread id, frame
// pointer and data stack chunk there with aligned loads: a layout with any elsewhere is
// refused; one without a chunk is read page by page.
TEST(CPythonLayout, ThreadStateFieldsOutsideTheBytesBpfReadsAreRefused) {
  CPythonLayout far = *CPythonLayoutFor(3, 11);
  far.tstate_thread_id = XT_PY_TSTATE_READ;
  EXPECT_NE(CheckCPythonLayout(far).message().find("a thread state's fields"), std::string::npos);
  CPythonLayout unaligned = *CPythonLayoutFor(3, 11);
  unaligned.tstate_frame = 60;
  EXPECT_NE(CheckCPythonLayout(unaligned).message().find("a thread state's fields"),
            std::string::npos);
  CPythonLayout far_chunk = *CPythonLayoutFor(3, 11);
  far_chunk.tstate_datastack_chunk = XT_PY_TSTATE_READ - 4;
  EXPECT_NE(CheckCPythonLayout(far_chunk).message().find("a thread state's fields"),
            std::string::npos);
  CPythonLayout no_chunk = *CPythonLayoutFor(3, 11);
  no_chunk.tstate_datastack_chunk = XT_PY_NO_OFFSET;
  EXPECT_TRUE(CheckCPythonLayout(no_chunk).ok());
  EXPECT_EQ(BpfLayout(no_chunk, 0, 64, 1).tstate_chunk, XT_PY_NO_OFFSET);
}

TEST(CPythonLayout, FromTheDebugOffsetsOfPython313) {
  const std::vector<uint8_t> bytes = TrixieBytes();
  ASSERT_TRUE(HasDebugOffsets(bytes));
  auto got = CPythonLayoutFromDebugOffsets(bytes, kPython3135);
  ASSERT_TRUE(got.ok()) << got.status().message();
  const CPythonLayout& l = *got;
  EXPECT_EQ(l.major, 3u);
  EXPECT_EQ(l.minor, 13u);
  EXPECT_STREQ(l.source, "debug offsets");
  EXPECT_EQ(l.runtime_size, 0x452f0u);
  EXPECT_EQ(l.runtime_interp_head, 0x278u);
  EXPECT_EQ(l.runtime_interp_main, 0x280u);
  EXPECT_EQ(l.interp_id, 0x1c68u);
  EXPECT_EQ(l.interp_next, 0x1c60u);
  EXPECT_EQ(l.interp_threads_head, 0x1cb0u);
  EXPECT_EQ(l.interp_runtime, XT_PY_NO_OFFSET);
  EXPECT_EQ(l.tstate_next, 8u);
  EXPECT_EQ(l.tstate_interp, 0x10u);
  EXPECT_EQ(l.tstate_frame, 0x48u);
  EXPECT_EQ(l.cframe_frame, XT_PY_NO_OFFSET);  // current_frame is the frame itself
  EXPECT_EQ(l.tstate_thread_id, 0x98u);
  EXPECT_EQ(l.tstate_datastack_chunk, 0xe8u);
  EXPECT_EQ(l.frame_code, 0u);
  EXPECT_EQ(l.frame_previous, 8u);
  EXPECT_EQ(l.frame_instr, 0x38u);
  EXPECT_EQ(l.frame_owner, 0x46u);
  EXPECT_EQ(l.code_filename, 0x70u);
  EXPECT_EQ(l.code_name, 0x78u);
  EXPECT_EQ(l.code_qualname, 0x80u);
  EXPECT_EQ(l.code_linetable, 0x88u);
  EXPECT_EQ(l.code_firstlineno, 0x44u);
  EXPECT_EQ(l.code_adaptive, 0xc8u);
  EXPECT_EQ(l.code_header_size, 0xc8u);
  EXPECT_EQ(l.object_type, 8u);
  EXPECT_EQ(l.var_size, 0x10u);
  EXPECT_EQ(l.bytes_data, 0x20u);
  EXPECT_EQ(l.unicode_length, 0x10u);
  EXPECT_EQ(l.unicode_state, 0x20u);
  EXPECT_EQ(l.unicode_ascii_data, 0x28u);
  EXPECT_EQ(l.unicode_compact_data, 0x38u);

  const xt_py_layout b = BpfLayout(l, 0x1000, 30, 7);
  EXPECT_EQ(b.interp_ptr, 0x1000u + 0x280u);
  EXPECT_EQ(b.frame_owner, 0x46u);
  EXPECT_EQ(b.owner_cstack, 3u);
  EXPECT_EQ(b.max_frames, 30u);
  EXPECT_EQ(b.tstate_chunk, 0xe8u);
}

TEST(CPythonLayout, DebugOffsetsThatCannotBeUsedAreRefusedSayingWhy) {
  auto message = [](const std::vector<uint8_t>& bytes, uint64_t version) {
    auto got = CPythonLayoutFromDebugOffsets(bytes, version);
    EXPECT_FALSE(got.ok());
    return got.ok() ? std::string() : got.status().message();
  };
  std::vector<uint8_t> bytes = TrixieBytes();
  // Another version than the binary's Py_Version.
  EXPECT_NE(message(bytes, 0x30d04f0).find("another version"), std::string::npos);
  // A free-threaded build.
  std::vector<uint8_t> ft = bytes;
  SetWord(ft, 16, 1);
  EXPECT_NE(message(ft, kPython3135).find("free-threaded"), std::string::npos);
  // A later version: its table of offsets is laid out otherwise.
  std::vector<uint8_t> later = bytes;
  SetWord(later, 8, 0x30e00f0);
  EXPECT_NE(message(later, 0x30e00f0).find("CPython 3.14 (xtrace reads the frames of CPython 3.11 to 3.13)"),
            std::string::npos);
  // A field outside its structure: the thread's current_frame past sizeof(PyThreadState).
  std::vector<uint8_t> outside = bytes;
  SetWord(outside, 184, 0x130);
  EXPECT_NE(message(outside, kPython3135).find("do not hold together"), std::string::npos);
  // A frame whose instruction pointer lies past the bytes BPF reads of a frame.
  std::vector<uint8_t> far = bytes;
  SetWord(far, 248, 0x48);
  EXPECT_NE(message(far, kPython3135).find("not what xtrace can read"), std::string::npos);
  // No cookie; cut short.
  std::vector<uint8_t> none = bytes;
  none[0] = 'y';
  EXPECT_FALSE(HasDebugOffsets(none));
  EXPECT_FALSE(CPythonLayoutFromDebugOffsets(none, kPython3135).ok());
  bytes.resize(100);
  EXPECT_NE(message(bytes, kPython3135).find("cut short"), std::string::npos);
}

}  // namespace
}  // namespace xtrace
