// Record type ranges -> source names (the allocation is in include/xtrace/records.h).
#include "capture/output/record_families.h"

#include <cstring>

#include "xtrace/records.h"

namespace xtrace {

std::string_view RecordFamily(uint16_t type) {
  if (type == XT_REC_KERNEL_CREATE || type == XT_REC_LAUNCH_KERNEL) return "Level Zero";
  if (type >= 16 && type <= 63) return "Level Zero";
  if (type >= 64 && type <= 79) return "ITT";
  if (type >= 80 && type <= 95) return "DRM";
  if (type >= 112 && type <= 127) return "Python";
  return {};
}

std::string_view RecordFamily(std::span<const std::byte> record) {
  xt_record_header hdr;
  if (record.size() < sizeof(hdr)) return {};
  std::memcpy(&hdr, record.data(), sizeof(hdr));
  if (hdr.type == XT_REC_ITT_NAME && record.size() >= sizeof(xt_itt_name)) {
    xt_itt_name name;
    std::memcpy(&name, record.data(), sizeof(name));
    if (name.kind != XT_ITT_NAME_THREAD) return {};
  }
  return RecordFamily(hdr.type);
}

}  // namespace xtrace
