// How the records a capture lost are told, alike by the collector's lines, the converted
// trace's "records dropped" instants and `xtrace report`: by source, and what to do about them
// (the ring that lost them names the remedy).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/event.h"

namespace xtrace {

// The sources with drops in `d`, named as the summary names them ("Level Zero", "ITT", "DRM",
// "other"), in that order.
std::vector<std::pair<std::string, uint64_t>> DroppedBySource(const RecordsDropped& d);

// `by_source` as the summary writes it after a count: " (Level Zero 4, DRM 1)"; empty when
// no source has drops.
std::string BySourceText(const std::vector<std::pair<std::string, uint64_t>>& by_source);

// The two rings a record can be lost in, as the remedy speaks of them: how each is sized now
// (" (now 16.0 MiB)"; empty where that is not known, as when reading a log).
struct RemedySizes {
  std::string_view bpf_now;  // the BPF ring buffer: --buffer-size
  std::string_view itt_now;  // each thread's ITT ring in the traced programs: --itt-ring-size
};

// What to do about `dropped` records, `in_itt_rings` of which the programs' own ITT rings lost
// (the BPF ring lost the rest): "raise --buffer-size", what fits losses in those rings ("all
// in the programs' own ITT rings: raise --itt-ring-size ... or give xtrace a CPU the program
// does not use"), or both ("raise --buffer-size; 12 of them in the programs' own ITT rings:
// ...").
std::string DropRemedyText(uint64_t dropped, uint64_t in_itt_rings, const RemedySizes& sizes = {});

}  // namespace xtrace
