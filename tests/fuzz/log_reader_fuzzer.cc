// Fuzzes the event-log reader: framing (PackedFrameInput), packed decoding, the batch checks
// and every event codec, on a log held in memory. The reader promises that whatever the bytes,
// it returns events or one error, and that every string id an event carries is in its table.
#include <cstddef>
#include <cstdint>

#include "log/event_codec.h"
#include "log/log_reader.h"
#include "memory_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static xtrace::fuzz::MemoryFile file;
  if (!file.ok() || !file.Write(data, size)) __builtin_trap();

  auto reader = xtrace::LogReader::Open(file.path());
  if (!reader.ok()) return 0;
  xtrace::Event event;
  while (true) {
    auto more = reader->Next(&event);
    if (!more.ok() || !*more) break;
    xtrace::log_codec::ForEachStringId(event, [&](xtrace::StringId id) {
      if (!reader->strings().Find(id)) __builtin_trap();  // a string id the reader let through
    });
  }
  // An error is sticky: a reader that failed once must keep failing, not resume mid-log.
  auto again = reader->Next(&event);
  if (again.ok() && *again) __builtin_trap();
  return 0;
}
