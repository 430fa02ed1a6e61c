// Tests for decode/record_decoder: raw bytes in, typed records or errors out.
#include "decode/record_decoder.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

namespace xtrace {
namespace {

std::vector<std::byte> Bytes(const void* p, size_t n) {
  std::vector<std::byte> out(n);
  std::memcpy(out.data(), p, n);
  return out;
}

std::vector<std::byte> KernelCreateBytes(const std::string& name, uint32_t claimed_len) {
  xt_kernel_create rec{};
  rec.hdr.type = XT_REC_KERNEL_CREATE;
  rec.hdr.size = static_cast<uint16_t>(sizeof(rec) + name.size());
  rec.hdr.pid = 10;
  rec.hdr.tid = 11;
  rec.hdr.start_ns = 100;
  rec.hdr.end_ns = 250;
  rec.module = 0x1000;
  rec.kernel = 0x2000;
  rec.result = 0;
  rec.name_len = claimed_len;
  auto out = Bytes(&rec, sizeof(rec));
  for (char c : name) out.push_back(std::byte(c));
  return out;
}

TEST(RecordDecoder, DecodesKernelCreateWithName) {
  const std::string name = "void gemm<float, 4>(float const*, float*)";
  auto bytes = KernelCreateBytes(name, static_cast<uint32_t>(name.size()));
  auto r = DecodeRecord(bytes);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& kc = std::get<DecodedKernelCreate>(*r);
  EXPECT_EQ(kc.hdr.pid, 10u);
  EXPECT_EQ(kc.hdr.tid, 11u);
  EXPECT_EQ(kc.hdr.start_ns, 100u);
  EXPECT_EQ(kc.hdr.end_ns, 250u);
  EXPECT_EQ(kc.module, 0x1000u);
  EXPECT_EQ(kc.kernel, 0x2000u);
  EXPECT_EQ(kc.name, name);
}

TEST(RecordDecoder, DecodesLaunch) {
  xt_launch_kernel rec{};
  rec.hdr.type = XT_REC_LAUNCH_KERNEL;
  rec.hdr.size = sizeof(rec);
  rec.hdr.pid = 5;
  rec.hdr.tid = 6;
  rec.command_list = 0xaa;
  rec.kernel = 0xbb;
  rec.signal_event = 0xcc;
  rec.group_count[0] = 64;
  rec.group_count[1] = 2;
  rec.group_count[2] = 1;
  rec.num_wait_events = 3;
  rec.result = 0x78000004;
  auto bytes = Bytes(&rec, sizeof(rec));
  auto r = DecodeRecord(bytes);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& l = std::get<DecodedLaunchKernel>(*r);
  EXPECT_EQ(l.command_list, 0xaau);
  EXPECT_EQ(l.kernel, 0xbbu);
  EXPECT_EQ(l.signal_event, 0xccu);
  EXPECT_EQ(l.group_count[0], 64u);
  EXPECT_EQ(l.group_count[1], 2u);
  EXPECT_EQ(l.group_count[2], 1u);
  EXPECT_EQ(l.num_wait_events, 3u);
  EXPECT_EQ(l.result, 0x78000004);
  EXPECT_EQ(HeaderOf(*r).tid, 6u);
}

TEST(RecordDecoder, DecodesThreadNameWithFullAndShortComms) {
  xt_thread_name rec{};
  rec.hdr.type = XT_REC_THREAD_NAME;
  rec.hdr.size = sizeof(rec);
  rec.hdr.tid = 77;
  std::memcpy(rec.comm, "0123456789abcdef", XT_COMM_LEN);  // fills the field: no NUL
  std::memcpy(rec.process_comm, "python3", 8);
  auto bytes = Bytes(&rec, sizeof(rec));
  auto r = DecodeRecord(bytes);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& t = std::get<DecodedThreadName>(*r);
  EXPECT_EQ(t.hdr.tid, 77u);
  EXPECT_EQ(t.comm, "0123456789abcdef");
  EXPECT_EQ(t.process_comm, "python3");

  bytes.resize(sizeof(xt_record_header) + 8);
  rec.hdr.size = static_cast<uint16_t>(bytes.size());
  std::memcpy(bytes.data(), &rec.hdr, sizeof(rec.hdr));
  auto short_rec = DecodeRecord(bytes);
  ASSERT_FALSE(short_rec.ok());
  EXPECT_NE(short_rec.status().message().find("thread-name record too short"), std::string::npos);
}

TEST(RecordDecoder, RejectsShorterThanHeader) {
  std::vector<std::byte> bytes(sizeof(xt_record_header) - 1);
  auto r = DecodeRecord(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("too short"), std::string::npos) << r.status().message();
}

TEST(RecordDecoder, RejectsSizeFieldLargerThanDelivered) {
  auto bytes = KernelCreateBytes("abc", 3);
  bytes.resize(bytes.size() - 2);  // the header still claims the full size
  auto r = DecodeRecord(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("were delivered"), std::string::npos) << r.status().message();
}

TEST(RecordDecoder, RejectsNameLongerThanRecord) {
  auto bytes = KernelCreateBytes("abc", 400);
  auto r = DecodeRecord(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("name length 400"), std::string::npos) << r.status().message();
}

TEST(RecordDecoder, RejectsLaunchCutShort) {
  xt_launch_kernel rec{};
  rec.hdr.type = XT_REC_LAUNCH_KERNEL;
  rec.hdr.size = sizeof(xt_record_header) + 4;  // claims less than the fixed part
  auto bytes = Bytes(&rec, sizeof(rec));
  auto r = DecodeRecord(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("launch-kernel record too short"), std::string::npos)
      << r.status().message();
}

TEST(RecordDecoder, RejectsUnknownType) {
  xt_record_header hdr{};
  hdr.type = 999;
  hdr.size = sizeof(hdr);
  auto bytes = Bytes(&hdr, sizeof(hdr));
  auto r = DecodeRecord(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unknown record type 999"), std::string::npos);
}

TEST(RecordDecoder, IgnoresTrailingPaddingBeyondSize) {
  // The ring buffer may hand over a few bytes more than the record (alignment).
  auto bytes = KernelCreateBytes("k", 1);
  bytes.resize(bytes.size() + 7, std::byte{0x55});
  auto r = DecodeRecord(bytes);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(std::get<DecodedKernelCreate>(*r).name, "k");
}

}  // namespace
}  // namespace xtrace

namespace xtrace {
namespace {

// A DRM ioctl record with `in` and `out` argument bytes; `claimed_in` overrides in_len.
std::vector<std::byte> DrmIoctlBytes(const std::string& in, const std::string& out,
                                     int claimed_in = -1) {
  xt_drm_ioctl rec{};
  rec.hdr.type = XT_REC_DRM_IOCTL;
  rec.hdr.size = static_cast<uint16_t>(sizeof(rec) + in.size() + out.size());
  rec.hdr.flags = XT_FLAG_ARG_UNREADABLE;
  rec.hdr.pid = 10;
  rec.hdr.tid = 12;
  rec.hdr.start_ns = 1000;
  rec.hdr.end_ns = 1500;
  rec.ret = -25;
  rec.arg = 0x7ffd'0000'1000;
  rec.fd = 5;
  rec.cmd = 0xC010645B;
  rec.rdev = (226u << 20) | 128;
  rec.mode = 0x21b6;
  rec.in_len = static_cast<uint16_t>(claimed_in < 0 ? in.size() : claimed_in);
  rec.out_len = static_cast<uint16_t>(out.size());
  auto bytes = Bytes(&rec, sizeof(rec));
  for (char c : in + out) bytes.push_back(std::byte(c));
  return bytes;
}

TEST(RecordDecoder, DecodesDrmIoctlWithArgumentBytes) {
  const std::string in = "0123456789abcdef", out = "ABCDEFGHIJKLMNOP";
  const auto bytes = DrmIoctlBytes(in, out);
  auto r = DecodeRecord(bytes);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& d = std::get<DecodedDrmIoctl>(*r);
  EXPECT_EQ(d.hdr.flags, XT_FLAG_ARG_UNREADABLE);
  EXPECT_EQ(d.result, -25);
  EXPECT_EQ(d.arg, 0x7ffd'0000'1000u);
  EXPECT_EQ(d.fd, 5u);
  EXPECT_EQ(d.cmd, 0xC010645Bu);
  EXPECT_EQ(XT_KDEV_MAJOR(d.rdev), 226u);
  EXPECT_EQ(XT_KDEV_MINOR(d.rdev), 128u);
  EXPECT_EQ(d.mode, 0x21b6);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(d.in.data()), d.in.size()), in);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(d.out.data()), d.out.size()), out);
}

TEST(RecordDecoder, RejectsDrmIoctlWhoseArgumentBytesDoNotFit) {
  const auto bytes = DrmIoctlBytes("0123", "", 200);
  auto r = DecodeRecord(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("drm-ioctl record: argument bytes (200 in, 0 out)"),
            std::string::npos)
      << r.status().message();
  auto cut = DrmIoctlBytes("", "");
  cut.resize(sizeof(xt_drm_ioctl) - 4);
  reinterpret_cast<xt_record_header*>(cut.data())->size = static_cast<uint16_t>(cut.size());
  EXPECT_FALSE(DecodeRecord(cut).ok());
}

TEST(RecordDecoder, DecodesDrmFence) {
  xt_drm_fence rec{};
  rec.hdr.type = XT_REC_DRM_FENCE;
  rec.hdr.size = sizeof(rec);
  rec.hdr.pid = 10;
  rec.hdr.tid = 12;
  rec.hdr.start_ns = 2000;
  rec.hdr.end_ns = 9000;
  rec.ioctl_start_ns = 1900;
  rec.context = 44;
  rec.seqno = 7;
  rec.source = XT_FENCE_SRC_DMA_FENCE;
  const auto bytes = Bytes(&rec, sizeof(rec));
  auto r = DecodeRecord(bytes);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& f = std::get<DecodedDrmFence>(*r);
  EXPECT_EQ(f.ioctl_start_ns, 1900u);
  EXPECT_EQ(f.context, 44u);
  EXPECT_EQ(f.seqno, 7u);
  EXPECT_EQ(f.source, static_cast<uint32_t>(XT_FENCE_SRC_DMA_FENCE));
  EXPECT_EQ(f.hdr.end_ns, 9000u);
}

TEST(RecordDecoder, DecodesZeCall) {
  xt_ze_call rec{};
  rec.hdr.type = XT_REC_ZE_CALL;
  rec.hdr.size = sizeof(rec);
  rec.hdr.tid = 12;
  rec.fn = XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP;
  rec.result = 1;
  rec.arg[0] = 0xe0;
  rec.arg[7] = 77;
  rec.data[0] = 100;
  rec.data[7] = 200;
  auto r = DecodeRecord(Bytes(&rec, sizeof(rec)));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& c = std::get<DecodedZeCall>(*r);
  EXPECT_EQ(c.hdr.tid, 12u);
  EXPECT_EQ(c.fn, XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP);
  EXPECT_EQ(c.result, 1);
  EXPECT_EQ(c.arg[0], 0xe0u);
  EXPECT_EQ(c.arg[7], 77u);
  EXPECT_EQ(c.data[0], 100u);
  EXPECT_EQ(c.data[7], 200u);
}

TEST(RecordDecoder, RejectsZeCallCutShortOrOfUnknownFunction) {
  xt_ze_call rec{};
  rec.hdr.type = XT_REC_ZE_CALL;
  rec.hdr.size = sizeof(rec) - 8;
  rec.fn = XT_ZE_INIT;
  auto short_rec = DecodeRecord(Bytes(&rec, sizeof(rec) - 8));
  ASSERT_FALSE(short_rec.ok());
  EXPECT_NE(short_rec.status().message().find("too short"), std::string::npos);
  rec.hdr.size = sizeof(rec);
  rec.fn = XT_ZE_FN_COUNT;
  auto unknown = DecodeRecord(Bytes(&rec, sizeof(rec)));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown function"), std::string::npos);
}

// The record of thread 12 of pid 10 that exited inside call `fn`, entered at 100 ns, at 900.
xt_call_unfinished UnfinishedCall(uint32_t fn) {
  xt_call_unfinished rec{};
  rec.hdr.type = XT_REC_CALL_UNFINISHED;
  rec.hdr.size = sizeof(rec);
  rec.hdr.pid = 10;
  rec.hdr.tid = 12;
  rec.hdr.start_ns = 100;
  rec.hdr.end_ns = 900;
  rec.fn = fn;
  return rec;
}

TEST(RecordDecoder, DecodesAnUnfinishedCallAndRejectsWhatCannotBeOne) {
  xt_call_unfinished rec = UnfinishedCall(XT_ZE_PAIR_APPEND_LAUNCH_KERNEL);
  rec.exit_code = 9;
  auto r = DecodeRecord(Bytes(&rec, sizeof(rec)));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& u = std::get<DecodedCallUnfinished>(*r);
  EXPECT_EQ(u.hdr.tid, 12u);
  EXPECT_EQ(u.hdr.end_ns, 900u);
  EXPECT_EQ(u.fn, uint32_t{XT_ZE_PAIR_APPEND_LAUNCH_KERNEL});
  EXPECT_EQ(u.exit_code, 9);

  rec.fn = XT_ZE_FN_COUNT;  // neither a generic call nor a dedicated one
  auto unknown = DecodeRecord(Bytes(&rec, sizeof(rec)));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown function id"), std::string::npos);
  rec.fn = XT_ZE_EVENT_HOST_SYNCHRONIZE;
  rec.hdr.end_ns = 50;  // before its entry
  EXPECT_FALSE(DecodeRecord(Bytes(&rec, sizeof(rec))).ok());
  rec.hdr.end_ns = 900;
  rec.hdr.size = sizeof(rec) - 4;
  auto cut = DecodeRecord(Bytes(&rec, sizeof(rec) - 4));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("too short"), std::string::npos);
}

TEST(RecordDecoder, APendingCallIsDecodedAsTheRecordOfAThreadThatExitedInIt) {
  xt_call_slot slot{};
  slot.start_ns = 100;
  slot.fn = XT_ZE_EVENT_HOST_SYNCHRONIZE;
  auto pending = DecodePendingCall(slot, 10, 12, 900);
  ASSERT_TRUE(pending.ok()) << pending.status().message();
  ASSERT_TRUE(pending->has_value());
  const DecodedCallUnfinished& u = **pending;
  EXPECT_EQ(u.hdr.type, uint16_t{XT_REC_CALL_UNFINISHED});
  EXPECT_EQ(u.hdr.pid, 10u);
  EXPECT_EQ(u.hdr.tid, 12u);
  EXPECT_EQ(u.hdr.start_ns, 100u);
  EXPECT_EQ(u.hdr.end_ns, 900u);
  EXPECT_EQ(u.fn, uint32_t{XT_ZE_EVENT_HOST_SYNCHRONIZE});
  EXPECT_TRUE(u.capture_ended);

  // Nothing to show: no call, one entered while paused, one entered after the stop.
  xt_call_slot none{};
  EXPECT_FALSE(DecodePendingCall(none, 10, 12, 900)->has_value());
  xt_call_slot paused = slot;
  paused.flags = XT_FLAG_PAUSED;
  EXPECT_FALSE(DecodePendingCall(paused, 10, 12, 900)->has_value());
  EXPECT_FALSE(DecodePendingCall(slot, 10, 12, 50)->has_value());
}

TEST(RecordDecoder, ABadFunctionIdIsRefusedTheSameWayFromTheRingAndFromAThreadsState) {
  const xt_call_unfinished rec = UnfinishedCall(XT_ZE_FN_COUNT + 7);
  auto from_ring = DecodeRecord(Bytes(&rec, sizeof(rec)));
  ASSERT_FALSE(from_ring.ok());

  xt_call_slot slot{};
  slot.start_ns = 100;
  slot.fn = XT_ZE_FN_COUNT + 7;
  auto from_state = DecodePendingCall(slot, 10, 12, 900);
  ASSERT_FALSE(from_state.ok());
  const std::string ring_says = from_ring.status().message();
  const std::string state_says = from_state.status().message();
  EXPECT_NE(ring_says.find("unknown function id " + std::to_string(XT_ZE_FN_COUNT + 7)),
            std::string::npos) << ring_says;
  // The same refusal, with the thread it was read from.
  EXPECT_EQ(state_says, "pending call of thread 12: " + ring_says);
}

std::vector<std::byte> ExecuteBytes(uint32_t num_lists, uint32_t copied, uint32_t flags = 0) {
  xt_ze_execute rec{};
  rec.hdr.type = XT_REC_ZE_EXECUTE;
  rec.hdr.size = static_cast<uint16_t>(sizeof(rec) + copied * 8);
  rec.hdr.flags = flags;
  rec.queue = 0x9;
  rec.fence = 0xf;
  rec.num_lists = num_lists;
  auto out = Bytes(&rec, sizeof(rec));
  for (uint64_t i = 0; i < copied; ++i) {
    const uint64_t h = 0x1000 + i;
    auto b = Bytes(&h, 8);
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

TEST(RecordDecoder, DecodesExecuteWithItsLists) {
  auto bytes = ExecuteBytes(3, 3);
  // Offset by one byte: records from salvage paths need not be aligned.
  bytes.insert(bytes.begin(), std::byte{0});
  auto r = DecodeRecord(std::span<const std::byte>(bytes).subspan(1));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& e = std::get<DecodedZeExecute>(*r);
  EXPECT_EQ(e.queue, 0x9u);
  EXPECT_EQ(e.fence, 0xfu);
  EXPECT_EQ(e.num_lists, 3u);
  ASSERT_EQ(e.lists_copied, 3u);
  EXPECT_EQ(e.list(0), 0x1000u);
  EXPECT_EQ(e.list(2), 0x1002u);
}

TEST(RecordDecoder, ExecuteListsMustMatchTheCount) {
  EXPECT_TRUE(DecodeRecord(ExecuteBytes(100, XT_MAX_EXEC_LISTS, XT_FLAG_TRUNCATED)).ok());
  EXPECT_TRUE(DecodeRecord(ExecuteBytes(2, 0, XT_FLAG_ARG_UNREADABLE)).ok());
  auto missing = DecodeRecord(ExecuteBytes(3, 2));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("do not hold the 3"), std::string::npos)
      << missing.status().message();
}

}  // namespace
}  // namespace xtrace

namespace xtrace {
namespace {

// A call's Python frames (`frames` of them) and, after them in the same ring sample, the
// call's own record, as BPF writes them in one ring write.
std::vector<std::byte> FramesThenLaunch(uint32_t frames) {
  xt_py_stack stack{};
  stack.hdr.type = XT_REC_PY_STACK;
  stack.hdr.size = static_cast<uint16_t>(sizeof(stack) + frames * sizeof(xt_py_frame));
  stack.hdr.tid = 6;
  stack.frames = frames;
  auto bytes = Bytes(&stack, sizeof(stack));
  for (uint32_t i = 0; i < frames; ++i) {
    const xt_py_frame f{0x1000 + i, 0x2000 + i};
    auto b = Bytes(&f, sizeof(f));
    bytes.insert(bytes.end(), b.begin(), b.end());
  }
  xt_launch_kernel launch{};
  launch.hdr.type = XT_REC_LAUNCH_KERNEL;
  launch.hdr.size = sizeof(launch);
  launch.hdr.tid = 6;
  launch.kernel = 0xbb;
  auto b = Bytes(&launch, sizeof(launch));
  bytes.insert(bytes.end(), b.begin(), b.end());
  return bytes;
}

TEST(RingSample, FramesAndTheirCallInOneSampleAreTwoRecords) {
  const auto bytes = FramesThenLaunch(3);
  std::span<const std::byte> sample(bytes);
  const auto first = NextRecordOfSample(sample);
  ASSERT_EQ(first.size(), sizeof(xt_py_stack) + 3 * sizeof(xt_py_frame));
  auto stack = DecodeRecord(first);
  ASSERT_TRUE(stack.ok()) << stack.status().message();
  const auto& s = std::get<DecodedPyStack>(*stack);
  ASSERT_EQ(s.frames, 3u);
  EXPECT_EQ(s.frame(2).code, 0x1002u);
  EXPECT_EQ(s.frame(2).instr, 0x2002u);
  const auto second = NextRecordOfSample(sample);
  EXPECT_TRUE(sample.empty());
  auto launch = DecodeRecord(second);
  ASSERT_TRUE(launch.ok()) << launch.status().message();
  EXPECT_EQ(std::get<DecodedLaunchKernel>(*launch).kernel, 0xbbu);
  // No frames at all (a thread in Python code at its outermost level has one at least, but
  // the record allows none).
  const auto bare = FramesThenLaunch(0);
  sample = bare;
  EXPECT_EQ(NextRecordOfSample(sample).size(), sizeof(xt_py_stack));
  EXPECT_EQ(sample.size(), sizeof(xt_launch_kernel));
}

TEST(RingSample, AnyOtherSampleIsOneRecord) {
  // Frames alone, a launch alone, a record with padding after it: each one record, whole.
  auto frames = FramesThenLaunch(2);
  frames.resize(sizeof(xt_py_stack) + 2 * sizeof(xt_py_frame));
  auto launch = FramesThenLaunch(0);
  launch.erase(launch.begin(), launch.begin() + sizeof(xt_py_stack));
  auto padded = KernelCreateBytes("k", 1);
  padded.resize(padded.size() + 64, std::byte{0x55});
  for (const auto* bytes : {&frames, &launch, &padded}) {
    std::span<const std::byte> sample(*bytes);
    EXPECT_EQ(NextRecordOfSample(sample).size(), bytes->size());
    EXPECT_TRUE(sample.empty());
  }
  // Frames whose size is not a whole number of frames' worth of 8 bytes, or that claim more
  // than the sample: one record, left to DecodeRecord's checks.
  auto set_size = [](std::vector<std::byte>& bytes, size_t size) {
    const auto value = static_cast<uint16_t>(size);
    std::memcpy(bytes.data() + offsetof(xt_record_header, size), &value, sizeof(value));
  };
  auto odd = FramesThenLaunch(1);
  set_size(odd, sizeof(xt_py_stack) + 4);
  auto over = FramesThenLaunch(1);
  set_size(over, over.size());
  for (const auto* bytes : {&odd, &over}) {
    std::span<const std::byte> sample(*bytes);
    EXPECT_EQ(NextRecordOfSample(sample).size(), bytes->size());
  }
}

}  // namespace
}  // namespace xtrace
