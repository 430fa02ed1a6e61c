// Writes the kernel-driver (DRM) view into Chrome JSON: per process a "driver" track with one
// slice per DRM ioctl, named by its command, with the device and decoded arguments; flow
// arrows from the host API call that issued an ioctl to it; and a "GPU fences" track with
// each fence from creation to signal. Ioctls of several threads may overlap, which one track
// cannot show, so a track grows lanes ("driver", "driver 2", ...) as needed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "export/lane_packing.h"
#include "export/trace_writer.h"
#include "model/drm_event.h"
#include "model/string_table.h"

namespace xtrace {

class DriverTrackWriter {
 public:
  DriverTrackWriter(const StringTable& strings, TraceWriter& out);

  void Write(const DrmFile& e);
  void Write(const DrmIoctl& e);
  void Write(const DrmFenceSignal& e);

 private:
  struct Track {
    LanePacking lanes;
  };
  // A lane of `pid`'s track (driver or fences) free over [start, end]; names it when new.
  uint32_t PlaceInLane(uint32_t pid, bool fences, uint64_t start, uint64_t end);

  const StringTable& strings_;
  TraceWriter& out_;
  std::map<std::pair<uint32_t, uint32_t>, std::string> device_by_fd_;  // (pid, fd) -> label
  std::map<std::pair<uint32_t, bool>, Track> tracks_;                  // (pid, fences?) -> lanes
  uint64_t next_flow_id_ = FlowIds::kDrmBase;
  std::vector<TraceArg> args_;  // reused: no allocation per event
};

}  // namespace xtrace
