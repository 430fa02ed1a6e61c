// Where on the timeline a capture lost records: each look at the BPF counters that finds new
// drops makes one RecordsDropped event spanning from the previous look (which found none, or
// the previous window's end) to this one, with the drops of each source and how many of them
// the traced programs' own ITT rings lost.
#pragma once

#include <cstdint>
#include <optional>

#include "capture/bpf/capture_maps.h"
#include "model/event.h"

namespace xtrace {

class DropWindows {
 public:
  // Starts watching at `now_ns` from the counters' current values.
  void Start(const Counters& counters, uint64_t now_ns);

  // The drops since the previous look, if any (a look at `now_ns` with `counters`).
  std::optional<RecordsDropped> Look(const Counters& counters, uint64_t now_ns);

  // Drops of each source, over every window so far.
  const RecordsDropped& total() const { return total_; }

 private:
  Counters last_{};
  uint64_t last_ns_ = 0;
  RecordsDropped total_;
};

}  // namespace xtrace
