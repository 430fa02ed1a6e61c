// A set of 64-bit ids kept as ranges of consecutive ones. What a window's conversion notes of
// the host calls it kept (their correlation ids, which each log numbers in call order): a
// window keeps almost every call inside it, so its ids are a handful of ranges however many
// calls there were, where a hash set held an entry per call (some 40 bytes each: 4 GB for the
// hundred million launches of an hour's capture).
#pragma once

#include <cstdint>
#include <iterator>
#include <map>

namespace xtrace {

class IdRanges {
 public:
  void Insert(uint64_t id) {
    auto next = ranges_.upper_bound(id);  // the first range that starts after id
    if (next != ranges_.begin()) {
      auto prev = std::prev(next);
      if (id <= prev->second) return;  // already in
      if (id == prev->second + 1) {
        prev->second = id;
        if (next != ranges_.end() && next->first == id + 1) {
          prev->second = next->second;
          ranges_.erase(next);
        }
        return;
      }
    }
    if (next != ranges_.end() && next->first == id + 1) {
      const uint64_t last = next->second;
      ranges_.erase(next);
      ranges_.emplace(id, last);
      return;
    }
    ranges_.emplace(id, id);
  }

  bool Contains(uint64_t id) const {
    auto next = ranges_.upper_bound(id);
    return next != ranges_.begin() && id <= std::prev(next)->second;
  }

  size_t ranges() const { return ranges_.size(); }

 private:
  std::map<uint64_t, uint64_t> ranges_;  // first id -> last id, both in
};

}  // namespace xtrace
