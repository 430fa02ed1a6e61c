// DeviceLaneWriter: keeps every device track drawable. Operations on one engine never nest,
// yet an estimated operation's bounds (submission to the first host call that saw it done)
// can start inside a measured kernel before it, or contain it: one track would then hold
// partially overlapping or falsely nested slices, which viewers misdraw. This TraceWriter sits
// in front of the real one and moves such a slice to a lane of its own beside its engine's
// track ("queue ... (lane 2)"), with the flow ends that point into it; everything else passes
// through. Tightening the estimate by its predecessor's end would not be sound: Level Zero
// command lists are not in order unless created so, so an operation may start before the one
// appended before it ends.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "export/lane_packing.h"
#include "export/trace_writer.h"

namespace xtrace {

class DeviceLaneWriter final : public TraceWriter {
 public:
  explicit DeviceLaneWriter(TraceWriter& out) : out_(out) {}

  void Clocks(const ClockAnchor& anchor) override { out_.Clocks(anchor); }
  void ProcessName(uint32_t pid, std::string_view name, std::span<const TraceArg> args) override {
    out_.ProcessName(pid, name, args);
  }
  void ProcessSortIndex(uint32_t pid, int64_t index) override { out_.ProcessSortIndex(pid, index); }
  void ThreadName(uint32_t pid, uint32_t tid, std::string_view name) override;
  void Complete(std::string_view name, std::string_view category, uint32_t pid, uint32_t tid,
                uint64_t ts_ns, uint64_t dur_ns, std::span<const TraceArg> args) override {
    out_.Complete(name, category, pid, Place(pid, tid, ts_ns, dur_ns), ts_ns, dur_ns, args);
  }
  void Complete(RecurringName name, std::string_view category, uint32_t pid, uint32_t tid,
                uint64_t ts_ns, uint64_t dur_ns, std::span<const TraceArg> args) override {
    out_.Complete(name, category, pid, Place(pid, tid, ts_ns, dur_ns), ts_ns, dur_ns, args);
  }
  void AsyncSpan(std::string_view name, std::string_view category, uint32_t pid, uint32_t tid,
                 uint64_t id, uint64_t ts_ns, uint64_t dur_ns,
                 std::span<const TraceArg> args) override {
    out_.AsyncSpan(name, category, pid, tid, id, ts_ns, dur_ns, args);
  }
  void Instant(std::string_view name, std::string_view category, uint32_t pid, uint32_t tid,
               uint64_t ts_ns, InstantScope scope, std::span<const TraceArg> args) override {
    out_.Instant(name, category, pid, tid, ts_ns, scope, args);
  }
  void Flow(FlowPhase phase, std::string_view name, std::string_view category, uint32_t pid,
            uint32_t tid, uint64_t ts_ns, uint64_t id) override;
  void Counter(std::string_view name, uint32_t pid, uint64_t ts_ns,
               std::span<const TraceArg> series) override {
    out_.Counter(name, pid, ts_ns, series);
  }
  Status Finish(std::span<const TraceArg> other_data) override { return out_.Finish(other_data); }
  bool writes_regular_file() const override { return out_.writes_regular_file(); }
  uint64_t events_written() const override { return out_.events_written(); }
  uint64_t bytes_written() const override { return out_.bytes_written(); }

 private:
  struct Track {
    std::string name;
    LanePacking lanes;  // lane 0: the engine's own track; n: tid | n << kLaneShift
    // The last slice placed, so that the flow ends written right after it follow it.
    uint32_t last_tid = 0;
    uint64_t last_start = 0, last_end = 0;
  };
  // The tid to draw a device slice on: the first lane free over [ts, ts + dur].
  uint32_t Place(uint32_t pid, uint32_t tid, uint64_t ts_ns, uint64_t dur_ns);

  TraceWriter& out_;
  std::map<std::pair<uint32_t, uint32_t>, Track> tracks_;
};

}  // namespace xtrace
