// Decoding of the ITT records (xt_itt_name, xt_itt_event, xt_itt_state in
// include/xtrace/records.h), size-checked like every other record.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "base/status.h"
#include "xtrace/records.h"

namespace xtrace {

struct DecodedIttName {
  xt_record_header hdr;
  uint64_t handle;         // 0 for a thread name
  uint32_t kind;           // enum xt_itt_name_kind
  std::string_view text;   // points into the decoded buffer
};

struct DecodedIttEvent {
  xt_record_header hdr;
  uint64_t domain;         // handle, 0 for PyTorch
  uint64_t name;           // handle, 0 if none or inline
  uint64_t id[2];
  uint64_t extra;
  uint16_t op;             // enum xt_itt_op
  uint16_t origin;         // enum xt_itt_origin
  std::string_view inline_name;  // PyTorch ranges; points into the decoded buffer
};

struct DecodedIttState {
  xt_record_header hdr;
  uint32_t state;     // enum xt_collection_state
  uint32_t previous;
};

// Each expects `data` to be exactly the record (header size already checked against it).
Result<DecodedIttName> DecodeIttName(std::span<const std::byte> data);
Result<DecodedIttEvent> DecodeIttEvent(std::span<const std::byte> data);
Result<DecodedIttState> DecodeIttState(std::span<const std::byte> data);

}  // namespace xtrace
