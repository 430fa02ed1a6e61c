// Decodes the records of threads a source's BPF program held to do something in them (a
// query hold, include/xtrace/hold.h): the capture hands each to the source that serves it
// (ProbeSource::OnHold) before any other record is looked at. They never become events.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "base/status.h"
#include "xtrace/records.h"

namespace xtrace {

// A thread held at a probed instruction.
struct DecodedHold {
  xt_record_header hdr;  // its type says which hold; start_ns: when the thread was stopped
  uint64_t ip = 0;       // the probed instruction it stopped at (it is there or just past it)
};

// True for the record types of held threads.
bool IsHoldRecordType(uint16_t type);

// Decodes one such record, checking its size; never reads past `data`.
Result<DecodedHold> DecodeHoldRecord(std::span<const std::byte> data);

}  // namespace xtrace
