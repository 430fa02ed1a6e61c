// Drop windows from successive reads of the BPF counters.
#include "capture/output/drop_windows.h"

namespace xtrace {

void DropWindows::Start(const Counters& counters, uint64_t now_ns) {
  last_ = counters;
  last_ns_ = now_ns;
}

std::optional<RecordsDropped> DropWindows::Look(const Counters& counters, uint64_t now_ns) {
  const auto delta = [&](xt_counter c) {
    return counters[c] > last_[c] ? counters[c] - last_[c] : 0;
  };
  RecordsDropped w;
  w.start_ns = last_ns_;
  w.end_ns = now_ns;
  w.level_zero = delta(XT_CNT_DROPPED_ZE);
  w.itt = delta(XT_CNT_DROPPED_ITT);
  w.drm = delta(XT_CNT_DROPPED_DRM);
  w.other = delta(XT_CNT_DROPPED_OTHER);
  w.itt_rings = delta(XT_CNT_DROPPED_ITT_RINGS);
  last_ = counters;
  last_ns_ = now_ns;
  if (w.total() == 0) return std::nullopt;
  total_.AddCounts(w);
  return w;
}

}  // namespace xtrace
