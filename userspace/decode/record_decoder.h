// Turns raw ring-buffer records (bytes written by the BPF programs, layouts in
// include/xtrace/records.h) into typed records, checking every size before reading.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <variant>

#include "base/status.h"
#include "decode/itt_records.h"
#include "xtrace/records.h"

namespace xtrace {

struct DecodedKernelCreate {
  xt_record_header hdr;
  uint64_t module;
  uint64_t kernel;
  int32_t result;
  std::string_view name;  // points into the decoded buffer: copy or intern before it is reused
};

struct DecodedLaunchKernel {
  xt_record_header hdr;
  uint64_t command_list;
  uint64_t kernel;
  uint64_t signal_event;
  uint32_t group_count[3];
  uint32_t num_wait_events;
  int32_t result;
};

struct DecodedThreadName {
  xt_record_header hdr;
  std::string_view comm;          // points into the decoded buffer
  std::string_view process_comm;  // likewise
};

using DecodedRecord = std::variant<DecodedKernelCreate, DecodedLaunchKernel, DecodedThreadName,
                                   DecodedIttName, DecodedIttEvent, DecodedIttState>;

// Decodes one record. A short, oversized or unknown record yields an error naming the type
// and the sizes involved; it never reads past `data`.
Result<DecodedRecord> DecodeRecord(std::span<const std::byte> data);

// The header every record starts with (for callers that only need type, pid or times).
const xt_record_header& HeaderOf(const DecodedRecord& record);

}  // namespace xtrace
