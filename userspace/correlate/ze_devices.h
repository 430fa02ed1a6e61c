// Which device a traced process's device handle is: its position in the list zeDeviceGet
// returned to that process. Handles are per process; positions match xtrace's own view of the
// devices (same driver, same order).
#pragma once

#include <cstdint>
#include <unordered_map>

#include "correlate/pid_handle.h"
#include "model/ze_events.h"

namespace xtrace {

class ZeDeviceTable {
 public:
  void Learn(uint32_t pid, uint64_t handle, uint32_t index) { index_[{pid, handle}] = index; }

  // The device's index; kUnknownDevice if the process enumerated its devices before the
  // capture began, unless there is only one device to be.
  uint32_t IndexOf(uint32_t pid, uint64_t handle) const {
    auto it = index_.find({pid, handle});
    if (it != index_.end()) return it->second;
    return Fallback();
  }

  // The device of an object whose device handle was never seen.
  uint32_t Fallback() const { return known_devices_ == 1 ? 0 : kUnknownDevice; }

  // How many devices xtrace's own Level Zero sees (0 if it has none).
  void set_known_devices(uint32_t n) { known_devices_ = n; }

  size_t size() const { return index_.size(); }

 private:
  std::unordered_map<PidHandle, uint32_t, PidHandleHash> index_;
  uint32_t known_devices_ = 0;
};

}  // namespace xtrace
