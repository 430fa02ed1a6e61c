// Tests for export/selected_timeline: what a window keeps (spans reaching into it, whole;
// flows with both ends in it; counters' last value before it; names of processes with
// something in it, once), and how a second host's pids, tids and ids are kept apart.
#include "export/selected_timeline.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "export/ze_export.h"

namespace xtrace {
namespace {

// Every call as one line of text, to compare in order.
class RecordingWriter final : public TraceWriter {
 public:
  std::vector<std::string> lines;

  void Clocks(const ClockAnchor&) override { lines.push_back("clocks"); }
  void ProcessName(uint32_t pid, std::string_view name, std::span<const TraceArg> args) override {
    std::string line = "process " + std::to_string(pid) + " " + std::string(name);
    for (const TraceArg& a : args) line += " " + std::string(a.key) + "=" + std::string(a.string_value);
    lines.push_back(line);
  }
  void ProcessSortIndex(uint32_t pid, int64_t index) override {
    lines.push_back("sort " + std::to_string(pid) + " " + std::to_string(index));
  }
  void ThreadName(uint32_t pid, uint32_t tid, std::string_view name) override {
    lines.push_back("thread " + std::to_string(pid) + "/" + std::to_string(tid) + " " + std::string(name));
  }
  void Complete(std::string_view name, std::string_view, uint32_t pid, uint32_t tid, uint64_t ts,
                uint64_t dur, std::span<const TraceArg> args) override {
    lines.push_back("span " + std::string(name) + " " + std::to_string(pid) + "/" +
                    std::to_string(tid) + " " + std::to_string(ts) + "+" + std::to_string(dur));
    for (const TraceArg& a : args)
      if (a.key == "correlation") correlations.push_back(std::string(name) + "=" + std::to_string(a.uint_value));
  }
  void Complete(RecurringName name, std::string_view c, uint32_t pid, uint32_t tid, uint64_t ts,
                uint64_t dur, std::span<const TraceArg> args) override {
    keys.push_back(name.key);
    Complete(name.text, c, pid, tid, ts, dur, args);
  }
  void AsyncSpan(std::string_view name, std::string_view, uint32_t pid, uint32_t, uint64_t id,
                 uint64_t ts, uint64_t, std::span<const TraceArg>) override {
    lines.push_back("async " + std::string(name) + " " + std::to_string(pid) + " id " +
                    std::to_string(id) + " " + std::to_string(ts));
  }
  void Instant(std::string_view name, std::string_view, uint32_t pid, uint32_t, uint64_t ts,
               InstantScope, std::span<const TraceArg>) override {
    lines.push_back("instant " + std::string(name) + " " + std::to_string(pid) + " " + std::to_string(ts));
  }
  void Flow(FlowPhase phase, std::string_view name, std::string_view, uint32_t pid, uint32_t tid,
            uint64_t ts, uint64_t id) override {
    lines.push_back(std::string(phase == FlowPhase::kStart ? "flow-start " : "flow-end ") +
                    std::string(name) + " " + std::to_string(pid) + "/" + std::to_string(tid) +
                    " " + std::to_string(ts) + " id " + std::to_string(id));
  }
  void Counter(std::string_view name, uint32_t pid, uint64_t ts,
               std::span<const TraceArg> series) override {
    std::string line = "counter " + std::string(name) + " " + std::to_string(pid) + " " + std::to_string(ts);
    for (const TraceArg& a : series) line += " " + std::string(a.key) + "=" + std::to_string(a.uint_value);
    lines.push_back(line);
  }
  Status Finish(std::span<const TraceArg>) override {
    lines.push_back("finish");
    return Status::Ok();
  }
  bool writes_regular_file() const override { return false; }
  uint64_t events_written() const override { return lines.size(); }
  uint64_t bytes_written() const override { return 0; }

  std::vector<uint64_t> keys;
  std::vector<std::string> correlations;  // "<span>=<its correlation arg>"
};

using Lines = std::vector<std::string>;
constexpr TimelineSelection kWindow{.from_ns = 1000, .to_ns = 2000, .name = nullptr};

TEST(SelectedTimelineTest, SpansReachingIntoTheWindowAreKeptWholeInstantsOnlyInside) {
  RecordingWriter out;
  SelectedTimeline timeline(out, kWindow);
  TraceWriter& in = timeline.AddInput({});
  in.Complete("before", "c", 1, 1, 100, 899);      // ends at 999: out
  in.Complete("crosses-from", "c", 1, 1, 900, 200);  // kept whole, not clipped
  in.Complete("ends-at-from", "c", 1, 1, 800, 200);  // ends at 1000: touches the window
  in.Complete("inside", "c", 1, 1, 1500, 10);
  in.Complete("crosses-to", "c", 1, 1, 1990, 500);
  in.Complete("at-to", "c", 1, 1, 2000, 1);        // starts at the open end: out
  in.Instant("early", "c", 1, 1, 999, TraceWriter::InstantScope::kThread);
  in.Instant("first", "c", 1, 1, 1000, TraceWriter::InstantScope::kThread);
  in.Instant("late", "c", 1, 1, 2000, TraceWriter::InstantScope::kThread);
  ASSERT_TRUE(timeline.Finish({}).ok());
  EXPECT_EQ(out.lines, (Lines{"span crosses-from 1/1 900+200", "span ends-at-from 1/1 800+200",
                              "span inside 1/1 1500+10", "span crosses-to 1/1 1990+500",
                              "instant first 1 1000", "finish"}));
  EXPECT_EQ(timeline.spans_kept(), 5u);
  EXPECT_EQ(timeline.spans_dropped(), 4u);
}

// Device work kept in a window whose submitting call is not: its correlation would name no
// host call in the trace, so it becomes 0. Kept calls keep theirs, and so does their work.
TEST(SelectedTimelineTest, DeviceWorkWhoseCallWasLeftOutLosesItsCorrelation) {
  RecordingWriter out;
  SelectedTimeline timeline(out, kWindow);
  TraceWriter& in = timeline.AddInput({});
  const uint32_t gpu = kDevicePidBase;
  const TraceArg early[] = {TraceArg::Uint("correlation", 6)};
  const TraceArg inside[] = {TraceArg::Uint("correlation", 7), TraceArg::Uint("stream", 1)};
  in.Complete("execute-early", "xpu_runtime", 1, 1, 500, 10, early);    // before the window
  in.Complete("execute-inside", "xpu_runtime", 1, 1, 1100, 10, inside);
  in.Complete("kernel-of-early", "kernel", gpu, 1, 990, 100, early);     // reaches into it
  in.Complete("kernel-of-inside", "kernel", gpu, 1, 1200, 100, inside);
  ASSERT_TRUE(timeline.Finish({}).ok());
  EXPECT_EQ(out.correlations, (std::vector<std::string>{"execute-inside=7", "kernel-of-early=0",
                                                         "kernel-of-inside=7"}));
  // The whole capture, selecting nothing, passes every correlation through untouched.
  RecordingWriter all;
  SelectedTimeline whole(all, {});
  TraceWriter& w = whole.AddInput({});
  w.Complete("kernel-of-early", "kernel", gpu, 1, 990, 100, early);
  ASSERT_TRUE(whole.Finish({}).ok());
  EXPECT_EQ(all.correlations, (std::vector<std::string>{"kernel-of-early=6"}));
}

TEST(SelectedTimelineTest, FlowsNeedBothEndsInTheWindowAndGetFreshIds) {
  RecordingWriter out;
  SelectedTimeline timeline(out, kWindow);
  TraceWriter& in = timeline.AddInput({});
  using P = TraceWriter::FlowPhase;
  in.Flow(P::kStart, "submit", "f", 1, 1, 1100, 77);
  in.Flow(P::kEnd, "submit", "f", 1, 2, 1200, 77);
  in.Flow(P::kStart, "cut", "f", 1, 1, 900, 78);  // starts before the window
  in.Flow(P::kEnd, "cut", "f", 1, 2, 1200, 78);
  in.Flow(P::kStart, "cut", "f", 1, 1, 1900, 79);  // ends after it
  in.Flow(P::kEnd, "cut", "f", 1, 2, 2100, 79);
  in.Flow(P::kEnd, "orphan", "f", 1, 2, 1500, 80);  // no start
  in.Flow(P::kStart, "never-ends", "f", 1, 1, 1500, 81);
  ASSERT_TRUE(timeline.Finish({}).ok());
  // Renumbered above every log's correlation ids (2^52), which launch arrows keep.
  EXPECT_EQ(out.lines, (Lines{"flow-start submit 1/1 1100 id 4503599627370496",
                              "flow-end submit 1/2 1200 id 4503599627370496", "finish"}));
  EXPECT_EQ(timeline.flows_dropped(), 3u);
}

// A launch arrow whose call began before the window and reaches into it, like its kernel: both
// slices are kept, and so is the arrow (device work with a correlation has one), its ends moved
// to the window's start. A kernel whose call was left out loses correlation and arrow alike.
TEST(SelectedTimelineTest, LaunchArrowsOfKeptCallsAndWorkAreKeptInsideTheWindow) {
  RecordingWriter out;
  SelectedTimeline timeline(out, kWindow);
  TraceWriter& in = timeline.AddInput({});
  using P = TraceWriter::FlowPhase;
  const uint32_t gpu = kDevicePidBase;
  const TraceArg crossing[] = {TraceArg::Uint("correlation", 5)};
  const TraceArg early[] = {TraceArg::Uint("correlation", 6)};
  in.Complete("launch-crossing", "xpu_runtime", 1, 1, 900, 200, crossing);  // 900..1100
  in.Complete("launch-early", "xpu_runtime", 1, 1, 800, 50, early);         // left out
  in.Complete("kernel-crossing", "kernel", gpu, 3, 950, 300, crossing);     // 950..1250
  in.Flow(P::kStart, kLaunchFlow, kLaunchFlow, 1, 1, 900, 5);
  in.Flow(P::kEnd, kLaunchFlow, kLaunchFlow, gpu, 3, 950, 5);
  in.Complete("kernel-early", "kernel", gpu, 3, 990, 20, early);  // 990..1010
  in.Flow(P::kStart, kLaunchFlow, kLaunchFlow, 1, 1, 800, 6);
  in.Flow(P::kEnd, kLaunchFlow, kLaunchFlow, gpu, 3, 990, 6);
  ASSERT_TRUE(timeline.Finish({}).ok());
  const std::string device = std::to_string(gpu) + "/3";
  EXPECT_EQ(out.lines, (Lines{"span launch-crossing 1/1 900+200", "span kernel-crossing " + device + " 950+300",
                              "flow-start ac2g 1/1 1000 id 5", "flow-end ac2g " + device + " 1000 id 5",
                              "span kernel-early " + device + " 990+20", "finish"}));
  EXPECT_EQ(out.correlations, (std::vector<std::string>{"launch-crossing=5", "kernel-crossing=5",
                                                         "kernel-early=0"}));
  EXPECT_EQ(timeline.flows_dropped(), 1u);
}

TEST(SelectedTimelineTest, CountersStartTheWindowAtTheirLastValueBeforeIt) {
  RecordingWriter out;
  SelectedTimeline timeline(out, kWindow);
  TraceWriter& in = timeline.AddInput({});
  auto sample = [&](uint64_t ts, uint64_t v) {
    const TraceArg series[] = {TraceArg::Uint("device", v)};
    in.Counter("memory", 9, ts, series);
  };
  sample(500, 10);
  sample(900, 20);  // the last before the window
  sample(700, 15);  // logged later, but older
  sample(1500, 30);
  sample(2500, 40);  // after the window
  ASSERT_TRUE(timeline.Finish({}).ok());
  EXPECT_EQ(out.lines, (Lines{"counter memory 9 1500 device=30", "counter memory 9 1000 device=20",
                              "finish"}));
}

TEST(SelectedTimelineTest, NamesOnlyForProcessesInTheWindowOnceAndBeforeTheirEvents) {
  RecordingWriter out;
  SelectedTimeline timeline(out, kWindow);
  TraceWriter& in = timeline.AddInput({});
  in.ProcessName(1, "busy");
  in.ThreadName(1, 11, "main");
  in.ProcessName(2, "idle-in-window");
  in.ThreadName(2, 21, "worker");
  in.Complete("early", "c", 2, 21, 10, 10);
  in.Complete("k", "c", 1, 11, 1200, 10);
  // A rotated file names every live process again: written once.
  in.ProcessName(1, "busy");
  in.ThreadName(1, 11, "main");
  in.Complete("k", "c", 1, 11, 1300, 10);
  in.ProcessName(1, "renamed");  // an exec: written
  ASSERT_TRUE(timeline.Finish({}).ok());
  EXPECT_EQ(out.lines, (Lines{"process 1 busy", "thread 1/11 main", "span k 1/11 1200+10",
                              "span k 1/11 1300+10", "process 1 renamed", "finish"}));
}

TEST(SelectedTimelineTest, NamePatternKeepsMatchingSpansAndDropsFlows) {
  RecordingWriter out;
  const std::regex pattern("gemm");
  SelectedTimeline timeline(out, TimelineSelection{.name = &pattern});
  TraceWriter& in = timeline.AddInput({});
  in.Complete("gemm_f32", "c", 1, 1, 100, 10);
  in.Complete("zeCommandQueueExecuteCommandLists", "c", 1, 1, 200, 10);
  in.Complete(RecurringName{5, "sgemm"}, "c", 1, 1, 300, 10);
  in.Flow(TraceWriter::FlowPhase::kStart, "submit", "f", 1, 1, 205, 1);
  in.Flow(TraceWriter::FlowPhase::kEnd, "submit", "f", 1, 2, 300, 1);
  ASSERT_TRUE(timeline.Finish({}).ok());
  EXPECT_EQ(out.lines, (Lines{"span gemm_f32 1/1 100+10", "span sgemm 1/1 300+10", "finish"}));
}

TEST(SelectedTimelineTest, ASecondHostKeepsItsPidsTidsDevicesAndIdsApart) {
  RecordingWriter out;
  SelectedTimeline timeline(out, TimelineSelection{});
  TraceWriter& a = timeline.AddInput({.offset_ns = 0, .host_index = 0, .host = "node-a", .label_host = true});
  TraceWriter& b = timeline.AddInput({.offset_ns = -50, .host_index = 1, .host = "node-b", .label_host = true});
  a.ProcessName(4242, "python3");
  b.ProcessName(4242, "python3");
  b.ThreadName(4242, 4243, "worker");
  a.Complete(RecurringName{7, "gemm"}, "c", 4242, 4242, 1000, 10);
  b.Complete(RecurringName{7, "conv"}, "c", 4242, 4243, 1000, 10);
  b.Complete("op", "gpu", DevicePid(0), 3, 1100, 10);
  b.AsyncSpan("range", "itt", 4242, 4243, 5, 1000, 10);
  ASSERT_TRUE(timeline.Finish({}).ok());
  const uint32_t remapped = (1u << 22) | 4242;
  const uint32_t remapped_tid = (1u << 22) | 4243;
  const uint32_t device = DevicePid(0) + 0x10000;
  EXPECT_EQ(out.lines,
            (Lines{"process 4242 python3 [node-a] host=node-a", "span gemm 4242/4242 1000+10",
                   "process " + std::to_string(remapped) + " python3 [node-b] (pid 4242) host=node-b pid=4242",
                   "thread " + std::to_string(remapped) + "/" + std::to_string(remapped_tid) + " worker (tid 4243)",
                   "span conv " + std::to_string(remapped) + "/" + std::to_string(remapped_tid) + " 950+10",
                   "span op " + std::to_string(device) + "/3 1050+10",
                   "async range " + std::to_string(remapped) + " id " + std::to_string(5 + (1ull << 40)) + " 950",
                   "finish"}));
  // The same string id in two logs names two texts: the keys differ.
  ASSERT_EQ(out.keys.size(), 2u);
  EXPECT_NE(out.keys[0], out.keys[1]);
}

}  // namespace
}  // namespace xtrace
