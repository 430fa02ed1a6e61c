// Fuzzes `xtrace convert` end to end on a log in memory (salvage on, as a user with a damaged
// log would run it): whatever the log holds, the output must be one valid JSON document,
// UTF-8 included — it is parsed back with nlohmann::json, which rejects invalid UTF-8.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "export/converter.h"
#include "memory_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static xtrace::fuzz::MemoryFile in;
  static xtrace::fuzz::MemoryFile out;
  if (!in.ok() || !out.ok() || !in.Write(data, size) || !out.Write(nullptr, 0)) __builtin_trap();

  xtrace::ConvertOptions options;
  options.salvage = true;
  xtrace::ConvertStats stats;
  const xtrace::Status st = xtrace::ConvertLogToChromeJson(in.path(), out.path(), options, &stats);
  if (!st.ok()) return 0;  // not an xtrace log at all: nothing is written
  const std::string json = out.Read();
  if (!nlohmann::json::accept(json)) __builtin_trap();  // the converter wrote invalid JSON
  return 0;
}
