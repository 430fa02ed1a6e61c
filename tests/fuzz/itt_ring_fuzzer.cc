// Fuzzes the reader of the ITT collector's in-process rings: the bytes xtrace copies out of a
// target's memory (control block, ring header, records), which a hostile target controls
// entirely. The decoder must validate them record by record: never crash, never read outside
// the bytes, and never accept more records than the bytes can hold.
#include <cstddef>
#include <cstdint>
#include <span>

#include "decode/itt_ring_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto bytes = std::as_bytes(std::span(data, size));
  const uint64_t valid = xtrace::FuzzIttRingBytes(bytes);
  if (valid > size) __builtin_trap();  // more records than bytes
  return 0;
}
