// ChromeJsonWriter: streams Chrome trace-event JSON (the format ui.perfetto.dev and
// chrome://tracing open) with its own output buffer: no DOM, no iostreams, memory flat in the
// trace size, and always valid JSON and UTF-8 whatever bytes the names contain.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/unique_fd.h"

namespace xtrace {

// One entry of an event's "args" object (or of "otherData"). Keys and string values are
// views: they must outlive the call they are passed to, nothing more.
struct TraceArg {
  enum class Kind { kInt, kUint, kHex, kString, kBool };

  static TraceArg Int(std::string_view key, int64_t v) { return {key, Kind::kInt, v, 0, {}}; }
  static TraceArg Uint(std::string_view key, uint64_t v) { return {key, Kind::kUint, 0, v, {}}; }
  // "0x7f1c2a40": handles are 64-bit and JSON viewers read numbers as doubles (exact only
  // below 2^53), so they go out as strings, in the hex people compare with debug logs.
  static TraceArg Hex(std::string_view key, uint64_t v) { return {key, Kind::kHex, 0, v, {}}; }
  static TraceArg String(std::string_view key, std::string_view v) {
    return {key, Kind::kString, 0, 0, v};
  }
  static TraceArg Bool(std::string_view key, bool v) { return {key, Kind::kBool, v, 0, {}}; }

  std::string_view key;
  Kind kind;
  int64_t int_value;
  uint64_t uint_value;
  std::string_view string_value;
};

class ChromeJsonWriter {
 public:
  // Writes to `fd`, which stays the caller's; `name` names the output in error messages.
  ChromeJsonWriter(int fd, std::string name);
  // Creates (truncates) `path`; "-" is standard output.
  static Result<std::unique_ptr<ChromeJsonWriter>> Create(const std::string& path);
  ~ChromeJsonWriter();
  ChromeJsonWriter(const ChromeJsonWriter&) = delete;
  ChromeJsonWriter& operator=(const ChromeJsonWriter&) = delete;

  // Metadata ("ph":"M"): names and order of process and thread tracks.
  void ProcessName(uint32_t pid, std::string_view name, std::span<const TraceArg> args = {});
  void ProcessSortIndex(uint32_t pid, int64_t index);
  void ThreadName(uint32_t pid, uint32_t tid, std::string_view name);

  // A span ("ph":"X"). Times are CLOCK_MONOTONIC ns, written as µs with three decimals.
  void Complete(std::string_view name, std::string_view category, uint32_t pid, uint32_t tid,
                uint64_t ts_ns, uint64_t dur_ns, std::span<const TraceArg> args = {});
  // The same with a name already in JSON form (AppendJsonString's output, quotes included),
  // for a converter that writes the same names millions of times and escapes each once.
  struct QuotedName {
    std::string_view json;
  };
  void Complete(QuotedName name, std::string_view category, uint32_t pid, uint32_t tid,
                uint64_t ts_ns, uint64_t dur_ns, std::span<const TraceArg> args = {});

  // A nestable async span: a "b" event at ts_ns and an "e" event at ts_ns + dur_ns with the
  // same category, name and id (written as a string). Viewers give such spans tracks of their
  // own, so spans that overlap without nesting stay readable. `id` must be unique per span.
  void AsyncSpan(std::string_view name, std::string_view category, uint32_t pid, uint32_t tid,
                 uint64_t id, uint64_t ts_ns, uint64_t dur_ns,
                 std::span<const TraceArg> args = {});

  // A point in time ("ph":"i") on a thread, process or globally.
  enum class InstantScope { kThread, kProcess, kGlobal };
  void Instant(std::string_view name, std::string_view category, uint32_t pid, uint32_t tid,
               uint64_t ts_ns, InstantScope scope, std::span<const TraceArg> args = {});

  // One end of a flow arrow ("ph":"s" starts it, "ph":"f" ends it; the two share `id`). Each
  // end attaches to the slice enclosing `ts_ns` on its thread.
  enum class FlowPhase { kStart, kEnd };
  void Flow(FlowPhase phase, std::string_view name, std::string_view category, uint32_t pid,
            uint32_t tid, uint64_t ts_ns, uint64_t id);

  // A sample of one or more counter series ("ph":"C"); each arg is a series.
  void Counter(std::string_view name, uint32_t pid, uint64_t ts_ns,
               std::span<const TraceArg> series);

  // Closes the event array, writes "displayTimeUnit" and "otherData" (facts about the whole
  // trace) and flushes. Returns the first error (write errors are latched until here). A
  // writer destroyed without Finish leaves the output unterminated.
  Status Finish(std::span<const TraceArg> other_data = {});

  // True when the output is a regular file (not standard output, a pipe or a device):
  // only such an output may be deleted after a failure.
  bool writes_regular_file() const { return regular_file_; }

  uint64_t events_written() const { return events_; }
  uint64_t bytes_written() const { return bytes_flushed_ + buffer_.size(); }

  // Appends `text` as a JSON string literal: quotes, backslash and control characters
  // escaped, invalid UTF-8 replaced by U+FFFD. Public for tests and other writers.
  static void AppendJsonString(std::string* out, std::string_view text);
  // Appends ns as µs with exactly three decimals, computed from the integer (no doubles).
  static void AppendMicros(std::string* out, uint64_t ns);

 private:
  void BeginEvent(std::string_view ph, uint32_t pid, uint32_t tid);
  // A complete event up to and including "name": (the caller appends the name), and after it.
  void BeginComplete(std::string_view category, uint32_t pid, uint32_t tid, uint64_t ts_ns,
                     uint64_t dur_ns);
  void EndComplete(std::span<const TraceArg> args);
  void EndEvent();
  void AppendArgs(std::span<const TraceArg> args);        // {"k":v,...}
  void AppendArgMembers(std::span<const TraceArg> args);  // "k":v,...
  void AppendUint(uint64_t v);
  void AppendInt(int64_t v);
  void FlushBuffer();

  UniqueFd owned_fd_;
  int fd_;
  std::string name_;
  std::string buffer_;
  uint64_t bytes_flushed_ = 0;
  uint64_t events_ = 0;
  Status error_;
  bool finished_ = false;
  bool regular_file_ = false;
};

}  // namespace xtrace
