// DeviceLaneWriter: see device_lanes.h.
#include "export/device_lanes.h"

namespace xtrace {

void DeviceLaneWriter::ThreadName(uint32_t pid, uint32_t tid, std::string_view name) {
  if (pid >= kFirstSyntheticPid) tracks_[{pid, tid}].name = name;
  out_.ThreadName(pid, tid, name);
}

uint32_t DeviceLaneWriter::Place(uint32_t pid, uint32_t tid, uint64_t ts_ns, uint64_t dur_ns) {
  if (pid < kFirstSyntheticPid) return tid;
  Track& t = tracks_[{pid, tid}];
  const uint64_t end = ts_ns + dur_ns;
  const LanePacking::Placement place = t.lanes.Place(ts_ns, end);
  const uint32_t lane_tid = tid | static_cast<uint32_t>(place.lane) << kLaneShift;
  if (place.opened && place.lane > 0) {
    const std::string base = t.name.empty() ? "track " + std::to_string(tid) : t.name;
    out_.ThreadName(pid, lane_tid, base + " (lane " + std::to_string(place.lane + 1) + ")");
  }
  t.last_tid = lane_tid;
  t.last_start = ts_ns;
  t.last_end = end;
  return t.last_tid;
}

void DeviceLaneWriter::Flow(FlowPhase phase, std::string_view name, std::string_view category,
                            uint32_t pid, uint32_t tid, uint64_t ts_ns, uint64_t id) {
  if (pid >= kFirstSyntheticPid) {
    auto it = tracks_.find({pid, tid});
    if (it != tracks_.end() && ts_ns >= it->second.last_start && ts_ns <= it->second.last_end) {
      tid = it->second.last_tid;
    }
  }
  out_.Flow(phase, name, category, pid, tid, ts_ns, id);
}

}  // namespace xtrace
