// A Level Zero handle qualified by its process: handles are addresses, meaningful (and
// reused) only within one process.
#pragma once

#include <cstdint>
#include <functional>

namespace xtrace {

struct PidHandle {
  uint32_t pid = 0;
  uint64_t handle = 0;
  bool operator==(const PidHandle&) const = default;
};

struct PidHandleHash {
  size_t operator()(const PidHandle& k) const {
    return std::hash<uint64_t>()(k.handle ^ (uint64_t{k.pid} << 48) ^ (uint64_t{k.pid} >> 16));
  }
};

}  // namespace xtrace
