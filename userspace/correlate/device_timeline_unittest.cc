// Tests for correlate/device_timeline: device operations from host calls — immediate and
// regular lists, one operation per execution, measured vs estimated times, completion seen
// through events, fences and queues, handle reuse, and bounded state. The paths of newer Level
// Zero (counter-based events, graphs, host functions) and device matching by UUID are tested in
// device_timeline_paths_unittest.cc.
#include "correlate/device_timeline.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "device_timeline_test_util.h"

namespace xtrace {
namespace {

using namespace device_timeline_testing;  // NOLINT: the fixture and its helpers

TEST_F(DeviceTimelineTest, ImmediateLaunchIsMeasuredFromTheTimestampsTheProcessRead) {
  MakeEvents(1, true);
  const uint64_t imm = 0x1111;
  On(Call(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, 1'000'000'100, {kContext, kDevice, 0, 2, 2, imm}));
  const StringId gemm = strings_.Intern("gemm");
  tl_.OnLaunch(Launch(imm, 1'000'001'000, Event(0), gemm));
  // The kernel really ran 1'000'010'000 .. 1'000'030'000 (ticks truncated to 32 bits).
  On(Call(XT_ZE_EVENT_HOST_SYNCHRONIZE, 1'000'005'000, {Event(0), ~0ull}));
  EXPECT_TRUE(sink_.All<DeviceOp>().empty()) << "held: its timestamps may still be read";
  On(Call(XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP, 1'000'040'000,
          {Event(0), TicksAt(1'000'010'000) & 0xffffffff, TicksAt(1'000'030'000) & 0xffffffff}));
  EXPECT_TRUE(sink_.All<DeviceOp>().empty()) << "waits for a clock reading after it";
  ReadClock(2'000'000'000);
  auto ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 1u);
  const DeviceOp& op = ops[0];
  EXPECT_TRUE(op.measured);
  EXPECT_NEAR(double(op.start_ns), 1'000'010'000.0, 60);
  EXPECT_NEAR(double(op.end_ns), 1'000'030'000.0, 60);
  EXPECT_EQ(op.start_ticks >> 32, 48u);  // unwrapped to the full counter
  EXPECT_EQ(op.name, gemm);
  EXPECT_EQ(op.queue, imm);
  EXPECT_EQ(op.command_list, imm);
  EXPECT_EQ(op.execution, 0u);
  EXPECT_EQ(op.submit_ns, 1'000'001'000u);
  EXPECT_EQ(op.sync_ns, 1'000'006'000u);  // the host synchronize saw it first
  EXPECT_EQ(op.device, 0u);
  EXPECT_EQ(op.group_count[0], 64u);
  auto queues = sink_.All<DeviceQueue>();
  ASSERT_EQ(queues.size(), 1u);
  EXPECT_TRUE(queues[0].immediate);
  EXPECT_EQ(queues[0].index, 2u);
  EXPECT_EQ(queues[0].track, op.track);
  EXPECT_EQ(tl_.stats().measured, 1u);
}

TEST_F(DeviceTimelineTest, RegularListYieldsOneOperationPerExecutionBoundedByTheHost) {
  const uint64_t list = 0x2222, queue = 0x3333, fence = 0x4444;
  On(Call(XT_ZE_COMMAND_QUEUE_CREATE, 100, {kContext, kDevice, 0, 1, 2, queue}));
  On(Call(XT_ZE_COMMAND_LIST_CREATE, 200, {kContext, kDevice, 0, 0, 0, list}));
  On(Call(XT_ZE_FENCE_CREATE, 300, {queue, 0, 0, 0, 0, fence}));
  const StringId scale = strings_.Intern("scale");
  tl_.OnLaunch(Launch(list, 400, 0, scale));
  On(Call(XT_ZE_APPEND_MEMORY_COPY, 500, {list, 0, 0, 0xd57, 0x5c, 4096}));
  On(Call(XT_ZE_APPEND_BARRIER, 550, {list, 0, 0}));
  On(Call(XT_ZE_COMMAND_LIST_CLOSE, 600, {list}));
  EXPECT_TRUE(sink_.All<DeviceOp>().empty()) << "recording runs nothing";
  for (uint64_t i = 0; i < 3; ++i) {
    const uint64_t t = 1'000'000 * (i + 1);
    On(Call(XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS, t, {queue, fence, 1, list}));
    On(Call(XT_ZE_FENCE_HOST_SYNCHRONIZE, t + 10'000, {fence, ~0ull}));
    On(Call(XT_ZE_FENCE_RESET, t + 20'000, {fence}));
  }
  auto ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 6u);  // kernel and copy, three times; the barrier is not drawn
  for (size_t i = 0; i < ops.size(); ++i) {
    const uint64_t execution = i / 2 + 1;
    EXPECT_EQ(ops[i].execution, execution);
    EXPECT_FALSE(ops[i].measured);
    EXPECT_EQ(ops[i].start_ns, 1'000'000 * execution);           // the execute's start
    EXPECT_EQ(ops[i].end_ns, 1'000'000 * execution + 11'000);    // the fence sync's end
    EXPECT_EQ(ops[i].queue, queue);
    EXPECT_EQ(ops[i].command_list, list);
    EXPECT_EQ(ops[i].append_ns, i % 2 ? 500u : 400u);
  }
  EXPECT_EQ(ops[0].kind, DeviceOpKind::kKernel);
  EXPECT_EQ(ops[1].kind, DeviceOpKind::kCopy);
  EXPECT_EQ(ops[1].bytes, 4096u);
  EXPECT_EQ(strings_.Get(ops[1].name), "zeCommandListAppendMemoryCopy");
  EXPECT_NE(ops[0].id, ops[2].id);
  auto queues = sink_.All<DeviceQueue>();
  ASSERT_EQ(queues.size(), 1u);
  EXPECT_FALSE(queues[0].immediate);
  EXPECT_EQ(queues[0].index, 1u);
}

TEST_F(DeviceTimelineTest, EventsCompleteEverythingBeforeThemAndResetsReleaseThem) {
  MakeEvents(2, true);
  const uint64_t imm = 0x1111;
  On(Call(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, 100, {kContext, kDevice, 0, 0, 2, imm}));
  const StringId k = strings_.Intern("k");
  tl_.OnLaunch(Launch(imm, 1'000, Event(0), k));
  tl_.OnLaunch(Launch(imm, 2'000, 0, k));
  tl_.OnLaunch(Launch(imm, 3'000, Event(1), k));
  tl_.OnLaunch(Launch(imm, 4'000, 0, k));  // after the event the host waits on
  On(Call(XT_ZE_EVENT_HOST_SYNCHRONIZE, 10'000, {Event(1), ~0ull}));
  // The second launch (no event) completes with the third; the first and third wait for a
  // possible timestamp read; the fourth is still running.
  auto ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].submit_ns, 2'000u);
  EXPECT_EQ(ops[0].end_ns, 11'000u);
  On(Call(XT_ZE_EVENT_HOST_RESET, 20'000, {Event(0)}));
  On(Call(XT_ZE_EVENT_HOST_RESET, 20'000, {Event(1)}));
  EXPECT_EQ(sink_.All<DeviceOp>().size(), 3u);
  tl_.Finish();
  ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_FALSE(ops[3].completion_seen);
  EXPECT_EQ(tl_.stats().completion_unseen, 1u);
}

TEST_F(DeviceTimelineTest, EventsWithoutTimestampsDoNotHoldOperations) {
  MakeEvents(1, false);
  const uint64_t imm = 0x1111;
  On(Call(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, 100, {kContext, kDevice, 0, 0, 2, imm}));
  tl_.OnLaunch(Launch(imm, 1'000, Event(0), strings_.Intern("k")));
  On(Call(XT_ZE_EVENT_QUERY_STATUS, 5'000, {Event(0)}, kTid, 1));  // NOT_READY: no news
  EXPECT_TRUE(sink_.All<DeviceOp>().empty());
  On(Call(XT_ZE_EVENT_QUERY_STATUS, 8'000, {Event(0)}));
  auto ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].end_ns, 9'000u);
}

TEST_F(DeviceTimelineTest, SynchronousListsAndQueueSynchronizeComplete) {
  const uint64_t sync_imm = 0x5555, queue = 0x6666, list = 0x7777;
  On(Call(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, 100, {kContext, kDevice, 0, 0, 1, sync_imm}));
  tl_.OnLaunch(Launch(sync_imm, 1'000, 0, strings_.Intern("k")));
  auto ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].end_ns, 3'000u);  // done when the append returned
  On(Call(XT_ZE_COMMAND_QUEUE_CREATE, 100, {kContext, kDevice, 0, 0, 2, queue}));
  On(Call(XT_ZE_COMMAND_LIST_CREATE, 100, {kContext, kDevice, 0, 0, 0, list}));
  tl_.OnLaunch(Launch(list, 1'000, 0, strings_.Intern("k")));
  On(Call(XT_ZE_COMMAND_LIST_CLOSE, 1'500, {list}));
  On(Call(XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS, 10'000, {queue, 0, 1, list}));
  On(Call(XT_ZE_COMMAND_QUEUE_SYNCHRONIZE, 9'000, {queue, ~0ull}));  // began before: no news
  EXPECT_EQ(sink_.All<DeviceOp>().size(), 1u);
  On(Call(XT_ZE_COMMAND_QUEUE_SYNCHRONIZE, 20'000, {queue, ~0ull}));
  ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[1].end_ns, 21'000u);
}

TEST_F(DeviceTimelineTest, ReusedHandlesStartAfresh) {
  const uint64_t handle = 0x8888;
  const StringId k = strings_.Intern("k");
  On(Call(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, 100, {kContext, kDevice, 0, 0, 2, handle}));
  tl_.OnLaunch(Launch(handle, 1'000, 0, k));
  On(Call(XT_ZE_COMMAND_LIST_DESTROY, 5'000, {handle}));  // waits for its work
  ASSERT_EQ(sink_.All<DeviceOp>().size(), 1u);
  // The same address, now a regular list: appends record instead of running.
  On(Call(XT_ZE_COMMAND_LIST_CREATE, 6'000, {kContext, kDevice, 0, 0, 0, handle}));
  tl_.OnLaunch(Launch(handle, 7'000, 0, k));
  EXPECT_EQ(sink_.All<DeviceOp>().size(), 1u);
  const uint64_t queue = 0x9999;
  On(Call(XT_ZE_COMMAND_QUEUE_CREATE, 100, {kContext, kDevice, 0, 0, 2, queue}));
  On(Call(XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS, 8'000, {queue, 0, 1, handle}));
  On(Call(XT_ZE_COMMAND_QUEUE_DESTROY, 9'000, {queue}));
  auto ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[1].execution, 1u);
  EXPECT_NE(ops[0].track, ops[1].track);
}

TEST_F(DeviceTimelineTest, ListsCreatedBeforeTheCaptureShowWhatTheyAre) {
  MakeEvents(2, false);
  const StringId k = strings_.Intern("k");
  // Never seen created: appends wait until the list shows its kind. Work seen complete
  // means immediate: everything appended so far ran, submitted when appended.
  const uint64_t immediate = 0xaaaa;
  tl_.OnLaunch(Launch(immediate, 1'000, 0, k));
  tl_.OnLaunch(Launch(immediate, 2'000, Event(0), k));
  EXPECT_TRUE(sink_.All<DeviceOp>().empty());
  On(Call(XT_ZE_EVENT_HOST_SYNCHRONIZE, 3'000, {Event(0), ~0ull}));
  auto ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].submit_ns, 1'000u);
  EXPECT_EQ(ops[0].end_ns, 4'000u);
  EXPECT_EQ(ops[0].device, 0u);  // the only device there is
  tl_.OnLaunch(Launch(immediate, 5'000, 0, k));  // known now: runs at once
  On(Call(XT_ZE_COMMAND_LIST_RESET, 6'000, {immediate}));
  EXPECT_EQ(sink_.All<DeviceOp>().size(), 3u);

  // Closed: regular. Its appends run with each execution, not before.
  const uint64_t regular = 0xbbbb, queue = 0xcccc;
  tl_.OnLaunch(Launch(regular, 7'000, Event(1), k));
  On(Call(XT_ZE_COMMAND_LIST_CLOSE, 8'000, {regular}));
  On(Call(XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS, 9'000, {queue, 0, 1, regular}));
  On(Call(XT_ZE_EVENT_HOST_SYNCHRONIZE, 10'000, {Event(1), ~0ull}));
  ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[3].execution, 1u);
  EXPECT_EQ(ops[3].submit_ns, 9'000u);
  // Neither engine was described: no ordinal and index are claimed for them.
  auto queues = sink_.All<DeviceQueue>();
  ASSERT_EQ(queues.size(), 2u);
  EXPECT_TRUE(queues[0].immediate);
  for (const DeviceQueue& q : queues) EXPECT_TRUE(q.engine_unknown) << std::hex << q.handle;

  // Never shown: dropped (and counted), not guessed.
  const uint64_t silent = 0xdddd;
  tl_.OnLaunch(Launch(silent, 11'000, 0, k));
  tl_.Finish();
  EXPECT_EQ(sink_.All<DeviceOp>().size(), 4u);
  EXPECT_EQ(tl_.stats().unclassified_dropped, 1u);
}

// Objects made before the attach, learned by asking the process (ApiCall.learned): a learned
// immediate list releases the appends it held and runs on its engine; a learned queue takes
// its device from the list it executes; a learned event keeps the operation bound to it.
TEST_F(DeviceTimelineTest, LearnedObjectsAreTakenAsCreationsWithoutForgettingWhatCameBefore) {
  const StringId k = strings_.Intern("k");
  auto learned = [](ApiCall c) {
    c.learned = true;
    return c;
  };
  On(learned(Call(XT_ZE_EVENT_POOL_CREATE, 10, {0, kPoolTimestamps, 0, 0, 0, 0x9001})));
  const uint64_t imm = 0xaaaa;
  tl_.OnLaunch(Launch(imm, 1'000, 0, k));  // held: the list's kind is not known yet
  EXPECT_TRUE(sink_.All<DeviceOp>().empty());
  On(learned(Call(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, 1'500, {0, kDevice, 0, 2, 0, imm})));
  ASSERT_EQ(sink_.All<DeviceQueue>().size(), 1u) << "classified by the learned creation: submitted";
  tl_.OnLaunch(Launch(imm, 2'000, Event(0), k));
  On(learned(Call(XT_ZE_EVENT_CREATE, 2'500, {0x9001, 0, 0, 0, 0, Event(0)})));
  On(Call(XT_ZE_EVENT_HOST_SYNCHRONIZE, 3'000, {Event(0), ~0ull}));
  On(Call(XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP, 4'000,
          {Event(0), TicksAt(2'100) & 0xffffffff, TicksAt(2'900) & 0xffffffff}));
  ReadClock(2'000'000'000);
  auto queues = sink_.All<DeviceQueue>();
  ASSERT_EQ(queues.size(), 1u);
  EXPECT_TRUE(queues[0].immediate);
  EXPECT_EQ(queues[0].index, 2u);
  EXPECT_FALSE(queues[0].engine_unknown);
  auto ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_TRUE(ops[1].measured) << "the learned event kept the launch bound to it";

  const uint64_t regular = 0xbbbb, queue = 0xcccc;
  On(learned(Call(XT_ZE_COMMAND_QUEUE_CREATE, 5'000, {0, 0, 1, 3, 0, queue})));
  On(Call(XT_ZE_COMMAND_LIST_CREATE, 5'100, {kContext, kDevice, 1, 0, 0, regular}));
  tl_.OnLaunch(Launch(regular, 5'200, 0, k));
  On(Call(XT_ZE_COMMAND_LIST_CLOSE, 5'300, {regular}));
  On(Call(XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS, 5'400, {queue, 0, 1, regular}));
  queues = sink_.All<DeviceQueue>();
  ASSERT_EQ(queues.size(), 2u);
  EXPECT_EQ(queues[1].device, 0u) << "its list's device";
  EXPECT_EQ(queues[1].ordinal, 1u);
  EXPECT_EQ(queues[1].index, 3u);
  EXPECT_FALSE(queues[1].engine_unknown);
}

// A regular list recorded before the attach and executed after it yields nothing (what it
// holds is unknown) and is counted; once reset and recorded again, it runs what it holds.
TEST_F(DeviceTimelineTest, ExecutionsOfListsRecordedBeforeTheAttachAreCounted) {
  const uint64_t regular = 0xbbbb, queue = 0xcccc;
  On(Call(XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS, 1'000, {queue, 0, 1, regular}));
  On(Call(XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS, 2'000, {queue, 0, 1, regular}));
  EXPECT_EQ(tl_.stats().executions_recorded_before, 2u);
  On(Call(XT_ZE_COMMAND_LIST_RESET, 3'000, {regular}));
  tl_.OnLaunch(Launch(regular, 4'000, 0, strings_.Intern("k")));
  On(Call(XT_ZE_COMMAND_LIST_CLOSE, 5'000, {regular}));
  On(Call(XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS, 6'000, {queue, 0, 1, regular}));
  On(Call(XT_ZE_COMMAND_QUEUE_SYNCHRONIZE, 7'000, {queue, ~0ull}));
  EXPECT_EQ(tl_.stats().executions_recorded_before, 2u);
  EXPECT_EQ(sink_.All<DeviceOp>().size(), 1u);
}

TEST_F(DeviceTimelineTest, TimestampsThatContradictTheHostAreNotUsed) {
  MakeEvents(1, true);
  const uint64_t imm = 0x1111;
  On(Call(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, 100, {kContext, kDevice, 0, 0, 2, imm}));
  tl_.OnLaunch(Launch(imm, 1'500'000'000, Event(0), strings_.Intern("k")));
  // Ticks of a kernel half a second before it was even submitted.
  On(Call(XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP, 1'500'100'000,
          {Event(0), TicksAt(1'000'000'000) & 0xffffffff, TicksAt(1'000'001'000) & 0xffffffff}));
  ReadClock(2'000'000'000);
  auto ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_FALSE(ops[0].measured);
  EXPECT_EQ(tl_.stats().timestamps_rejected, 1u);
}

TEST_F(DeviceTimelineTest, StateStaysBoundedWhenObjectsComeAndGo) {
  const StringId k = strings_.Intern("k");
  for (uint64_t i = 0; i < 10'000; ++i) {
    const uint64_t t = 1'000'000 + i * 10'000;
    const uint64_t pool = 0x10'0000 + i * 0x100, event = pool + 8, list = pool + 16;
    On(Call(XT_ZE_EVENT_POOL_CREATE, t, {kContext, kPoolTimestamps, 1, 1, 0, pool}));
    On(Call(XT_ZE_EVENT_CREATE, t, {pool, 0, 4, 4, 0, event}));
    On(Call(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, t, {kContext, kDevice, 0, 0, 2, list}));
    tl_.OnLaunch(Launch(list, t + 100, event, k));
    On(Call(XT_ZE_EVENT_HOST_SYNCHRONIZE, t + 200, {event, ~0ull}));
    On(Call(XT_ZE_COMMAND_LIST_DESTROY, t + 300, {list}));
    On(Call(XT_ZE_EVENT_DESTROY, t + 400, {event}));
    On(Call(XT_ZE_EVENT_POOL_DESTROY, t + 500, {pool}));
  }
  EXPECT_EQ(sink_.All<DeviceOp>().size(), 10'000u);
  EXPECT_LE(tl_.stats().peak_live_objects, 8u);
  EXPECT_LE(tl_.stats().peak_pending_ops, 2u);
  EXPECT_EQ(tl_.stats().pending_ops, 0u);
}

TEST_F(DeviceTimelineTest, AnEngineNobodySynchronizesIsCappedNotUnbounded) {
  const uint64_t imm = 0x1111;
  On(Call(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, 100, {kContext, kDevice, 0, 0, 2, imm}));
  const StringId k = strings_.Intern("k");
  for (uint64_t i = 0; i < 70'000; ++i) tl_.OnLaunch(Launch(imm, 1'000 + i, 0, k));
  EXPECT_LE(tl_.stats().peak_pending_ops, 65'537u);
  EXPECT_GE(tl_.stats().completion_unseen, 70'000u - 65'537u);
}

}  // namespace
}  // namespace xtrace
