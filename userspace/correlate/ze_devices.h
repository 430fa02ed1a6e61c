// Which device a traced process's device handle is, as a number of xtrace's own view of the
// devices (the one its clock readings use). Handles are per process. A process's device is
// matched to xtrace's by UUID, from the process's zeDeviceGetProperties: the two may list the
// devices in different orders or subsets (an affinity mask, another driver order). A process
// that never asked its devices' properties is matched by its position in the list zeDeviceGet
// gave it, which is right only when both views list the same devices in the same order.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "correlate/pid_handle.h"
#include "model/ze_events.h"

namespace xtrace {

// ze_device_uuid_t's 16 bytes as two little-endian words, as the probe copies them.
struct DeviceUuid {
  uint64_t lo = 0;
  uint64_t hi = 0;
  bool operator==(const DeviceUuid&) const = default;
  // The 16 bytes in hex, in memory order.
  std::string Hex() const;
};

class ZeDeviceTable {
 public:
  // The process's zeDeviceGet listed `handle` at `position`.
  void Learn(uint32_t pid, uint64_t handle, uint32_t position) {
    position_[{pid, handle}] = position;
  }

  // The process's zeDeviceGetProperties said `handle` is the device `uuid`. False when xtrace
  // knows its own devices' UUIDs and none is this one (the handle is then of no known device).
  bool LearnUuid(uint32_t pid, uint64_t handle, const DeviceUuid& uuid);

  // xtrace's device number; kUnknownDevice if it matched none of xtrace's devices, or if the
  // process enumerated its devices before the capture began, unless there is only one.
  uint32_t IndexOf(uint32_t pid, uint64_t handle) const {
    if (auto it = matched_.find({pid, handle}); it != matched_.end()) return it->second;
    if (auto it = position_.find({pid, handle}); it != position_.end()) return it->second;
    return Fallback();
  }

  // The device of an object whose device handle was never seen: xtrace's only device, unless
  // a process has shown a device that is not xtrace's.
  uint32_t Fallback() const {
    return known_devices_ == 1 && !saw_foreign_device_ ? 0 : kUnknownDevice;
  }

  // How many devices xtrace's own Level Zero sees (0 if it has none).
  void set_known_devices(uint32_t n) { known_devices_ = n; }
  // Their UUIDs, by device number (empty: unknown, devices are matched by position).
  void set_known_uuids(std::vector<DeviceUuid> uuids) { known_uuids_ = std::move(uuids); }

  size_t size() const { return position_.size(); }

 private:
  std::unordered_map<PidHandle, uint32_t, PidHandleHash> position_;
  std::unordered_map<PidHandle, uint32_t, PidHandleHash> matched_;  // by UUID
  uint32_t known_devices_ = 0;
  std::vector<DeviceUuid> known_uuids_;
  bool saw_foreign_device_ = false;
};

}  // namespace xtrace
