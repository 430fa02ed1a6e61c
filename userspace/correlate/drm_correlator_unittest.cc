// Tests for correlate/drm_correlator (through the Correlator that owns it): attributing ioctls
// to the host API call containing them, holding and releasing, fd identity, device counts.
#include "correlate/drm_correlator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "collecting_sink.h"
#include "correlate/correlator.h"
#include "correlate/host_api_calls.h"

namespace xtrace {
namespace {

constexpr uint32_t kPid = 700;
constexpr uint16_t kCharDevice = 0x21b6;  // S_IFCHR | 0666

class FakeInspector : public ProcessInspector {
 public:
  std::optional<ProcessDetails> Process(uint32_t pid) override {
    return ProcessDetails{"app", "app", pid, "", ""};
  }
  FdDevice Fd(uint32_t, uint32_t fd, const FdFileAtCall& at_call) override {
    ++lookups;
    if (at_call.mode == 0) return FdDevice{};  // neither the probe nor /proc saw a file
    if (at_call.major == 226)
      return FdDevice{DrmNodeKind::kRender, "/dev/dri/renderD" + std::to_string(at_call.minor), 226,
                      at_call.minor, fd == 9 ? "xe" : "i915"};
    return FdDevice{DrmNodeKind::kNotDrm, "/dev/null", 1, 3, ""};
  }
  int lookups = 0;
};

xt_record_header Header(uint16_t type, uint32_t tid, uint64_t start, uint64_t end) {
  xt_record_header h{};
  h.type = type;
  h.pid = kPid;
  h.tid = tid;
  h.start_ns = start;
  h.end_ns = end;
  return h;
}

// An xe EXEC ioctl (a submission) on `fd` of the render node 226:128.
struct Ioctl {
  std::vector<std::byte> in = std::vector<std::byte>(56);
  DecodedDrmIoctl Make(uint32_t tid, uint64_t start, uint64_t end, uint32_t fd = 9,
                       uint32_t minor = 128) const {
    return DecodedDrmIoctl{Header(XT_REC_DRM_IOCTL, tid, start, end),
                           0,
                           0x7000,
                           fd,
                           0x40386449,
                           (226u << 20) | minor,
                           kCharDevice,
                           in,
                           {}};
  }
};

DecodedRecord Launch(uint32_t tid, uint64_t start, uint64_t end) {
  return DecodedLaunchKernel{
      Header(XT_REC_LAUNCH_KERNEL, tid, start, end), 0x1, 0x2, 0, {1, 1, 1}, 0, 0, XT_LAUNCH_PLAIN};
}

class DrmCorrelatorTest : public ::testing::Test {
 protected:
  std::string Str(StringId id) const { return std::string(strings.Get(id)); }

  StringTable strings;
  CollectingSink sink;
  FakeInspector inspector;
  Correlator correlator{strings, sink, inspector};
  Ioctl ioctl;
};

TEST_F(DrmCorrelatorTest, AnIoctlInsideACallOnItsThreadIsAttributedToIt) {
  correlator.OnRecord(ioctl.Make(11, 1'000'100, 1'000'200));  // inside the launch below
  correlator.OnRecord(ioctl.Make(12, 1'000'150, 1'000'160));  // another thread
  correlator.OnRecord(ioctl.Make(11, 1'000'250, 1'000'260));  // inside, later
  EXPECT_TRUE(sink.All<DrmIoctl>().empty()) << "held until the call that may contain them";
  correlator.OnRecord(Launch(11, 1'000'000, 1'000'300));
  auto ioctls = sink.All<DrmIoctl>();
  ASSERT_EQ(ioctls.size(), 2u);
  for (const auto& d : ioctls) {
    EXPECT_EQ(d.tid, 11u);
    EXPECT_EQ(Str(d.cause), "zeCommandListAppendLaunchKernel");
    EXPECT_EQ(d.cause_start_ns, 1'000'000u);
    EXPECT_EQ(Str(d.name), "DRM_IOCTL_XE_EXEC");
  }
  correlator.Finish(2'000'000);  // thread 12 had no call
  ioctls = sink.All<DrmIoctl>();
  ASSERT_EQ(ioctls.size(), 3u);
  EXPECT_EQ(ioctls[2].tid, 12u);
  EXPECT_EQ(ioctls[2].cause, kEmptyString);
  EXPECT_EQ(ioctls[2].cause_start_ns, 0u);
}

TEST_F(DrmCorrelatorTest, AnIoctlBeforeTheCallIsNotAttributedToIt) {
  correlator.OnRecord(ioctl.Make(11, 500, 600));
  correlator.OnRecord(Launch(11, 1'000, 2'000));
  const auto ioctls = sink.All<DrmIoctl>();
  ASSERT_EQ(ioctls.size(), 1u);
  EXPECT_EQ(ioctls[0].cause, kEmptyString);
}

TEST_F(DrmCorrelatorTest, AnyLevelZeroRecordTypeIsAHostCallOthersAreNot) {
  // Types 16-63 are reserved for Level Zero calls; a type there links generically.
  correlator.OnRecord(ioctl.Make(11, 1'100, 1'200));
  DecodedRecord thread_name =
      DecodedThreadName{Header(XT_REC_THREAD_NAME, 11, 1'000, 2'000), "t", "p"};
  correlator.OnRecord(thread_name);
  EXPECT_TRUE(sink.All<DrmIoctl>().empty());
  EXPECT_TRUE(IsHostApiCall(17));
  EXPECT_TRUE(IsHostApiCall(XT_REC_LAUNCH_KERNEL));
  EXPECT_FALSE(IsHostApiCall(XT_REC_THREAD_NAME));
  EXPECT_FALSE(IsHostApiCall(XT_REC_DRM_IOCTL));
  EXPECT_FALSE(IsHostApiCall(64));  // ITT
  EXPECT_EQ(HostApiCallName(17), "Level Zero call");
  correlator.drm().OnHostCall(Header(17, 11, 1'000, 2'000), HostApiCallName(17));
  const auto ioctls = sink.All<DrmIoctl>();
  ASSERT_EQ(ioctls.size(), 1u);
  EXPECT_EQ(Str(ioctls[0].cause), "Level Zero call");
}

TEST_F(DrmCorrelatorTest, HeldIoctlsGoOutUnattributedOnceRecordTimeMovesOn) {
  correlator.OnRecord(ioctl.Make(11, 1'000, 2'000));
  // Other records advance record time; nothing within the hold window releases it...
  correlator.OnRecord(Launch(12, 3'000, DrmCorrelator::kHoldNs / 2));
  EXPECT_TRUE(sink.All<DrmIoctl>().empty());
  // ...beyond it, it goes.
  correlator.OnRecord(Launch(12, 3'000, 2'000 + DrmCorrelator::kHoldNs + 1));
  const auto ioctls = sink.All<DrmIoctl>();
  ASSERT_EQ(ioctls.size(), 1u);
  EXPECT_EQ(ioctls[0].cause, kEmptyString);
}

TEST_F(DrmCorrelatorTest, WithoutHostCallSourcesIoctlsGoOutAtOnce) {
  correlator.drm().set_link_host_calls(false);
  correlator.OnRecord(ioctl.Make(11, 1'000, 2'000));
  EXPECT_EQ(sink.All<DrmIoctl>().size(), 1u);
}

TEST_F(DrmCorrelatorTest, AThreadHoldsABoundedNumberOfIoctls) {
  for (size_t i = 0; i < DrmCorrelator::kMaxHeldPerThread + 5; ++i)
    correlator.OnRecord(ioctl.Make(11, 1'000 + i * 10, 1'005 + i * 10));
  EXPECT_EQ(sink.All<DrmIoctl>().size(), 5u);
}

TEST_F(DrmCorrelatorTest, EachFileIsLookedUpOnceAndAnnouncedFirst) {
  correlator.drm().set_link_host_calls(false);
  correlator.OnRecord(ioctl.Make(11, 100, 200));
  correlator.OnRecord(ioctl.Make(12, 300, 400));
  EXPECT_EQ(inspector.lookups, 1);
  // The same fd number on another device (closed and reopened) is a new file.
  correlator.OnRecord(ioctl.Make(11, 500, 600, 9, 129));
  EXPECT_EQ(inspector.lookups, 2);
  const auto files = sink.All<DrmFile>();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(Str(files[0].path), "/dev/dri/renderD128");
  EXPECT_EQ(Str(files[0].driver), "xe");
  EXPECT_EQ(files[0].kind, DrmNodeKind::kRender);
  EXPECT_EQ(Str(files[1].path), "/dev/dri/renderD129");
  // Announced before the first ioctl on it.
  EXPECT_TRUE(std::holds_alternative<DrmFile>(sink.events[1]));  // after the ProcessInfo
  EXPECT_TRUE(std::holds_alternative<DrmIoctl>(sink.events[2]));
}

TEST_F(DrmCorrelatorTest, PerDeviceCountsOfSubmissionsBytesAndWaits) {
  // xe on fd 9: two submissions, one inside a launch; a successful 2 MiB create; a wait.
  correlator.OnRecord(ioctl.Make(11, 1'100, 1'200));
  correlator.OnRecord(Launch(11, 1'000, 1'300));
  correlator.OnRecord(ioctl.Make(11, 2'000, 2'100));
  std::vector<std::byte> create(56);
  const uint64_t size = 2 << 20;
  std::memcpy(create.data() + 8, &size, sizeof size);
  correlator.OnRecord(DecodedDrmIoctl{Header(XT_REC_DRM_IOCTL, 11, 3'000, 3'100), 0, 0x7000, 9,
                                      0xC0386441, (226u << 20) | 128, kCharDevice, create, create});
  correlator.OnRecord(DecodedDrmIoctl{Header(XT_REC_DRM_IOCTL, 11, 4'000, 4'100),
                                      -62,
                                      0x7000,
                                      9,
                                      0xC048644A,
                                      (226u << 20) | 128,
                                      kCharDevice,
                                      std::vector<std::byte>(72),
                                      {}});
  // i915 on fd 4 of another node: one failed create, which creates nothing.
  correlator.OnRecord(DecodedDrmIoctl{Header(XT_REC_DRM_IOCTL, 11, 5'000, 5'100),
                                      -12,
                                      0x7000,
                                      4,
                                      0xC010645B,
                                      (226u << 20) | 129,
                                      kCharDevice,
                                      create,
                                      {}});
  correlator.Finish(10'000);
  const auto& stats = correlator.drm().device_stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].device, "/dev/dri/renderD128 (xe)");
  EXPECT_EQ(stats[0].ioctls, 4u);
  EXPECT_EQ(stats[0].submissions, 2u);
  EXPECT_EQ(stats[0].linked_submissions, 1u);
  EXPECT_EQ(stats[0].bytes_created, size);
  EXPECT_EQ(stats[0].waits, 1u);
  EXPECT_EQ(stats[1].device, "/dev/dri/renderD129 (i915)");
  EXPECT_EQ(stats[1].bytes_created, 0u);
  EXPECT_EQ(correlator.drm().ioctls(), 5u);
}

// Calls on an fd that no probe nor /proc could look at: one that was never open (the calls
// failed with EBADF) is not taken for a file that went away.
TEST_F(DrmCorrelatorTest, AnFdNeverOpenIsToldFromAFileGoneBeforeItWasSeen) {
  auto unseen = [&](uint32_t fd, int64_t result) {
    DecodedDrmIoctl r = ioctl.Make(11, 1'000 + fd, 1'050 + fd, fd);
    r.rdev = 0;
    r.mode = 0;
    r.result = result;
    return r;
  };
  correlator.OnRecord(unseen(5, -EBADF));
  correlator.OnRecord(unseen(5, -EBADF));
  correlator.OnRecord(unseen(6, 0));
  correlator.Finish(10'000);
  const auto& stats = correlator.drm().device_stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].device, "no open file (the calls failed with EBADF: not an open fd)");
  EXPECT_EQ(stats[0].ioctls, 2u);
  EXPECT_EQ(stats[1].device, "unidentified files (gone before they could be looked at)");
  EXPECT_EQ(stats[1].ioctls, 1u);
}

TEST_F(DrmCorrelatorTest, UnreadableArgumentsAreFlaggedAndNotDecoded) {
  correlator.drm().set_link_host_calls(false);
  DecodedDrmIoctl bad = ioctl.Make(11, 100, 200);
  bad.hdr.flags = XT_FLAG_ARG_UNREADABLE;
  bad.in = {};
  bad.arg = 0;
  bad.result = -14;
  correlator.OnRecord(bad);
  const auto ioctls = sink.All<DrmIoctl>();
  ASSERT_EQ(ioctls.size(), 1u);
  EXPECT_TRUE(ioctls[0].arg_unreadable);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(ioctls[0].args));
  EXPECT_EQ(ioctls[0].result, -14);
  EXPECT_EQ(Str(ioctls[0].name), "DRM_IOCTL_XE_EXEC");
}

TEST_F(DrmCorrelatorTest, FenceSignalsBecomeEvents) {
  DecodedRecord fence = DecodedDrmFence{Header(XT_REC_DRM_FENCE, 11, 5'000, 9'000), 4'900, 17, 3,
                                        XT_FENCE_SRC_I915_RETIRE};
  correlator.OnRecord(fence);
  const auto fences = sink.All<DrmFenceSignal>();
  ASSERT_EQ(fences.size(), 1u);
  EXPECT_EQ(fences[0], (DrmFenceSignal{.pid = kPid,
                                       .tid = 11,
                                       .created_ns = 5'000,
                                       .signaled_ns = 9'000,
                                       .ioctl_start_ns = 4'900,
                                       .context = 17,
                                       .seqno = 3,
                                       .source = fences[0].source}));
  EXPECT_EQ(Str(fences[0].source), "i915_request_retire");
  EXPECT_EQ(correlator.drm().fences(), 1u);
}

TEST_F(DrmCorrelatorTest, XeHardwareFenceSignalsAreNamedByTheirTracepoint) {
  DecodedRecord fence = DecodedDrmFence{Header(XT_REC_DRM_FENCE, 12, 6'000, 8'000), 5'900, 21, 4,
                                        XT_FENCE_SRC_XE_HW_FENCE};
  correlator.OnRecord(fence);
  const auto fences = sink.All<DrmFenceSignal>();
  ASSERT_EQ(fences.size(), 1u);
  EXPECT_EQ(Str(fences[0].source), "xe_hw_fence_signal");
  EXPECT_EQ(fences[0].signaled_ns, 8'000u);
}

// Fence signals tightening the device timeline: a list appended before the capture (so
// unclassified until executed), executed on queue 0x9e by thread 11 whose xe EXEC ioctl makes a
// fence, then a queue synchronize. Records are fed in the order the ring delivers them: each
// when its call (or the signal) happened last.
class FenceBoundsTest : public DrmCorrelatorTest {
 protected:
  static constexpr uint64_t kQueue = 0x9e;
  static constexpr uint64_t kExecStart = 10'000, kExecEnd = 10'500;
  static constexpr uint64_t kExecIoctlStart = 10'100;
  static constexpr uint64_t kSyncEnd = 40'000;

  void AppendAndExecute(bool signal_before_the_call_returns = false,
                        uint64_t signaled_ns = 20'000) {
    correlator.OnRecord(Launch(11, 1'000, 3'000));  // list 0x1
    correlator.OnRecord(ioctl.Make(11, kExecIoctlStart, 10'200));
    if (signal_before_the_call_returns) Signal(kExecIoctlStart, signaled_ns);
    DecodedZeExecute exec{};
    exec.hdr = Header(XT_REC_ZE_EXECUTE, 11, kExecStart, kExecEnd);
    exec.queue = kQueue;
    exec.num_lists = exec.lists_copied = 1;
    exec.lists = reinterpret_cast<const std::byte*>(&list_);
    correlator.OnRecord(exec);
    if (!signal_before_the_call_returns) Signal(kExecIoctlStart, signaled_ns);
  }
  void Signal(uint64_t ioctl_start_ns, uint64_t signaled_ns) {
    correlator.OnRecord(DecodedDrmFence{Header(XT_REC_DRM_FENCE, 11, ioctl_start_ns + 50,
                                               signaled_ns),
                                        ioctl_start_ns, 5, 1, XT_FENCE_SRC_XE_HW_FENCE});
  }
  DeviceOp SynchronizeAndGetOp() {
    DecodedZeCall sync{};
    sync.hdr = Header(XT_REC_ZE_CALL, 11, 30'000, kSyncEnd);
    sync.fn = XT_ZE_COMMAND_QUEUE_SYNCHRONIZE;
    sync.arg[0] = kQueue;
    sync.arg[1] = ~0ull;
    correlator.OnRecord(sync);
    const auto ops = sink.All<DeviceOp>();
    EXPECT_EQ(ops.size(), 1u);
    return ops.empty() ? DeviceOp{} : ops[0];
  }

  uint64_t list_ = 0x1;
};

TEST_F(FenceBoundsTest, WithoutAFenceTheEndIsTheSynchronizeEnd) {
  correlator.OnRecord(Launch(11, 1'000, 3'000));
  DecodedZeExecute exec{};
  exec.hdr = Header(XT_REC_ZE_EXECUTE, 11, kExecStart, kExecEnd);
  exec.queue = kQueue;
  exec.num_lists = exec.lists_copied = 1;
  exec.lists = reinterpret_cast<const std::byte*>(&list_);
  correlator.OnRecord(exec);
  const DeviceOp op = SynchronizeAndGetOp();
  EXPECT_FALSE(op.measured);
  EXPECT_EQ(op.start_ns, kExecStart);
  EXPECT_EQ(op.end_ns, kSyncEnd);
}

TEST_F(FenceBoundsTest, TheSubmissionFenceSignalBoundsTheEnd) {
  AppendAndExecute();
  const DeviceOp op = SynchronizeAndGetOp();
  EXPECT_FALSE(op.measured);
  EXPECT_TRUE(op.completion_seen);
  EXPECT_EQ(op.start_ns, kExecStart);
  EXPECT_EQ(op.end_ns, 20'000u);
  EXPECT_EQ(op.sync_ns, kSyncEnd);  // the host call that saw it done is still named
}

TEST_F(FenceBoundsTest, ASignalSeenBeforeTheSubmittingCallReturnedStillCounts) {
  AppendAndExecute(/*signal_before_the_call_returns=*/true, 10'400);
  EXPECT_EQ(SynchronizeAndGetOp().end_ns, 10'400u);
}

TEST_F(FenceBoundsTest, ALaterSignalNeverLoosensTheEnd) {
  AppendAndExecute(false, kSyncEnd + 5'000);
  EXPECT_EQ(SynchronizeAndGetOp().end_ns, kSyncEnd);
}

TEST_F(FenceBoundsTest, FencesOfOtherIoctlsOrOtherCallsDoNotBoundIt) {
  correlator.OnRecord(Launch(11, 1'000, 3'000));
  // A fence from a non-submission ioctl inside the executing call (a buffer clear, say)...
  Ioctl version;
  version.in.resize(64);
  DecodedDrmIoctl not_submission = version.Make(11, 10'050, 10'080);
  not_submission.cmd = 0xC0406400;  // DRM_IOCTL_VERSION
  correlator.OnRecord(not_submission);
  DecodedZeExecute exec{};
  exec.hdr = Header(XT_REC_ZE_EXECUTE, 11, kExecStart, kExecEnd);
  exec.queue = kQueue;
  exec.num_lists = exec.lists_copied = 1;
  exec.lists = reinterpret_cast<const std::byte*>(&list_);
  correlator.OnRecord(exec);
  Signal(10'050, 12'000);
  // ...and a submission on the same thread outside the call.
  correlator.OnRecord(ioctl.Make(11, 25'000, 25'100));
  Signal(25'000, 26'000);
  EXPECT_EQ(SynchronizeAndGetOp().end_ns, kSyncEnd);
  EXPECT_EQ(correlator.drm().fences(), 2u);  // both still reported as signals
}

}  // namespace
}  // namespace xtrace
