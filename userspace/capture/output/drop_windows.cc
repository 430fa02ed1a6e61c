// Drop windows from successive reads of the BPF counters.
#include "capture/output/drop_windows.h"

namespace xtrace {

std::vector<std::pair<std::string, uint64_t>> DroppedBySource(const RecordsDropped& d) {
  std::vector<std::pair<std::string, uint64_t>> by_source;
  const std::pair<const char*, uint64_t> sources[] = {
      {"Level Zero", d.level_zero}, {"ITT", d.itt}, {"DRM", d.drm}, {"other", d.other}};
  for (const auto& [source, n] : sources)
    if (n) by_source.emplace_back(source, n);
  return by_source;
}

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
  last_ = counters;
  last_ns_ = now_ns;
  if (w.total() == 0) return std::nullopt;
  total_.level_zero += w.level_zero;
  total_.itt += w.itt;
  total_.drm += w.drm;
  total_.other += w.other;
  return w;
}

}  // namespace xtrace
