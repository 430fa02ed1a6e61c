// Tests for PerfettoWriter (userspace/export/perfetto_writer.cc): traces are read back with
// tests/testing/perfetto_trace_reader.h, a wire-format reader that shares no code with the
// writer, and checked track by track, slice by slice.
#include "export/perfetto_writer.h"

#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <set>
#include <string>

#include "log_test_util.h"
#include "perfetto_trace_reader.h"

namespace xtrace {
namespace {

using test_util::PerfettoTraceReader;
using test_util::ReadFileBytes;
using test_util::ScratchDir;

constexpr uint32_t kGpu = kFirstSyntheticPid;

PerfettoTraceReader Write(const std::function<void(PerfettoWriter&)>& body,
                          size_t max_interned = PerfettoWriter::kDefaultMaxInterned,
                          uint64_t* clears = nullptr) {
  ScratchDir dir;
  const std::string path = dir.File("t.pftrace");
  {
    auto out = OutputFile::Create(path);
    EXPECT_TRUE(out.ok());
    PerfettoWriter w(std::move(*out), max_interned);
    body(w);
    EXPECT_TRUE(w.Finish().ok());
    if (clears) *clears = w.incremental_state_clears();
  }
  PerfettoTraceReader reader(ReadFileBytes(path));
  for (const std::string& e : reader.errors) ADD_FAILURE() << e;
  return reader;
}

TEST(PerfettoWriterTest, SpansOnThreadTracksWithTypedArguments) {
  const std::string long_name(1000, 'k');  // lengths past one varint byte
  const std::array args = {TraceArg::Int("result", -5), TraceArg::Uint("count", 300),
                           TraceArg::Hex("kernel", 0x7f00aa), TraceArg::String("timing", "measured"),
                           TraceArg::Bool("unfinished", true),
                           TraceArg::String("long", std::string_view(long_name))};
  auto t = Write([&](PerfettoWriter& w) {
    w.ProcessName(42, "python3", std::array{TraceArg::String("command_line", "python3 a.py"),
                                            TraceArg::String("cgroup", "/x")});
    w.ThreadName(42, 43, "worker");
    w.Complete("zeCommandListAppendLaunchKernel", "ze", 42, 43, 1'000'000'123, 456, args);
    w.Complete(RecurringName{9, long_name}, "ze", 42, 43, 1'000'001'000, 10);
    w.Complete(RecurringName{9, long_name}, "ze", 42, 43, 1'000'002'000, 10);
  });
  const auto* process = t.FindTrack("python3");
  ASSERT_NE(process, nullptr);
  EXPECT_TRUE(process->is_process);
  EXPECT_EQ(process->pid, 42);
  EXPECT_EQ(process->cmdline, std::vector<std::string>{"python3 a.py"});
  EXPECT_EQ(process->labels, std::vector<std::string>{"cgroup=/x"});
  const auto* thread = t.FindTrack("worker");
  ASSERT_NE(thread, nullptr);
  EXPECT_TRUE(thread->is_thread);
  EXPECT_EQ(thread->tid, 43);

  auto calls = t.SlicesNamed("zeCommandListAppendLaunchKernel");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]->track, thread->uuid);
  EXPECT_EQ(calls[0]->start, 1'000'000'123u);
  EXPECT_EQ(calls[0]->end, 1'000'000'579u);
  EXPECT_EQ(calls[0]->categories, std::vector<std::string>{"ze"});
  EXPECT_EQ(calls[0]->args.at("result"), "-5");
  EXPECT_EQ(calls[0]->args.at("count"), "300");
  EXPECT_EQ(calls[0]->args.at("kernel"), "0x7f00aa");
  EXPECT_EQ(calls[0]->args.at("timing"), "measured");
  EXPECT_EQ(calls[0]->args.at("unfinished"), "true");
  EXPECT_EQ(calls[0]->args.at("long"), long_name);
  EXPECT_EQ(t.SlicesNamed(long_name).size(), 2u);
}

TEST(PerfettoWriterTest, DeviceIsATrackTreeWithItsEnginesAsChildren) {
  auto t = Write([&](PerfettoWriter& w) {
    w.ProcessName(kGpu, "GPU 0: Max 1550");
    w.ThreadName(kGpu, 2, "queue 0xb0");
    w.ThreadName(kGpu, 1, "queue 0xa0");
    w.Complete("gemm", "gpu", kGpu, 1, 100, 50);
    w.Complete("copy", "gpu", kGpu, 2, 100, 50);
    w.Complete("ioctl", "drm", 42, kFirstSyntheticTid + 5, 100, 50);
  });
  const auto* gpu = t.FindTrack("GPU 0: Max 1550");
  ASSERT_NE(gpu, nullptr);
  EXPECT_FALSE(gpu->is_process);
  const auto* q1 = t.FindTrack("queue 0xa0");
  const auto* q2 = t.FindTrack("queue 0xb0");
  ASSERT_TRUE(q1 && q2);
  EXPECT_EQ(q1->parent, gpu->uuid);
  EXPECT_EQ(q2->parent, gpu->uuid);
  EXPECT_EQ(q1->merge_behavior, 2u);  // never merged with a same-named sibling
  EXPECT_EQ(t.SlicesNamed("gemm")[0]->track, q1->uuid);
  EXPECT_EQ(t.SlicesNamed("copy")[0]->track, q2->uuid);
  // A synthetic tid is a child track of its process, not a thread.
  const uint64_t lane = t.SlicesNamed("ioctl")[0]->track;
  EXPECT_FALSE(t.tracks.at(lane).is_thread);
  EXPECT_TRUE(t.tracks.at(t.tracks.at(lane).parent).is_process);
}

TEST(PerfettoWriterTest, FlowEndsInsideTheLastSpanAttachToItElsewhereToAnInstant) {
  const uint64_t submit = 1000, wait = 1001;
  auto t = Write([&](PerfettoWriter& w) {
    w.Complete("zeCommandQueueExecuteCommandLists", "ze", 42, 43, 100, 50);
    w.Complete("zeFenceHostSynchronize", "ze", 42, 44, 200, 200);
    w.Complete("gemm", "gpu", kGpu, 1, 160, 100);
    w.Flow(TraceWriter::FlowPhase::kStart, "submit", "ze.flow", 42, 43, 100, submit);
    w.Flow(TraceWriter::FlowPhase::kEnd, "submit", "ze.flow", kGpu, 1, 160, submit);
    w.Flow(TraceWriter::FlowPhase::kStart, "wait", "ze.flow", kGpu, 1, 259, wait);
    w.Flow(TraceWriter::FlowPhase::kEnd, "wait", "ze.flow", 42, 44, 399, wait);
  });
  const auto gemm = t.SlicesNamed("gemm");
  ASSERT_EQ(gemm.size(), 1u);
  ASSERT_EQ(gemm[0]->terminating_flow_ids.size(), 1u);
  ASSERT_EQ(gemm[0]->flow_ids.size(), 1u);
  const uint64_t submit_id = gemm[0]->terminating_flow_ids[0], wait_id = gemm[0]->flow_ids[0];
  EXPECT_NE(submit_id, wait_id);
  // The host ends: instants nested in the calls, earlier and later than the device span, so
  // the arrows point call -> operation -> call.
  int instants = 0;
  for (const auto& e : t.events) {
    if (e.type != 3) continue;
    ++instants;
    if (e.name == "submit") {
      EXPECT_EQ(e.flow_ids, std::vector<uint64_t>{submit_id});
      EXPECT_EQ(e.ts, 100u);
      EXPECT_EQ(t.tracks.at(e.track).tid, 43);
    } else if (e.name == "wait") {
      EXPECT_EQ(e.terminating_flow_ids, std::vector<uint64_t>{wait_id});
      EXPECT_EQ(e.ts, 399u);
      EXPECT_EQ(t.tracks.at(e.track).tid, 44);
    }
  }
  EXPECT_EQ(instants, 3);  // and the "xtrace capture" facts
}

TEST(PerfettoWriterTest, FlowsOfDifferentCategoriesNeverShareAnId) {
  auto t = Write([&](PerfettoWriter& w) {
    w.Flow(TraceWriter::FlowPhase::kStart, "a", "drm", 1, 1, 100, 5);
    w.Flow(TraceWriter::FlowPhase::kStart, "b", "ze.flow", 1, 1, 100, 5);
  });
  std::set<uint64_t> ids;
  for (const auto& e : t.events)
    for (uint64_t id : e.flow_ids) ids.insert(id);
  EXPECT_EQ(ids.size(), 2u);
}

TEST(PerfettoWriterTest, CountersAreCounterTracksOfTheirProcess) {
  auto t = Write([&](PerfettoWriter& w) {
    w.ProcessName(kGpu, "GPU 0");
    w.Counter("memory in use", kGpu, 500,
              std::array{TraceArg::Uint("device", 1 << 20), TraceArg::Uint("shared", 4096)});
    w.Counter("memory in use", kGpu, 600,
              std::array{TraceArg::Uint("device", 0), TraceArg::Uint("shared", 4096)});
  });
  const auto* device = t.FindTrack("memory in use (device)");
  ASSERT_NE(device, nullptr);
  EXPECT_TRUE(device->is_counter);
  EXPECT_EQ(device->parent, t.FindTrack("GPU 0")->uuid);
  std::vector<std::pair<uint64_t, int64_t>> values;
  for (const auto& e : t.events)
    if (e.type == 4 && e.track == device->uuid) values.emplace_back(e.ts, e.counter_value);
  EXPECT_EQ(values, (std::vector<std::pair<uint64_t, int64_t>>{{500, 1 << 20}, {600, 0}}));
}

TEST(PerfettoWriterTest, TimesAreOnCLOCK_MONOTONICWithASnapshotOfTheOtherClocks) {
  auto t = Write([&](PerfettoWriter& w) {
    w.Clocks(ClockAnchor{.monotonic_ns = 10, .monotonic_raw_ns = 20, .realtime_ns = 30});
    w.Complete("x", "c", 1, 1, 100, 1);
  });
  EXPECT_EQ(t.primary_clock, 3u);  // BUILTIN_CLOCK_MONOTONIC
  EXPECT_EQ(t.default_clock, 3u);
  EXPECT_EQ(t.clocks, (std::map<uint64_t, uint64_t>{{3, 10}, {5, 20}, {1, 30}}));
}

TEST(PerfettoWriterTest, FullInterningTablesClearTheSequenceStateAndNamesStayRight) {
  uint64_t clears = 0;
  auto t = Write(
      [&](PerfettoWriter& w) {
        for (int i = 0; i < 100; ++i) {
          const std::string name = "fence " + std::to_string(i);
          w.Complete(name, "drm", 1, 1, 1000 + 10 * i, 5,
                     std::array{TraceArg::String("who", name)});
          w.Flow(TraceWriter::FlowPhase::kStart, "f" + std::to_string(i), "c", 1, 2,
                 1000 + 10 * i, i + 1);
        }
      },
      /*max_interned=*/16, &clears);
  EXPECT_GT(clears, 5u);
  EXPECT_EQ(t.state_clears, clears);
  for (int i = 0; i < 100; ++i) {
    const auto s = t.SlicesNamed("fence " + std::to_string(i));
    ASSERT_EQ(s.size(), 1u) << i;
    EXPECT_EQ(s[0]->start, uint64_t(1000 + 10 * i));
    EXPECT_EQ(s[0]->args.at("who"), "fence " + std::to_string(i));
  }
}

TEST(PerfettoWriterTest, AsyncSpansThatOverlapGetLanesOfTheirOwn) {
  auto t = Write([&](PerfettoWriter& w) {
    w.AsyncSpan("a", "dnnl", 42, 43, 1, 100, 100);
    w.AsyncSpan("b", "dnnl", 42, 43, 2, 150, 100);  // overlaps a without nesting
    w.AsyncSpan("c", "dnnl", 42, 43, 3, 200, 10);   // fits after a
  });
  const uint64_t a = t.SlicesNamed("a")[0]->track, b = t.SlicesNamed("b")[0]->track;
  EXPECT_NE(a, b);
  EXPECT_EQ(t.SlicesNamed("c")[0]->track, a);
  EXPECT_EQ(t.tracks.at(a).name, "dnnl");
  EXPECT_EQ(t.tracks.at(b).name, "dnnl 2");
}

TEST(PerfettoWriterTest, FinishWritesTheCaptureFacts) {
  auto t = Write([&](PerfettoWriter& w) {
    w.Complete("x", "c", 1, 1, 100, 1);
    EXPECT_TRUE(w.Finish(std::array{TraceArg::String("host", "node-7")}).ok());
  });
  ASSERT_EQ(t.capture_facts.size(), 1u);
  EXPECT_EQ(t.capture_facts[0].at("host"), "node-7");
}

TEST(PerfettoWriterTest, WriteErrorsAreReportedByFinish) {
  XTRACE_REQUIRE_DEV_FULL();
  auto out = OutputFile::Create("/dev/full");
  ASSERT_TRUE(out.ok());
  PerfettoWriter w(std::move(*out));
  for (int i = 0; i < 100000; ++i) w.Complete("x", "c", 1, 1, 100 + i, 1);
  const Status st = w.Finish();
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(test_util::Contains(st.message(), "/dev/full"));
  EXPECT_FALSE(w.writes_regular_file());
}

}  // namespace
}  // namespace xtrace
