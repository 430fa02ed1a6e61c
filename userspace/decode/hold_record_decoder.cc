// Decoding held threads' records; see hold_record_decoder.h.
#include "decode/hold_record_decoder.h"

#include <cstring>

namespace xtrace {

bool IsHoldRecordType(uint16_t type) { return type == XT_REC_ZE_QUERY_HOLD; }

Result<DecodedHold> DecodeHoldRecord(std::span<const std::byte> data) {
  xt_ze_query_hold rec{};
  if (data.size() < sizeof(rec)) return Status::Error("query hold record too short");
  std::memcpy(&rec, data.data(), sizeof(rec));
  return DecodedHold{rec.hdr, rec.ip};
}

}  // namespace xtrace
