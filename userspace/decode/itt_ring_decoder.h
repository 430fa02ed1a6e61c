// Validation of what xtrace reads from a traced process's ITT fast path (the control block,
// a ring's header, the records in a ring; layout in include/xtrace/itt_ring.h). The target's
// memory is not trusted: every field is checked before it is used, and a record that breaks
// a rule stops the decoding of its ring (its framing can no longer be believed), counted.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "xtrace/itt_ring.h"

namespace xtrace {

// One record of a ring, every field checked against the rules of its op.
struct IttRingRecord {
  uint32_t op = 0;   // enum xt_itt_op: a call the fast path carries (not pause/resume/detach)
  uint32_t tid = 0;  // nonzero, as the target's pid namespace numbers it
  uint64_t time = 0; // raw, in the control block's clock
  uint64_t domain = 0, name = 0;
  uint64_t id[2] = {0, 0};
  uint64_t extra = 0;
  std::string_view text;  // thread names only; points into the decoded bytes
};

// Checks the control block read at `address` in the target: magic, layout version, that it
// names its own address, and its limits. The error says which rule failed.
Status ValidateIttControl(const xt_itt_control& control, uint64_t address);

// The ring entries of a valid control block that may be read (ring_count clamped).
uint32_t IttRingCount(const xt_itt_control& control);

// Checks a ring header read at `address`: magic and a power-of-two size within limits.
Status ValidateIttRing(const xt_itt_ring& ring, uint64_t address);

// Bytes pending in a ring whose consumer position is `read_pos`, or an error when the
// producer claims more than the ring can hold (or less than was already read).
Result<uint64_t> IttRingPending(const xt_itt_ring& ring, uint64_t read_pos);

struct IttRingDecodeStats {
  uint64_t records = 0;
  uint64_t bytes = 0;       // consumed by valid records
  uint64_t malformed = 0;   // 0 or 1: the record that stopped the decoding
  std::string first_error;  // what was wrong with it
};

// Decodes the records laid out in `bytes` (a ring's pending bytes, unwrapped), passing each
// valid one to `out` until the bytes end or a record is malformed.
IttRingDecodeStats DecodeIttRingRecords(std::span<const std::byte> bytes,
                                        const std::function<void(const IttRingRecord&)>& out);

// The fuzzing entry point: treats `bytes` as a control block, a ring header and ring data in
// turn (whatever of them is there) and runs every check above on them. Never crashes, never
// reads outside `bytes`; returns the number of valid records.
uint64_t FuzzIttRingBytes(std::span<const std::byte> bytes);

}  // namespace xtrace
