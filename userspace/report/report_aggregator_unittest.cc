// Tests of ReportAggregator on constructed event streams: host calls with failures, device
// operations with measured and estimated times kept apart, submission latency, nested ranges
// and the device time they enclose, sections, and the time and process selection.
#include "report/report_aggregator.h"

#include <gtest/gtest.h>

#include <map>

#include "xtrace/records.h"

namespace xtrace::report {
namespace {

constexpr uint64_t kT0 = 1'000'000'000'000;

ApiCall Call(uint16_t fn, uint32_t tid, uint64_t start, uint64_t end, int32_t result = 0) {
  ApiCall c;
  c.pid = 10;
  c.tid = tid;
  c.fn = fn;
  c.start_ns = kT0 + start;
  c.end_ns = kT0 + end;
  c.result = result;
  return c;
}

KernelLaunch Launch(uint32_t tid, uint64_t start, uint64_t end, uint8_t kind = 0) {
  KernelLaunch l;
  l.pid = 10;
  l.tid = tid;
  l.start_ns = kT0 + start;
  l.end_ns = kT0 + end;
  l.launch_kind = kind;
  return l;
}

DeviceOp Op(StringId name, uint64_t start, uint64_t end, bool measured, uint32_t append_tid = 1,
            uint64_t append = 0, uint64_t submit = 0) {
  DeviceOp op;
  op.pid = 10;
  op.device = 0;
  op.queue = 0xabc;
  op.name = name;
  op.start_ns = kT0 + start;
  op.end_ns = kT0 + end;
  op.measured = measured;
  op.append_tid = append_tid;
  op.append_ns = append ? kT0 + append : 0;
  op.submit_ns = submit ? kT0 + submit : 0;
  return op;
}

IttTask Task(StringId domain, StringId name, uint32_t tid, uint64_t start, uint64_t end) {
  IttTask t;
  t.pid = 10;
  t.tid = tid;
  t.end_tid = tid;
  t.domain = domain;
  t.name = name;
  t.start_ns = kT0 + start;
  t.end_ns = kT0 + end;
  return t;
}

const SectionStats& Only(const ReportAggregator& a) {
  EXPECT_EQ(a.sections().size(), 1u);
  return a.sections().begin()->second;
}

TEST(ReportAggregatorTest, HostCallsCountTimeFailuresAndTheThreadsSpan) {
  StringTable strings;
  ReportAggregator a({}, "");
  a.Add(Call(XT_ZE_COMMAND_QUEUE_SYNCHRONIZE, 1, 0, 100), strings);
  a.Add(Call(XT_ZE_COMMAND_QUEUE_SYNCHRONIZE, 1, 200, 500), strings);
  a.Add(Call(XT_ZE_COMMAND_QUEUE_SYNCHRONIZE, 2, 1000, 1050, 0x78000004), strings);  // invalid arg
  a.Add(Launch(1, 600, 1000, XT_LAUNCH_COOPERATIVE), strings);
  a.Finish();
  const SectionStats& s = Only(a);
  ASSERT_EQ(s.host_calls.size(), 2u);
  const HostCallRow& sync = s.host_calls.at("zeCommandQueueSynchronize");
  EXPECT_EQ(sync.time.count, 3u);
  EXPECT_EQ(sync.time.total_ns, 450u);
  EXPECT_EQ(sync.time.min_ns, 50u);
  EXPECT_EQ(sync.time.max_ns, 300u);
  EXPECT_EQ(sync.failed, 1u);
  EXPECT_EQ(sync.failures.at("ZE_RESULT_ERROR_INVALID_ARGUMENT"), 1u);
  EXPECT_EQ(s.host_calls.at("zeCommandListAppendLaunchCooperativeKernel").time.total_ns, 400u);
  // Thread 1 from 0 to 1000, thread 2 from 1000 to 1050.
  EXPECT_EQ(s.thread_time_ns, 1050u);
}

// An execution of a list neither created nor reset in the log ran what it held at the attach:
// counted. A learned creation (made before the attach) is no recording, and is not a host call.
TEST(ReportAggregatorTest, ExecutionsOfListsRecordedBeforeTheAttachAreCounted) {
  StringTable strings;
  ReportAggregator a({}, "");
  auto with = [](ApiCall c, std::initializer_list<uint64_t> args, bool learned = false) {
    int i = 0;
    for (uint64_t v : args) c.arg[i++] = v;
    c.learned = learned;
    return c;
  };
  constexpr uint64_t kOld = 0xa, kNew = 0xb, kReset = 0xc, kQueue = 0xe;
  a.Add(with(Call(XT_ZE_COMMAND_LIST_CREATE, 1, 0, 10), {0, 0, 0, 0, 0, kOld}, true), strings);
  a.Add(with(Call(XT_ZE_COMMAND_LIST_CREATE, 1, 20, 30), {0, 0, 0, 0, 0, kNew}), strings);
  a.Add(with(Call(XT_ZE_COMMAND_LIST_RESET, 1, 40, 50), {kReset}), strings);
  for (uint64_t list : {kOld, kNew, kReset, kOld})
    a.Add(with(Call(XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS, 1, 60, 70), {kQueue, 0, 1, list}), strings);
  a.Finish();
  EXPECT_EQ(a.executions_recorded_before(), 2u);
  EXPECT_EQ(Only(a).host_calls.at("zeCommandListCreate").time.count, 1u) << "the learned one is not the process's";
}

TEST(ReportAggregatorTest, UnfinishedCallsHaveARowOfTheirOwn) {
  StringTable strings;
  ReportAggregator a({}, "");
  a.Add(Call(XT_ZE_EVENT_HOST_SYNCHRONIZE, 1, 0, 100), strings);
  UnfinishedCall u;
  u.pid = 10;
  u.tid = 2;
  u.start_ns = kT0 + 50;
  u.end_ns = kT0 + 5050;
  u.function = strings.Intern("zeEventHostSynchronize");
  u.signal = 9;
  a.Add(u, strings);
  a.Finish();
  const SectionStats& s = Only(a);
  ASSERT_EQ(s.host_calls.size(), 2u);
  EXPECT_EQ(s.host_calls.at("zeEventHostSynchronize").time.total_ns, 100u);
  const HostCallRow& unfinished = s.host_calls.at("zeEventHostSynchronize (unfinished)");
  EXPECT_EQ(unfinished.time.count, 1u);
  EXPECT_EQ(unfinished.time.total_ns, 5000u);
  EXPECT_EQ(unfinished.failed, 0u);
}

// Rows are found by the name's id or text address once and remembered: names made for one
// event only (an unfinished call's) that may reuse one address still get their own rows, and a
// process that says its rank partway counts its kernels under it from then on.
TEST(ReportAggregatorTest, RememberedRowsFollowTheNamesAndTheRanks) {
  StringTable strings;
  const StringId sync = strings.Intern("zeEventHostSynchronize");
  const StringId wait = strings.Intern("zeFenceHostSynchronize");
  const StringId gemm = strings.Intern("gemm");
  const StringId copy = strings.Intern("copy");
  ReportAggregator a({}, "");
  for (int i = 0; i < 6; ++i) {
    UnfinishedCall u;
    u.pid = 10;
    u.tid = 2;
    u.start_ns = kT0 + 100 * i;
    u.end_ns = u.start_ns + 10 + i;
    u.function = i % 2 ? wait : sync;
    a.Add(u, strings);
  }
  a.Add(Op(gemm, 1000, 1100, true), strings);
  a.Add(Op(copy, 1200, 1250, true), strings);
  a.Add(ProcessInfo{.pid = 10, .rank = 3}, strings);
  a.Add(Op(gemm, 2000, 2300, true), strings);
  a.Add(Op(gemm, 2400, 2500, true), strings);
  a.Finish();
  const SectionStats& s = Only(a);
  EXPECT_EQ(s.host_calls.at("zeEventHostSynchronize (unfinished)").time.total_ns, 10u + 12u + 14u);
  EXPECT_EQ(s.host_calls.at("zeFenceHostSynchronize (unfinished)").time.total_ns, 11u + 13u + 15u);
  EXPECT_EQ(s.device_ops.at("gemm").measured.count, 3u);
  EXPECT_EQ(s.device_ops.at("copy").measured.total_ns, 50u);
  EXPECT_EQ(a.rank_totals().at("").kernel_ns.at("gemm"), 100u);
  EXPECT_EQ(a.rank_totals().at("rank 3").kernel_ns.at("gemm"), 400u);
  EXPECT_EQ(a.rank_totals().at("").kernel_ns.count("copy"), 1u);
}

TEST(ReportAggregatorTest, DeviceOperationsKeepEstimatedTimeApartAndMeasureSubmission) {
  StringTable strings;
  const StringId gemm = strings.Intern("gemm");
  const StringId copy = strings.Intern("zeCommandListAppendMemoryCopy");
  ReportAggregator a({}, "");
  a.Add(Op(gemm, 1000, 3000, true, 1, 100, 400), strings);
  a.Add(Op(gemm, 4000, 5000, true, 1, 200, 3500), strings);
  a.Add(Op(gemm, 6000, 16000, false), strings);  // a bound, never a timing
  DeviceOp c = Op(copy, 20000, 22000, true, 1, 19000, 19000);
  c.kind = DeviceOpKind::kCopy;
  c.bytes = 4000;
  a.Add(c, strings);
  a.Finish();
  const SectionStats& s = Only(a);
  const DeviceOpRow& g = s.device_ops.at("gemm");
  EXPECT_EQ(g.measured.count, 2u);
  EXPECT_EQ(g.measured.total_ns, 3000u);
  EXPECT_EQ(g.estimated.count, 1u);
  EXPECT_EQ(g.estimated.total_ns, 10000u);
  EXPECT_EQ(g.append_to_submit.total_ns, 300u + 3300u);
  EXPECT_EQ(g.submit_to_start.total_ns, 600u + 500u);
  const DeviceOpRow& cp = s.device_ops.at("zeCommandListAppendMemoryCopy");
  EXPECT_EQ(cp.kind, DeviceOpKind::kCopy);
  EXPECT_EQ(cp.measured_bytes, 4000u);
}

TEST(ReportAggregatorTest, RangesCountSelfTimeAndTheDeviceTimeOfTheirLaunches) {
  StringTable strings;
  const StringId domain = strings.Intern("PyTorch");
  const StringId outer = strings.Intern("aten::linear");
  const StringId inner = strings.Intern("aten::matmul");
  const StringId kernel = strings.Intern("gemm");
  ReportAggregator a({}, "");
  // Tasks arrive when they end: two inner ones, then the outer one around them.
  a.Add(Task(domain, inner, 1, 100, 300), strings);
  a.Add(Op(kernel, 1000, 1700, true, 1, 150, 150), strings);  // appended in the first inner
  a.Add(Task(domain, inner, 1, 400, 500), strings);
  a.Add(Task(domain, outer, 1, 0, 1000), strings);
  // Logged after every range ended, appended inside the second inner range.
  a.Add(Op(kernel, 2000, 2050, true, 1, 450, 450), strings);
  // Another thread's range does not nest in thread 1's.
  a.Add(Task(domain, inner, 2, 50, 950), strings);
  a.Finish();
  const SectionStats& s = Only(a);
  const RangeRow& o = s.ranges.at({"PyTorch", "aten::linear"});
  const RangeRow& i = s.ranges.at({"PyTorch", "aten::matmul"});
  EXPECT_EQ(o.total.total_ns, 1000u);
  EXPECT_EQ(o.self_ns, 700u);
  EXPECT_EQ(i.total.count, 3u);
  EXPECT_EQ(i.total.total_ns, 200u + 100u + 900u);
  EXPECT_EQ(i.self_ns, 1200u);
  EXPECT_EQ(o.device_ns, 750u);
  EXPECT_EQ(i.device_ns, 750u);
  EXPECT_EQ(o.label, "PyTorch/aten::linear");
}

TEST(ReportAggregatorTest, SectionsByProcessThreadAndDevice) {
  StringTable strings;
  const StringId k = strings.Intern("k");
  AggregateOptions thread_options;
  thread_options.by = GroupBy::kThread;
  ReportAggregator by_thread(thread_options, "");
  by_thread.Add(Call(XT_ZE_COMMAND_QUEUE_SYNCHRONIZE, 1, 0, 10), strings);
  by_thread.Add(Call(XT_ZE_COMMAND_QUEUE_SYNCHRONIZE, 2, 0, 10), strings);
  by_thread.Add(ProcessInfo{.pid = 10, .comm = strings.Intern("python3")}, strings);
  by_thread.Finish();
  ASSERT_EQ(by_thread.sections().size(), 2u);
  EXPECT_EQ(by_thread.Label(by_thread.sections().begin()->first), "pid 10 (python3) tid 1");

  AggregateOptions device_options;
  device_options.by = GroupBy::kDevice;
  ReportAggregator by_device(device_options, "");
  by_device.Add(Call(XT_ZE_COMMAND_QUEUE_SYNCHRONIZE, 1, 0, 10), strings);
  DeviceOp op = Op(k, 0, 10, true);
  op.device = 1;
  by_device.Add(op, strings);
  by_device.Finish();
  std::vector<std::string> labels;
  for (const auto& [key, s] : by_device.sections()) labels.push_back(by_device.Label(key));
  EXPECT_EQ(labels, (std::vector<std::string>{"device 1", "host calls"}));

  // A node's log with two ranks: a section each, and the events of a process that recorded no
  // rank (pid 12) in the log's rank's section (the first a process recorded).
  AggregateOptions rank_options;
  rank_options.by = GroupBy::kRank;
  ReportAggregator by_rank(rank_options, "log 0");
  by_rank.Add(ProcessInfo{.pid = 10, .rank = 3}, strings);
  by_rank.Add(ProcessInfo{.pid = 11, .rank = 4}, strings);
  auto call_of = [](uint32_t pid, uint64_t start, uint64_t end) {
    ApiCall c = Call(XT_ZE_COMMAND_QUEUE_SYNCHRONIZE, pid, start, end);
    c.pid = pid;
    return c;
  };
  by_rank.Add(call_of(10, 0, 10), strings);
  by_rank.Add(call_of(11, 0, 20), strings);
  by_rank.Add(call_of(11, 30, 50), strings);
  by_rank.Add(call_of(12, 0, 5), strings);
  by_rank.Finish();
  by_rank.NameUnrankedSection("rank 3");
  std::map<std::string, uint64_t> calls;
  for (const auto& [key, s] : by_rank.sections())
    calls[by_rank.Label(key)] = s.host_calls.at("zeCommandQueueSynchronize").time.count;
  EXPECT_EQ(calls, (std::map<std::string, uint64_t>{{"rank 3", 2}, {"rank 4", 2}}));
}

// A thread of a process attached mid-run held by xtrace inside its launch (asking about the
// kernel and list made before the attach: a learned creation each, both over the hold). The
// launch's time is its own, without the hold; a thread not held keeps its whole span; the
// engine's gap the hold caused says so, not "waiting"; the hold is counted once.
TEST(ReportAggregatorTest, TimeXtraceHeldAThreadIsNotTheProgramsTime) {
  StringTable strings;
  const StringId k = strings.Intern("gemm"), domain = strings.Intern("PyTorch"), step = strings.Intern("step");
  ReportAggregator a({}, "");
  // Thread 1's launch runs 900..101100, held 1000..101000 (as the capture writes them: the
  // hold's records as it ends, the launch as it returns).
  KernelCreate learned;
  learned.pid = 10;
  learned.tid = 1;
  learned.start_ns = kT0 + 1000;
  learned.end_ns = kT0 + 101000;
  learned.kernel = 0x5;
  learned.learned = true;
  a.Add(learned, strings);
  ApiCall list = Call(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, 1, 1000, 101000);
  list.learned = true;
  a.Add(list, strings);
  a.Add(Launch(1, 900, 101100), strings);
  a.Add(Launch(2, 1000, 101100), strings);  // thread 2 was not held
  a.Add(Task(domain, step, 1, 800, 101200), strings);  // a range around the held launch
  // The engine: one operation before, then the launch's, which started once the hold ended.
  a.Add(Op(k, 0, 500, true, 1, 100, 100), strings);
  DeviceOp after = Op(k, 101200, 101300, true, 1, 900, 900);
  after.submit_tid = 1;
  a.Add(after, strings);
  a.Finish();
  const SectionStats& s = Only(a);
  const HostCallRow& launches = s.host_calls.at("zeCommandListAppendLaunchKernel");
  EXPECT_EQ(launches.time.count, 2u);
  EXPECT_EQ(launches.time.min_ns, 200u) << "thread 1's launch without the 100 us hold";
  EXPECT_EQ(launches.time.max_ns, 100100u) << "thread 2's whole launch";
  EXPECT_EQ(s.host_calls.count("zeCommandListCreateImmediate"), 0u) << "the learned list is no call";
  EXPECT_EQ(s.ranges.at({"PyTorch", "step"}).total.total_ns, 400u) << "the range without the hold";
  // Thread 1 from its launch's start to its end less the hold, thread 2 from 1000 to 101100.
  EXPECT_EQ(s.thread_time_ns, 200u + 100100u);
  EXPECT_EQ(a.holds().holds(), 1u) << "two records of one hold";
  EXPECT_EQ(a.holds().total_ns(), 100000u);

  ASSERT_EQ(s.engines.size(), 1u);
  const EngineIdle& idle = s.engines.begin()->second.idle;
  // The gap 500..101200: submitted at 900 (launch 400 ns), held 100 us, then 300 ns waiting.
  EXPECT_EQ(idle.idle().launch_ns, 400u);
  EXPECT_EQ(idle.idle().held_ns, 100000u);
  EXPECT_EQ(idle.idle().waiting_ns, 300u);
  EXPECT_EQ(idle.idle().sync_ns + idle.idle().unknown_ns, 0u);
  EXPECT_EQ(IdleVerdict(idle.busy_ns(), idle.idle()), "launch-bound") << "held time is no part of it";
  ASSERT_EQ(idle.largest_gaps().size(), 1u);
  const EngineGap& gap = idle.largest_gaps()[0];
  EXPECT_EQ(gap.cause, kHeldCause);
  ASSERT_EQ(gap.host_activity.size(), 3u);
  EXPECT_EQ(gap.host_activity[0].name, kHeldCause);
  EXPECT_EQ(gap.host_activity[0].overlap_ns, 100000u);
  // The range 800..101200 and the launch 900..101100, each without the hold.
  EXPECT_EQ(gap.host_activity[1].name, "PyTorch/step");
  EXPECT_EQ(gap.host_activity[1].overlap_ns, 400u);
  EXPECT_EQ(gap.host_activity[2].name, "zeCommandListAppendLaunchKernel");
  EXPECT_EQ(gap.host_activity[2].overlap_ns, 200u);
}

TEST(ReportAggregatorTest, TheWindowAndPidSelectByStart) {
  StringTable strings;
  AggregateOptions options;
  options.from_ns = kT0 + 100;
  options.to_ns = kT0 + 200;
  options.pids = {10};
  ReportAggregator a(options, "");
  a.Add(Call(XT_ZE_COMMAND_QUEUE_SYNCHRONIZE, 1, 50, 150), strings);   // starts before
  a.Add(Call(XT_ZE_COMMAND_QUEUE_SYNCHRONIZE, 1, 100, 150), strings);  // in
  a.Add(Call(XT_ZE_COMMAND_QUEUE_SYNCHRONIZE, 1, 200, 250), strings);  // at the end: out
  ApiCall other = Call(XT_ZE_COMMAND_QUEUE_SYNCHRONIZE, 1, 120, 130);
  other.pid = 11;
  a.Add(other, strings);
  a.Finish();
  EXPECT_EQ(Only(a).host_calls.at("zeCommandQueueSynchronize").time.count, 1u);
}

}  // namespace
}  // namespace xtrace::report
