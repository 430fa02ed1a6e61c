// Tests for correlate/device_timeline on the paths of newer Level Zero (SYCL's v2 adapter and
// later drivers): counter-based events, lists appended to immediate lists, graphs recorded and
// replayed, host functions, calls that only immediate lists take; and process devices matched
// to xtrace's by UUID.
#include "correlate/device_timeline.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device_timeline_test_util.h"

namespace xtrace {
namespace {

using namespace device_timeline_testing;  // NOLINT: the fixture and its helpers

// SYCL's v2 shape: a counter-based event with kernel timestamps (no pool) makes its launch
// measured, from either creator (core or Intel's, the same flag bits); without the flags the
// launch is bounded by zeCommandListHostSynchronize on its immediate list.
TEST_F(DeviceTimelineTest, CounterBasedEventsAndHostSynchronizeOfAnImmediateList) {
  constexpr uint64_t kCounterBasedTimestamps = 1 | 4 | 16;  // IMMEDIATE, HOST_VISIBLE, timestamps
  On(Call(XT_ZE_EX_COUNTER_BASED_EVENT_CREATE2, 10, {kContext, kDevice, kCounterBasedTimestamps, 4, 0, Event(0)}));
  On(Call(XT_ZE_EVENT_COUNTER_BASED_CREATE, 20, {kContext, kDevice, 1 | 4, 4, 0, Event(1)}));
  const uint64_t imm = 0x1111;
  On(Call(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, 1'000'000'100, {kContext, kDevice, 0, 2, 2, imm}));
  const StringId gemm = strings_.Intern("gemm");
  const StringId scale = strings_.Intern("scale");
  tl_.OnLaunch(Launch(imm, 1'000'001'000, Event(0), gemm));
  tl_.OnLaunch(Launch(imm, 1'000'002'000, Event(1), scale));
  On(Call(XT_ZE_COMMAND_LIST_HOST_SYNCHRONIZE, 1'000'050'000, {imm, ~0ull}));
  On(Call(XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP, 1'000'060'000,
          {Event(0), TicksAt(1'000'010'000) & 0xffffffff, TicksAt(1'000'030'000) & 0xffffffff}));
  ReadClock(2'000'000'000);
  auto ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 2u);
  for (const DeviceOp& op : ops) {
    EXPECT_EQ(op.queue, imm);
    EXPECT_TRUE(op.completion_seen);
    if (op.name == gemm) {
      EXPECT_TRUE(op.measured);
      EXPECT_NEAR(double(op.start_ns), 1'000'010'000.0, 60);
    } else {
      EXPECT_FALSE(op.measured);
      EXPECT_LE(op.end_ns, 1'000'051'000u) << "the host synchronize saw it complete";
    }
  }
}

// zeCommandListImmediateAppendCommandListsExp runs a regular list's commands on the immediate
// list's engine, once per call.
TEST_F(DeviceTimelineTest, RegularListsAppendedToAnImmediateListRunOnItsEngine) {
  const uint64_t imm = 0x1111, list = 0x2222;
  On(Call(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, 100, {kContext, kDevice, 0, 2, 2, imm}));
  On(Call(XT_ZE_COMMAND_LIST_CREATE, 200, {kContext, kDevice, 0, 0, 0, list}));
  const StringId scale = strings_.Intern("scale");
  tl_.OnLaunch(Launch(list, 300, 0, scale));
  On(Call(XT_ZE_COMMAND_LIST_CLOSE, 400, {list}));
  for (uint64_t at : {1'000'001'000ull, 1'000'003'000ull}) {
    // command_list, signal_event, num_wait_events, num_command_lists, first_command_list
    On(Call(XT_ZE_COMMAND_LIST_IMMEDIATE_APPEND_COMMAND_LISTS_EXP, at, {imm, 0, 0, 1, list}));
    On(Call(XT_ZE_COMMAND_LIST_HOST_SYNCHRONIZE, at + 1'000, {imm, ~0ull}));
  }
  ReadClock(2'000'000'000);
  auto ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 2u);
  for (const DeviceOp& op : ops) {
    EXPECT_EQ(op.queue, imm);
    EXPECT_EQ(op.command_list, list);
    EXPECT_EQ(op.name, scale);
  }
  EXPECT_NE(ops[0].execution, ops[1].execution);
}

// A graph recorded on an immediate list runs nothing while recorded; every replay
// (zeCommandListAppendGraphExp) runs its kernels again on the replaying list's engine, named,
// tied to the replaying call, measured where the process read their events' timestamps.
TEST_F(DeviceTimelineTest, GraphKernelsRunAtEveryReplayOnTheReplayingList) {
  constexpr uint64_t kCounterBasedTimestamps = 1 | 4 | 16;
  On(Call(XT_ZE_EX_COUNTER_BASED_EVENT_CREATE2, 10, {kContext, kDevice, kCounterBasedTimestamps, 4, 0, Event(0)}));
  const uint64_t imm = 0x1111, graph = 0x6000, exec = 0x7000, done = Event(1);
  On(Call(XT_ZE_EX_COUNTER_BASED_EVENT_CREATE2, 11, {kContext, kDevice, 1 | 4, 4, 0, done}));
  On(Call(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, 100, {kContext, kDevice, 0, 2, 2, imm}));
  const StringId gemm = strings_.Intern("gemm");
  const StringId scale = strings_.Intern("scale");
  On(Call(XT_ZE_COMMAND_LIST_BEGIN_GRAPH_CAPTURE_EXP, 200, {imm}));
  tl_.OnLaunch(Launch(imm, 300, Event(0), gemm));
  tl_.OnLaunch(Launch(imm, 400, 0, scale));
  // command_list, graph in slot 5
  On(Call(XT_ZE_COMMAND_LIST_END_GRAPH_CAPTURE_EXP, 500, {imm, 0, 0, 0, 0, graph}));
  On(Call(XT_ZE_COMMAND_LIST_HOST_SYNCHRONIZE, 600, {imm, ~0ull}));
  On(Call(XT_ZE_COMMAND_LIST_INSTANTIATE_GRAPH_EXP, 700, {graph, 0, 0, 0, 0, exec}));
  ReadClock(1'000'000'000);
  EXPECT_TRUE(sink_.All<DeviceOp>().empty()) << "recording a graph runs nothing";
  constexpr int kReplays = 3;
  for (int r = 0; r < kReplays; ++r) {
    const uint64_t at = 1'000'000'000 + uint64_t(r) * 1'000'000;
    // command_list, signal_event, num_wait_events, executable_graph
    On(Call(XT_ZE_COMMAND_LIST_APPEND_GRAPH_EXP, at, {imm, done, 0, exec}));
    On(Call(XT_ZE_EVENT_HOST_SYNCHRONIZE, at + 100'000, {done, ~0ull}));
    On(Call(XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP, at + 200'000,
            {Event(0), TicksAt(at + 10'000) & 0xffffffff, TicksAt(at + 30'000) & 0xffffffff}));
  }
  ReadClock(2'000'000'000);
  auto ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 2u * kReplays);
  std::map<uint64_t, int> per_replay;
  for (const DeviceOp& op : ops) {
    EXPECT_EQ(op.queue, imm);
    EXPECT_EQ(op.command_list, exec);
    EXPECT_TRUE(op.completion_seen);
    EXPECT_GE(op.execution, 1u);
    EXPECT_LE(op.execution, uint64_t{kReplays});
    const uint64_t at = 1'000'000'000 + (op.execution - 1) * 1'000'000;
    EXPECT_EQ(op.submit_ns, at) << "submitted by its replay";
    EXPECT_GE(op.start_ns + 100, at);
    EXPECT_LE(op.end_ns, at + 101'000) << "complete by the replay's event synchronize";
    ++per_replay[op.execution];
    if (op.name == gemm) {
      EXPECT_TRUE(op.measured);
      EXPECT_NEAR(double(op.start_ns), double(at + 10'000), 60);
      EXPECT_EQ(op.append_ns, 300u) << "the append that recorded it";
    } else {
      EXPECT_EQ(op.name, scale);
      EXPECT_FALSE(op.measured);
    }
  }
  EXPECT_EQ(per_replay.size(), size_t{kReplays});
  EXPECT_EQ(tl_.stats().unknown_graph_replays, 0u);
}

// A graph recorded into a graph the caller made, replayed on a list of another engine; and a
// graph whose recording predates the capture: its replays are one operation each, said unknown.
TEST_F(DeviceTimelineTest, GraphsIntoTheCallersGraphAndGraphsRecordedBeforeTheCapture) {
  const uint64_t imm = 0x1111, other = 0x1112, graph = 0x6000, exec = 0x7000, old_exec = 0x7001;
  On(Call(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, 100, {kContext, kDevice, 0, 2, 2, imm}));
  On(Call(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, 101, {kContext, kDevice, 1, 0, 2, other}));
  On(Call(XT_ZE_GRAPH_CREATE_EXP, 150, {kContext, 0, 0, 0, 0, graph}));
  On(Call(XT_ZE_COMMAND_LIST_BEGIN_CAPTURE_INTO_GRAPH_EXP, 200, {imm, graph}));
  On(Call(XT_ZE_APPEND_MEMORY_COPY, 300, {imm, 0, 0, 0xd57, 0x5c, 4096}));
  // phGraph null: the graph slot reads 0.
  On(Call(XT_ZE_COMMAND_LIST_END_GRAPH_CAPTURE_EXP, 400, {imm}));
  On(Call(XT_ZE_COMMAND_LIST_INSTANTIATE_GRAPH_EXP, 500, {graph, 0, 0, 0, 0, exec}));
  On(Call(XT_ZE_GRAPH_DESTROY_EXP, 550, {graph}));
  On(Call(XT_ZE_COMMAND_LIST_APPEND_GRAPH_EXP, 600'000, {other, 0, 0, exec}));
  On(Call(XT_ZE_COMMAND_LIST_APPEND_GRAPH_EXP, 700'000, {other, 0, 0, old_exec}));
  On(Call(XT_ZE_COMMAND_LIST_HOST_SYNCHRONIZE, 800'000, {other, ~0ull}));
  auto ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].kind, DeviceOpKind::kCopy);
  EXPECT_EQ(ops[0].queue, other);
  EXPECT_EQ(ops[0].bytes, 4096u);
  EXPECT_EQ(strings_.Get(ops[1].name), kUnknownGraphName);
  EXPECT_EQ(ops[1].queue, other);
  EXPECT_EQ(ops[1].command_list, old_exec);
  EXPECT_EQ(ops[1].submit_ns, 700'000u);
  EXPECT_LE(ops[1].end_ns, 801'000u);
  EXPECT_EQ(tl_.stats().unknown_graph_replays, 1u);
  // Replayed on a list made before the capture, which shows later that it is immediate: the
  // replay's operations are still the replay's.
  const uint64_t old_list = 0x1113;
  On(Call(XT_ZE_COMMAND_LIST_APPEND_GRAPH_EXP, 850'000, {old_list, 0, 0, exec}));
  On(Call(XT_ZE_COMMAND_LIST_HOST_SYNCHRONIZE, 860'000, {old_list, ~0ull}));
  ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[2].queue, old_list);
  EXPECT_EQ(ops[2].command_list, exec);
  EXPECT_EQ(ops[2].execution, 2u);
  EXPECT_EQ(ops[2].submit_ns, 850'000u);
  On(Call(XT_ZE_EXECUTABLE_GRAPH_DESTROY_EXP, 900'000, {exec}));
  On(Call(XT_ZE_COMMAND_LIST_APPEND_GRAPH_EXP, 1'000'000, {other, 0, 0, exec}));
  EXPECT_EQ(tl_.stats().unknown_graph_replays, 2u) << "a destroyed executable graph is forgotten";
}

// A graph capture begun before the capture (on a list made before it), ended after: what was
// appended since ran nothing then; each replay runs it, after one operation that stands for
// what was recorded before.
TEST_F(DeviceTimelineTest, AGraphCaptureBegunBeforeTheCaptureRunsItsLaterAppendsAtEachReplay) {
  const uint64_t old_list = 0x1114, graph = 0x6100, exec = 0x7100;
  const StringId scale = strings_.Intern("scale");
  tl_.OnLaunch(Launch(old_list, 1'000, 0, scale));
  On(Call(XT_ZE_APPEND_MEMORY_COPY, 2'000, {old_list, 0, 0, 0xd57, 0x5c, 4096}));
  On(Call(XT_ZE_COMMAND_LIST_END_GRAPH_CAPTURE_EXP, 3'000, {old_list, 0, 0, 0, 0, graph}));
  On(Call(XT_ZE_COMMAND_LIST_INSTANTIATE_GRAPH_EXP, 4'000, {graph, 0, 0, 0, 0, exec}));
  On(Call(XT_ZE_GRAPH_DESTROY_EXP, 4'500, {graph}));
  // The list shows it is immediate: nothing it held was run by its appends.
  On(Call(XT_ZE_COMMAND_LIST_HOST_SYNCHRONIZE, 5'000, {old_list, ~0ull}));
  EXPECT_TRUE(sink_.All<DeviceOp>().empty()) << "appends made while capturing run nothing";
  for (uint64_t at : {100'000u, 200'000u}) {
    On(Call(XT_ZE_COMMAND_LIST_APPEND_GRAPH_EXP, at, {old_list, 0, 0, exec}));
    On(Call(XT_ZE_COMMAND_LIST_HOST_SYNCHRONIZE, at + 50'000, {old_list, ~0ull}));
  }
  auto ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 6u);
  for (size_t replay = 0; replay < 2; ++replay) {
    const uint64_t at = 100'000u * (replay + 1);
    EXPECT_EQ(strings_.Get(ops[3 * replay].name), kPartlyKnownGraphName);
    EXPECT_EQ(ops[3 * replay + 1].name, scale);
    EXPECT_EQ(ops[3 * replay + 2].kind, DeviceOpKind::kCopy);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(ops[3 * replay + i].queue, old_list);
      EXPECT_EQ(ops[3 * replay + i].command_list, exec);
      EXPECT_EQ(ops[3 * replay + i].execution, replay + 1);
      EXPECT_EQ(ops[3 * replay + i].submit_ns, at) << "submitted by its replay";
      EXPECT_TRUE(ops[3 * replay + i].completion_seen);
    }
  }
  EXPECT_EQ(tl_.stats().partly_known_graph_replays, 2u);
  EXPECT_EQ(tl_.stats().unknown_graph_replays, 0u);
}

// A host function is work on its list's timeline: submitted by its append, bounded by the host
// call that saw what followed it done.
TEST_F(DeviceTimelineTest, HostFunctionsRunOnTheirListsTimeline) {
  const uint64_t imm = 0x1111;
  On(Call(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, 100, {kContext, kDevice, 0, 2, 2, imm}));
  // command_list, signal_event, num_wait_events, host_function, user_data
  On(Call(XT_ZE_APPEND_HOST_FUNCTION, 1'000, {imm, 0, 0, 0x401000, 0x7ff0}));
  On(Call(XT_ZE_COMMAND_LIST_HOST_SYNCHRONIZE, 5'000, {imm, ~0ull}));
  auto ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].kind, DeviceOpKind::kHostFunction);
  EXPECT_EQ(strings_.Get(ops[0].name), "zeCommandListAppendHostFunction");
  EXPECT_EQ(ops[0].queue, imm);
  EXPECT_EQ(ops[0].submit_ns, 1'000u);
  EXPECT_LE(ops[0].end_ns, 6'000u);
}

// Intel's older name of the same call is the same work, named as called.
TEST_F(DeviceTimelineTest, HostFunctionsByTheOlderNameToo) {
  const uint64_t imm = 0x1111;
  On(Call(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, 100, {kContext, kDevice, 0, 2, 2, imm}));
  On(Call(XT_ZE_EX_APPEND_HOST_FUNCTION, 1'000, {imm, 0, 0, 0x401000, 0x7ff0}));
  On(Call(XT_ZE_COMMAND_LIST_HOST_SYNCHRONIZE, 5'000, {imm, ~0ull}));
  auto ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].kind, DeviceOpKind::kHostFunction);
  EXPECT_EQ(strings_.Get(ops[0].name), "zexCommandListAppendHostFunction");
  EXPECT_EQ(ops[0].queue, imm);
  EXPECT_EQ(ops[0].submit_ns, 1'000u);
}

// zeCommandListHostSynchronize and zeCommandListImmediateAppendCommandListsExp take immediate
// lists only: a list made before the capture shows what it is by them.
TEST_F(DeviceTimelineTest, CallsOnImmediateListsOnlyClassifyAListMadeBeforeTheCapture) {
  const uint64_t old_list = 0x5555, exec_list = 0x5556;
  const StringId scale = strings_.Intern("scale");
  tl_.OnLaunch(Launch(old_list, 1'000, 0, scale));
  On(Call(XT_ZE_COMMAND_LIST_HOST_SYNCHRONIZE, 5'000, {old_list, ~0ull}));
  tl_.OnLaunch(Launch(exec_list, 6'000, 0, scale));
  On(Call(XT_ZE_COMMAND_LIST_IMMEDIATE_APPEND_COMMAND_LISTS_EXP, 7'000, {exec_list, 0, 0, 0, 0}));
  On(Call(XT_ZE_EXECUTABLE_GRAPH_DESTROY_EXP, 8'000, {0x7000}));
  tl_.Finish();
  auto ops = sink_.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].queue, old_list);
  EXPECT_TRUE(ops[0].completion_seen);
  EXPECT_LE(ops[0].end_ns, 6'000u);
  EXPECT_EQ(ops[1].queue, exec_list);
  EXPECT_EQ(ops[1].submit_ns, 6'000u) << "submitted when appended";
  EXPECT_EQ(tl_.stats().unclassified_dropped, 0u);
}

// Two GPUs whose clocks are 10^12 ticks apart; the traced process lists them in the other
// order than xtrace does. Its zeDeviceGetProperties says which is which: a kernel on its
// first device (xtrace's device 1) is placed by device 1's clock.
TEST(DeviceMatching, AProcessDeviceIsMatchedByUuidNotByPosition) {
  StringTable strings;
  Sink sink;
  ZeDeviceTable devices;
  DeviceTimeline tl{strings, sink, devices};
  constexpr uint64_t kApart = 1'000'000'000'000;
  const DeviceUuid uuid0{0x1111, 0xa}, uuid1{0x2222, 0xb};
  devices.set_known_devices(2);
  devices.set_known_uuids({uuid0, uuid1});
  for (uint32_t d = 0; d < 2; ++d) tl.OnDevice(DeviceInfo{d, strings.Intern("sim"), kHz, 32});
  auto read_clocks = [&](uint64_t ns) {
    tl.OnClockReading(0, TicksAt(ns), ns);
    tl.OnClockReading(1, TicksAt(ns) + kApart, ns);
    tl.EmitCovered();
  };
  read_clocks(1'000'000'000);
  const uint64_t first = 0xd1a, second = 0xd0a;  // the process's handles, in its order
  tl.OnCall(Call(XT_ZE_DEVICE_GET, 0, {0xd1, 2, first, second}), nullptr);
  tl.OnCall(Call(XT_ZE_DEVICE_GET_PROPERTIES, 10, {first, uuid1.lo, uuid1.hi}), nullptr);
  tl.OnCall(Call(XT_ZE_DEVICE_GET_PROPERTIES, 20, {second, uuid0.lo, uuid0.hi}), nullptr);
  EXPECT_EQ(devices.IndexOf(kPid, first), 1u);
  EXPECT_EQ(devices.IndexOf(kPid, second), 0u);

  tl.OnCall(Call(XT_ZE_EVENT_POOL_CREATE, 30, {kContext, kPoolTimestamps, 8, 1, 0, 0x9001}), nullptr);
  tl.OnCall(Call(XT_ZE_EVENT_CREATE, 40, {0x9001, 0, 4, 4, 0, 0xe0}), nullptr);
  const uint64_t imm = 0x1111;
  tl.OnCall(Call(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, 1'000'000'100, {kContext, first, 0, 0, 2, imm}),
            nullptr);
  tl.OnLaunch(Launch(imm, 1'000'001'000, 0xe0, strings.Intern("gemm")));
  tl.OnCall(Call(XT_ZE_EVENT_HOST_SYNCHRONIZE, 1'000'005'000, {0xe0, ~0ull}), nullptr);
  tl.OnCall(Call(XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP, 1'000'040'000,
                 {0xe0, (TicksAt(1'000'010'000) + kApart) & 0xffffffff,
                  (TicksAt(1'000'030'000) + kApart) & 0xffffffff}),
            nullptr);
  read_clocks(2'000'000'000);
  auto ops = sink.All<DeviceOp>();
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].device, 1u);
  EXPECT_TRUE(ops[0].measured);
  EXPECT_NEAR(double(ops[0].start_ns), 1'000'010'000.0, 60) << "device 1's clock, not device 0's";
  EXPECT_NEAR(double(ops[0].end_ns), 1'000'030'000.0, 60);
  EXPECT_TRUE(tl.stats().unmatched_devices.empty());
}

TEST(DeviceMatching, AUuidNoneOfXtracesDevicesHasIsNamedOnce) {
  StringTable strings;
  Sink sink;
  ZeDeviceTable devices;
  DeviceTimeline tl{strings, sink, devices};
  devices.set_known_devices(2);
  devices.set_known_uuids({{1, 1}, {2, 2}});
  tl.OnCall(Call(XT_ZE_DEVICE_GET, 0, {0xd1, 2, 0xd0a, 0xd1a}), nullptr);
  const DeviceUuid stranger{0x0706050403020100, 0x0f0e0d0c0b0a0908};
  for (int i = 0; i < 2; ++i)
    tl.OnCall(Call(XT_ZE_DEVICE_GET_PROPERTIES, 10, {0xd1a, stranger.lo, stranger.hi}), nullptr);
  EXPECT_EQ(devices.IndexOf(kPid, 0xd1a), kUnknownDevice) << "not its position";
  EXPECT_EQ(devices.IndexOf(kPid, 0xd0a), 0u) << "never asked: matched by position";
  EXPECT_EQ(tl.stats().unmatched_devices,
            std::vector<std::string>{"pid 100: 000102030405060708090a0b0c0d0e0f"});
}

TEST(DeviceMatching, AForeignDeviceLeavesNoOnlyDeviceToFallBackOn) {
  ZeDeviceTable devices;
  devices.set_known_devices(1);
  devices.set_known_uuids({{1, 1}});
  EXPECT_EQ(devices.IndexOf(kPid, 0xbef0), 0u) << "one device: an unseen handle is it";
  EXPECT_FALSE(devices.LearnUuid(kPid, 0xd1a, {2, 2}));
  EXPECT_EQ(devices.IndexOf(kPid, 0xd1a), kUnknownDevice);
  EXPECT_EQ(devices.Fallback(), kUnknownDevice);
}

TEST(DeviceMatching, WithoutXtracesUuidsPositionsStand) {
  ZeDeviceTable devices;
  devices.set_known_devices(2);
  devices.Learn(kPid, 0xd1a, 1);
  EXPECT_TRUE(devices.LearnUuid(kPid, 0xd1a, {5, 5}));
  EXPECT_EQ(devices.IndexOf(kPid, 0xd1a), 1u);
}

}  // namespace
}  // namespace xtrace
