// Tests of the engine utilization model on constructed scenarios whose idle causes are known
// by construction: a launch-bound loop of tiny kernels, a sync-heavy loop, a mix of both,
// estimated operations, out-of-order arrival, the largest gaps and latency percentiles.
#include "report/engine_idle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace xtrace::report {
namespace {

constexpr uint64_t kT0 = 5'000'000'000;
constexpr uint64_t kKernelNs = 10'000;
constexpr uint64_t kLatencyNs = 5'000;  // submit -> start

struct Scenario {
  std::vector<DeviceOp> ops;
  IdleSplit truth;
  uint64_t busy = 0;
};

// Kernel k is submitted at `submit`; when `synced`, the host waits for it (wakes `wake` ns
// after it ends) before submitting the next one, else it submits the next `host_gap` ns after
// this one ends.
Scenario Build(size_t n, const std::vector<bool>& synced_pattern, uint64_t host_gap = 35'000,
               uint64_t wake = 20'000, uint64_t turnaround = 10'000) {
  Scenario s;
  uint64_t submit = kT0;
  for (size_t k = 0; k < n; ++k) {
    const bool synced = synced_pattern[k % synced_pattern.size()];
    DeviceOp op;
    op.pid = 1;
    op.queue = 0x10;
    op.id = k + 1;
    op.measured = true;
    op.submit_tid = 7;
    op.submit_ns = submit;
    op.append_ns = submit;
    op.start_ns = submit + kLatencyNs;
    op.end_ns = op.start_ns + kKernelNs;
    s.busy += kKernelNs;
    uint64_t next_submit;
    if (synced) {
      op.sync_tid = 7;
      op.sync_ns = op.end_ns + wake;
      next_submit = op.sync_ns + turnaround;
    } else {
      op.sync_ns = 0;
      next_submit = op.end_ns + host_gap;
    }
    if (k + 1 < n) {
      (synced ? s.truth.sync_ns : s.truth.launch_ns) += next_submit - op.end_ns;
      s.truth.waiting_ns += kLatencyNs;
    }
    s.ops.push_back(op);
    submit = next_submit;
  }
  return s;
}

EngineIdle RunEngine(const std::vector<DeviceOp>& ops, const RecentHostActivity* activity = nullptr) {
  EngineIdle e;
  for (const DeviceOp& op : ops) e.Add(op, activity);
  e.Finish(activity);
  return e;
}

void ExpectWithinOnePercent(uint64_t actual, uint64_t expected, const char* what) {
  EXPECT_NEAR(double(actual), double(expected), 0.01 * double(expected) + 1) << what;
}

void ExpectSplit(const EngineIdle& e, const Scenario& s) {
  ExpectWithinOnePercent(e.idle().launch_ns, s.truth.launch_ns, "launch");
  ExpectWithinOnePercent(e.idle().sync_ns, s.truth.sync_ns, "sync");
  ExpectWithinOnePercent(e.idle().waiting_ns, s.truth.waiting_ns, "waiting");
  EXPECT_EQ(e.idle().unknown_ns, 0u);
  EXPECT_EQ(e.busy_ns(), s.busy);
  EXPECT_EQ(e.busy_ns() + e.idle().total(), e.span_ns());
}

TEST(EngineIdleTest, ALaunchBoundLoopOfTinyKernelsIsLaunchBound) {
  const Scenario s = Build(1000, {false});
  const EngineIdle e = RunEngine(s.ops);
  ExpectSplit(e, s);
  EXPECT_EQ(e.idle().sync_ns, 0u);
  EXPECT_EQ(IdleVerdict(e.busy_ns(), e.idle()), "launch-bound");
  EXPECT_EQ(e.operations(), 1000u);
}

TEST(EngineIdleTest, ASyncHeavyLoopIsSyncBound) {
  const Scenario s = Build(1000, {true});
  const EngineIdle e = RunEngine(s.ops);
  ExpectSplit(e, s);
  EXPECT_EQ(e.idle().launch_ns, 0u);
  EXPECT_EQ(IdleVerdict(e.busy_ns(), e.idle()), "sync-bound");
}

TEST(EngineIdleTest, AMixedLoopSplitsAsConstructed) {
  // Three launch-bound gaps for every sync, with different host delays.
  const Scenario s = Build(2000, {false, false, true, false}, 12'000, 30'000, 4'000);
  const EngineIdle e = RunEngine(s.ops);
  ExpectSplit(e, s);
  EXPECT_GT(e.idle().launch_ns, 0u);
  EXPECT_GT(e.idle().sync_ns, 0u);
}

// A few operations without timestamps do not turn the verdict "estimated": it comes from the
// measured part, and how much was estimated is counted apart.
TEST(EngineIdleTest, TheVerdictComesFromTheMeasuredPartOfAMixedEngine) {
  Scenario launch = Build(1000, {false});
  Scenario sync = Build(1000, {true});
  for (size_t k = 0; k < 1000; k += 4) launch.ops[k].measured = sync.ops[k].measured = false;
  const EngineIdle l = RunEngine(launch.ops), y = RunEngine(sync.ops);
  // The estimated operations' share of the span outweighs a cause (which once made the
  // verdict "unknown"), yet more than half of the span was measured.
  EXPECT_GT(l.idle().unknown_ns, l.idle().launch_ns);
  EXPECT_GT(y.idle().unknown_ns, y.idle().sync_ns + y.idle().waiting_ns);
  EXPECT_LT(l.idle().unknown_ns * 2, l.span_ns());
  EXPECT_LT(y.idle().unknown_ns * 2, y.span_ns());
  EXPECT_EQ(IdleVerdict(l.busy_ns(), l.idle()), "launch-bound");
  EXPECT_EQ(IdleVerdict(y.busy_ns(), y.idle()), "sync-bound");
  EXPECT_EQ(l.estimated_operations(), 250u);
  EXPECT_EQ(l.operations(), 1000u);

  EXPECT_EQ(IdleVerdict(0, IdleSplit{}), "");
  // Busy: idle under a tenth of the measured part, whatever the unknown time under half.
  EXPECT_EQ(IdleVerdict(1000, IdleSplit{.launch_ns = 50, .unknown_ns = 1000}), "busy");
  EXPECT_EQ(IdleVerdict(1000, IdleSplit{.launch_ns = 200, .sync_ns = 100, .unknown_ns = 1300}),
            "launch-bound");
}

// An engine whose span is mostly around operations without timestamps gets no verdict of
// busy or bound: it says its time was estimated. Measured-busy and idle engines keep theirs.
TEST(EngineIdleTest, TheVerdictSaysWhenAnEnginesTimeWasMostlyEstimated) {
  // Measured and busy: long kernels back to back, each submitted well before it starts.
  std::vector<DeviceOp> back_to_back = Build(100, {false}).ops;
  for (size_t k = 0; k < back_to_back.size(); ++k) {
    DeviceOp& op = back_to_back[k];
    op.submit_ns = op.append_ns = kT0;
    op.start_ns = kT0 + 1'000 + k * 101'000;
    op.end_ns = op.start_ns + 100'000;
  }
  const EngineIdle busy = RunEngine(back_to_back);
  EXPECT_EQ(busy.idle().unknown_ns, 0u);
  EXPECT_EQ(IdleVerdict(busy.busy_ns(), busy.idle()), "busy");

  // Measured and idle: a loop of tiny kernels the host launches late.
  const EngineIdle idle = RunEngine(Build(1000, {false}).ops);
  EXPECT_LT(idle.busy_ns() * 4, idle.span_ns());
  EXPECT_EQ(IdleVerdict(idle.busy_ns(), idle.idle()), "launch-bound");

  // Mostly estimated: one operation in 40 measured, so that no gap lies between two measured
  // ones. The measured part is its busy time alone (a few % of the span), which once read
  // "busy".
  Scenario sparse = Build(1000, {false});
  for (size_t k = 0; k < 1000; ++k) sparse.ops[k].measured = k % 40 == 0;
  const EngineIdle mostly = RunEngine(sparse.ops);
  EXPECT_EQ(mostly.idle().launch_ns + mostly.idle().sync_ns + mostly.idle().waiting_ns, 0u);
  EXPECT_LT(mostly.busy_ns() * 20, mostly.span_ns());
  EXPECT_EQ(IdleVerdict(mostly.busy_ns(), mostly.idle()), kVerdictMostlyEstimated);
  // Every third estimated: 60% of the span is around them, more than the measured part.
  Scenario third = Build(1000, {false});
  for (size_t k = 0; k < 1000; k += 3) third.ops[k].measured = false;
  const EngineIdle t = RunEngine(third.ops);
  EXPECT_GT(t.idle().unknown_ns * 2, t.span_ns());
  EXPECT_EQ(IdleVerdict(t.busy_ns(), t.idle()), kVerdictMostlyEstimated);
  // The report's Busy 2.4% / Est. 97.6%.
  EXPECT_EQ(IdleVerdict(24, IdleSplit{.unknown_ns = 976}), kVerdictMostlyEstimated);
  EXPECT_EQ(IdleVerdict(500, IdleSplit{.launch_ns = 1, .unknown_ns = 499}), "busy");

  // Nothing measured.
  for (DeviceOp& op : sparse.ops) op.measured = false;
  const EngineIdle none = RunEngine(sparse.ops);
  EXPECT_EQ(IdleVerdict(none.busy_ns(), none.idle()), kVerdictEstimated);
  EXPECT_EQ(none.estimated_operations(), 1000u);
}

TEST(EngineIdleTest, OperationsArrivingOutOfOrderGiveTheSameAnswer) {
  const Scenario s = Build(3000, {false, true});
  std::vector<DeviceOp> shuffled = s.ops;
  std::mt19937 rng(42);
  // Shuffle within blocks of 64: operations are logged when their completion is seen, a
  // little out of start order, never far.
  for (size_t i = 0; i < shuffled.size(); i += 64) {
    std::shuffle(shuffled.begin() + i, shuffled.begin() + std::min(i + 64, shuffled.size()), rng);
  }
  const EngineIdle e = RunEngine(shuffled);
  ExpectSplit(e, s);
}

TEST(EngineIdleTest, EstimatedOperationsMakeTheirGapsAndSpanUnknown) {
  Scenario s = Build(3, {false});
  s.ops[1].measured = false;
  const EngineIdle e = RunEngine(s.ops);
  EXPECT_EQ(e.busy_ns(), 2 * kKernelNs);
  // Both gaps touch the estimated operation; its own span is not busy time either.
  EXPECT_EQ(e.idle().unknown_ns, 2 * (35'000 + kLatencyNs) + kKernelNs);
  EXPECT_EQ(e.idle().launch_ns, 0u);
  EXPECT_EQ(e.busy_ns() + e.idle().total(), e.span_ns());
}

// A regular command list's operations without timestamps are bounded by its execution
// (submission to completion seen), and its measured kernels run inside that bound: their
// measured time is busy, only the rest of the bound unknown.
TEST(EngineIdleTest, MeasuredTimeUnderAnEstimatedBoundIsBusy) {
  Scenario s = Build(3, {false});
  DeviceOp bound = s.ops[1];
  bound.id = 100;
  bound.measured = false;
  bound.start_ns = s.ops[1].submit_ns;      // submitted with the measured kernel
  bound.end_ns = s.ops[1].end_ns + 20'000;  // seen complete after it
  s.ops.insert(s.ops.begin() + 1, bound);
  const EngineIdle e = RunEngine(s.ops);
  EXPECT_EQ(e.busy_ns(), 3 * kKernelNs);
  // The gap before the bound and the bound's own span less the kernel inside it; after it,
  // between two measured kernels, the host was late and then the kernel waited.
  EXPECT_EQ(e.idle().unknown_ns, 35'000 + (kLatencyNs + kKernelNs + 20'000) - kKernelNs);
  EXPECT_EQ(e.idle().launch_ns, 35'000 - 20'000);
  EXPECT_EQ(e.idle().waiting_ns, kLatencyNs);
  EXPECT_EQ(e.busy_ns() + e.idle().total(), e.span_ns());
  EXPECT_EQ(e.estimated_operations(), 1u);
}

TEST(EngineIdleTest, LargestGapsSayWhatTheSubmittingThreadDid) {
  Scenario s = Build(10, {false});
  // Make the gap before operation 5 the largest: its submission comes 1 ms late.
  for (size_t k = 5; k < s.ops.size(); ++k) {
    for (uint64_t* t : {&s.ops[k].submit_ns, &s.ops[k].append_ns, &s.ops[k].start_ns, &s.ops[k].end_ns}) {
      *t += 1'000'000;
    }
  }
  RecentHostActivity activity;
  const std::string compile = "zeModuleCreate", launch = "zeCommandListAppendLaunchKernel";
  const uint64_t gap_start = s.ops[4].end_ns;
  activity.Add(1, 7, &compile, gap_start + 1'000, gap_start + 801'000);
  activity.Add(1, 7, &launch, gap_start + 900'000, gap_start + 1'100'000);
  activity.Add(1, 8, &launch, gap_start, gap_start + 1'000'000);  // another thread
  EngineIdle e(3);
  for (const DeviceOp& op : s.ops) e.Add(op, &activity);
  e.Finish(&activity);
  ASSERT_EQ(e.largest_gaps().size(), 3u);
  const EngineGap& g = e.largest_gaps()[0];
  EXPECT_EQ(g.start_ns, gap_start);
  EXPECT_EQ(g.duration_ns(), 1'035'000u + kLatencyNs);
  EXPECT_EQ(g.cause, "launch");
  ASSERT_EQ(g.host_activity.size(), 2u);
  EXPECT_EQ(g.host_activity[0].name, "zeModuleCreate");
  EXPECT_EQ(g.host_activity[0].overlap_ns, 800'000u);
  EXPECT_EQ(g.host_activity[1].overlap_ns, 140'000u);
  EXPECT_LE(e.largest_gaps()[1].duration_ns(), g.duration_ns());
}

TEST(EngineIdleTest, LaunchLatencyPercentilesAreWithinOnePercent) {
  std::vector<DeviceOp> ops;
  for (uint64_t k = 0; k < 100; ++k) {
    DeviceOp op;
    op.measured = true;
    op.submit_ns = kT0 + k * 1'000'000;
    op.start_ns = op.submit_ns + (k + 1) * 1'000;  // 1..100 us
    op.end_ns = op.start_ns + 100;
    ops.push_back(op);
  }
  const EngineIdle e = RunEngine(ops);
  EXPECT_NEAR(double(e.launch_latency().Percentile(0.50)), 50'000, 500);
  EXPECT_NEAR(double(e.launch_latency().Percentile(0.95)), 95'000, 950);
  EXPECT_NEAR(double(e.launch_latency().Percentile(0.99)), 99'000, 990);
}

// The latency runs from the end of the submitting call, found among its thread's calls; a
// device start before the call returned counts as 0.
TEST(EngineIdleTest, LaunchLatencyRunsFromTheSubmittingCallsEnd) {
  RecentHostActivity activity;
  const std::string execute = "zeCommandQueueExecuteCommandLists";
  std::vector<DeviceOp> ops;
  for (uint64_t k = 0; k < 3; ++k) {
    DeviceOp op;
    op.pid = 1;
    op.submit_tid = 7;
    op.measured = true;
    op.submit_ns = kT0 + k * 1'000'000;
    activity.Add(1, 7, &execute, op.submit_ns, op.submit_ns + 4'000);  // returns after 4 us
    op.start_ns = op.submit_ns + (k == 2 ? 1'000 : 10'000);           // the last: before it returns
    op.end_ns = op.start_ns + 100;
    ops.push_back(op);
  }
  const EngineIdle e = RunEngine(ops, &activity);
  ASSERT_EQ(e.launch_latency().count(), 3u);
  EXPECT_EQ(e.launch_latency().Percentile(0.0), 0u);
  EXPECT_NEAR(double(e.launch_latency().Percentile(1.0)), 6'000, 60);
  // Without the thread's calls, from the call's start.
  EXPECT_NEAR(double(RunEngine(ops).launch_latency().Percentile(1.0)), 10'000, 100);
}

TEST(EngineIdleTest, MergeAddsEngines) {
  const Scenario a = Build(100, {false}), b = Build(100, {true});
  EngineIdle ea = RunEngine(a.ops);
  ea.Merge(RunEngine(b.ops));
  EXPECT_EQ(ea.operations(), 200u);
  EXPECT_EQ(ea.idle().launch_ns, a.truth.launch_ns);
  EXPECT_EQ(ea.idle().sync_ns, b.truth.sync_ns);
  EXPECT_EQ(ea.busy_ns() + ea.idle().total(), ea.span_ns());
}

}  // namespace
}  // namespace xtrace::report
