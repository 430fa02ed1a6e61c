// Matching processes' device handles to xtrace's devices; see ze_devices.h.
#include "correlate/ze_devices.h"

#include <cstdio>

namespace xtrace {

std::string DeviceUuid::Hex() const {
  std::string out;
  char byte[3];
  for (const uint64_t word : {lo, hi}) {
    for (int i = 0; i < 8; ++i) {
      std::snprintf(byte, sizeof(byte), "%02x", static_cast<unsigned>((word >> (8 * i)) & 0xff));
      out += byte;
    }
  }
  return out;
}

bool ZeDeviceTable::LearnUuid(uint32_t pid, uint64_t handle, const DeviceUuid& uuid) {
  if (known_uuids_.empty()) return true;  // nothing to match against: positions stand
  for (uint32_t i = 0; i < known_uuids_.size(); ++i) {
    if (known_uuids_[i] == uuid) {
      matched_[{pid, handle}] = i;
      return true;
    }
  }
  matched_[{pid, handle}] = kUnknownDevice;
  saw_foreign_device_ = true;
  return false;
}

}  // namespace xtrace
