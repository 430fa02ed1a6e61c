// The remedy for lost records (drop_remedy.h).
#include "model/drop_remedy.h"

#include <algorithm>

namespace xtrace {

std::vector<std::pair<std::string, uint64_t>> DroppedBySource(const RecordsDropped& d) {
  std::vector<std::pair<std::string, uint64_t>> by_source;
  const std::pair<const char*, uint64_t> sources[] = {
      {"Level Zero", d.level_zero}, {"ITT", d.itt}, {"DRM", d.drm}, {"other", d.other}};
  for (const auto& [source, n] : sources)
    if (n) by_source.emplace_back(source, n);
  return by_source;
}

std::string BySourceText(const std::vector<std::pair<std::string, uint64_t>>& by_source) {
  std::string s;
  for (const auto& [source, n] : by_source)
    s += (s.empty() ? " (" : ", ") + source + " " + std::to_string(n);
  return s.empty() ? s : s + ")";
}

std::string DropRemedyText(uint64_t dropped, uint64_t in_itt_rings, const RemedySizes& sizes) {
  in_itt_rings = std::min(in_itt_rings, dropped);
  std::string s;
  if (dropped > in_itt_rings) {
    s = "raise --buffer-size";
    s += sizes.bpf_now;
  }
  if (!in_itt_rings) return s;
  // A program's ITT ring is its own: it filled because xtrace read it too late, mostly for
  // want of CPU. A larger ring rides out longer waits; --buffer-size does not size it.
  if (!s.empty()) s += "; " + std::to_string(in_itt_rings) + " of them";
  else s = "all";
  s += " in the programs' own ITT rings: raise --itt-ring-size";
  s += sizes.itt_now;
  s += " or give xtrace a CPU the program does not use";
  return s;
}

}  // namespace xtrace
