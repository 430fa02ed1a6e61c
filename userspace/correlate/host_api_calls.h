// Which records are host API calls — a thread inside a runtime's entry point from
// hdr.start_ns to hdr.end_ns — and what each is called. Kernel-driver ioctls a thread makes
// inside such a call are attributed to it. Generic over record types: every Level Zero record
// (the skeleton's types and the range 16-63 reserved for Level Zero calls) is one.
#pragma once

#include <cstdint>
#include <string_view>

#include "decode/record_decoder.h"

namespace xtrace {

bool IsHostApiCall(uint16_t record_type);

// The API function a host-call record type stands for; a generic name for types this build
// does not name individually.
std::string_view HostApiCallName(uint16_t record_type);

// The API function a host-call record stands for, by its function where the record says
// (Level Zero's generic calls and launch variants); else as HostApiCallName(type).
std::string_view HostApiCallName(const DecodedRecord& record);

}  // namespace xtrace
