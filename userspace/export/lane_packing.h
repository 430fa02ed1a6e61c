// The "first free lane" packing every exporter uses where slices of one track may overlap
// (estimated device operations, DRM ioctls of several threads, ITT ranges on Perfetto async
// tracks): a slice goes to the first lane whose last slice ended at or before it starts, and a
// new lane is opened when none is free. Greedy in arrival order; lanes are never merged back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xtrace {

class LanePacking {
 public:
  struct Placement {
    size_t lane = 0;      // from 0
    bool opened = false;  // a new lane: the caller names or describes it
  };

  // The lane for a slice over [start, end]; it is busy until `end` from now on.
  Placement Place(uint64_t start, uint64_t end) {
    for (size_t lane = 0; lane < busy_until_.size(); ++lane) {
      if (busy_until_[lane] <= start) {
        busy_until_[lane] = end;
        return {lane, false};
      }
    }
    busy_until_.push_back(end);
    return {busy_until_.size() - 1, true};
  }

  size_t lanes() const { return busy_until_.size(); }

 private:
  std::vector<uint64_t> busy_until_;  // the end of the last slice placed in each lane
};

}  // namespace xtrace
