// Tests for DeviceLaneWriter (userspace/export/device_lanes.cc): device slices that would
// overlap on their engine's track move to lanes, with their flow ends; host tracks are left
// alone.
#include "export/device_lanes.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

namespace xtrace {
namespace {

constexpr uint32_t kGpu = kFirstSyntheticPid;

// Records where things were drawn.
class RecordingWriter final : public TraceWriter {
 public:
  struct Span {
    std::string name;
    uint32_t pid, tid;
    uint64_t ts, dur;
  };
  std::vector<Span> spans;
  std::vector<std::tuple<uint32_t, uint32_t, std::string>> thread_names;
  std::vector<std::tuple<uint64_t, uint32_t, uint32_t>> flows;  // id, pid, tid

  void Clocks(const ClockAnchor&) override {}
  void ProcessName(uint32_t, std::string_view, std::span<const TraceArg>) override {}
  void ProcessSortIndex(uint32_t, int64_t) override {}
  void ThreadName(uint32_t pid, uint32_t tid, std::string_view name) override {
    thread_names.emplace_back(pid, tid, std::string(name));
  }
  void Complete(std::string_view name, std::string_view, uint32_t pid, uint32_t tid, uint64_t ts,
                uint64_t dur, std::span<const TraceArg>) override {
    spans.push_back({std::string(name), pid, tid, ts, dur});
  }
  void Complete(RecurringName name, std::string_view c, uint32_t pid, uint32_t tid, uint64_t ts,
                uint64_t dur, std::span<const TraceArg> a) override {
    Complete(name.text, c, pid, tid, ts, dur, a);
  }
  void AsyncSpan(std::string_view, std::string_view, uint32_t, uint32_t, uint64_t, uint64_t,
                 uint64_t, std::span<const TraceArg>) override {}
  void Instant(std::string_view, std::string_view, uint32_t, uint32_t, uint64_t, InstantScope,
               std::span<const TraceArg>) override {}
  void Flow(FlowPhase, std::string_view, std::string_view, uint32_t pid, uint32_t tid, uint64_t,
            uint64_t id) override {
    flows.emplace_back(id, pid, tid);
  }
  void Counter(std::string_view, uint32_t, uint64_t, std::span<const TraceArg>) override {}
  Status Finish(std::span<const TraceArg>) override { return Status::Ok(); }
  bool writes_regular_file() const override { return false; }
  uint64_t events_written() const override { return 0; }
  uint64_t bytes_written() const override { return 0; }
};

TEST(DeviceLaneWriterTest, AnOverlappingEstimateMovesToALaneWithItsFlowEnds) {
  RecordingWriter out;
  DeviceLaneWriter w(out);
  w.ThreadName(kGpu, 1, "queue 0xa0");
  w.Complete("gemm", "gpu", kGpu, 1, 100, 100, {});         // measured
  w.Complete("copy", "gpu", kGpu, 1, 150, 200, {});         // estimate starting inside gemm
  w.Flow(TraceWriter::FlowPhase::kEnd, "submit", "f", kGpu, 1, 150, 7);
  w.Flow(TraceWriter::FlowPhase::kStart, "wait", "f", kGpu, 1, 349, 8);
  w.Complete("gemm2", "gpu", kGpu, 1, 200, 50, {});         // fits after gemm on the track
  w.Complete("copy2", "gpu", kGpu, 1, 360, 10, {});         // fits after copy on its lane too
  const uint32_t lane2 = 1 | 1u << kLaneShift;
  ASSERT_EQ(out.spans.size(), 4u);
  EXPECT_EQ(out.spans[0].tid, 1u);
  EXPECT_EQ(out.spans[1].tid, lane2);
  EXPECT_EQ(out.spans[2].tid, 1u);
  EXPECT_EQ(out.spans[3].tid, 1u);
  EXPECT_EQ(out.thread_names.back(), std::make_tuple(kGpu, lane2, std::string("queue 0xa0 (lane 2)")));
  EXPECT_EQ(out.flows[0], std::make_tuple(uint64_t{7}, kGpu, lane2));
  EXPECT_EQ(out.flows[1], std::make_tuple(uint64_t{8}, kGpu, lane2));
}

TEST(DeviceLaneWriterTest, ContainedDeviceSlicesDoNotNestEither) {
  RecordingWriter out;
  DeviceLaneWriter w(out);
  w.Complete("copy", "gpu", kGpu, 2, 100, 1000, {});  // estimate around a measured kernel
  w.Complete("gemm", "gpu", kGpu, 2, 200, 100, {});
  EXPECT_NE(out.spans[0].tid, out.spans[1].tid);
}

TEST(DeviceLaneWriterTest, HostTracksNestAsBefore) {
  RecordingWriter out;
  DeviceLaneWriter w(out);
  w.Complete("task", "itt", 42, 43, 100, 1000, {});
  w.Complete("call", "ze", 42, 43, 200, 100, {});
  w.Flow(TraceWriter::FlowPhase::kStart, "submit", "f", 42, 43, 250, 1);
  EXPECT_EQ(out.spans[1].tid, 43u);
  EXPECT_EQ(std::get<2>(out.flows[0]), 43u);
}

}  // namespace
}  // namespace xtrace
