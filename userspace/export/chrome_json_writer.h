// ChromeJsonWriter: streams Chrome trace-event JSON (the format ui.perfetto.dev and
// chrome://tracing open) with its own output buffer: no DOM, no iostreams, memory flat in the
// trace size, and always valid JSON and UTF-8 whatever bytes the names contain.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/status.h"
#include "export/byte_buffer.h"
#include "export/output_file.h"
#include "export/trace_writer.h"

namespace xtrace {

class ChromeJsonWriter final : public TraceWriter {
 public:
  explicit ChromeJsonWriter(OutputFile out);
  // Creates (truncates) `path`; "-" is standard output.
  static Result<std::unique_ptr<ChromeJsonWriter>> Create(const std::string& path);
  ~ChromeJsonWriter() override;
  ChromeJsonWriter(const ChromeJsonWriter&) = delete;
  ChromeJsonWriter& operator=(const ChromeJsonWriter&) = delete;

  // JSON times are plain CLOCK_MONOTONIC; the anchor gives "baseTimeNanoseconds" (the
  // CLOCK_REALTIME of time 0, so wall time = ts + base, as PyTorch's profiler means it).
  void Clocks(const ClockAnchor& anchor) override { clocks_ = anchor; }
  // "deviceProperties" and "distributedInfo", written with "schemaVersion" and
  // "baseTimeNanoseconds" ahead of "traceEvents", where readers that stop at the events
  // (Holistic Trace Analysis) look for them.
  void Describe(const TraceDescription& description) override;

  // Metadata ("ph":"M").
  void ProcessName(uint32_t pid, std::string_view name, std::span<const TraceArg> args = {}) override;
  void ProcessSortIndex(uint32_t pid, int64_t index) override;
  void ThreadName(uint32_t pid, uint32_t tid, std::string_view name) override;

  // "ph":"X", times written as µs with three decimals.
  void Complete(std::string_view name, std::string_view category, uint32_t pid, uint32_t tid,
                uint64_t ts_ns, uint64_t dur_ns, std::span<const TraceArg> args = {}) override;
  // The name is escaped once per key and reused: kernel names recur on every launch and run to
  // a thousand characters.
  void Complete(RecurringName name, std::string_view category, uint32_t pid, uint32_t tid,
                uint64_t ts_ns, uint64_t dur_ns, std::span<const TraceArg> args = {}) override;

  // A "b" event at ts_ns and an "e" event at ts_ns + dur_ns with the same category, name and
  // id (written as a string).
  void AsyncSpan(std::string_view name, std::string_view category, uint32_t pid, uint32_t tid,
                 uint64_t id, uint64_t ts_ns, uint64_t dur_ns,
                 std::span<const TraceArg> args = {}) override;

  // "ph":"i" with "s" t, p or g.
  void Instant(std::string_view name, std::string_view category, uint32_t pid, uint32_t tid,
               uint64_t ts_ns, InstantScope scope, std::span<const TraceArg> args = {}) override;

  // "ph":"s" starts an arrow, "ph":"f" ends it.
  void Flow(FlowPhase phase, std::string_view name, std::string_view category, uint32_t pid,
            uint32_t tid, uint64_t ts_ns, uint64_t id) override;

  // "ph":"C".
  void Counter(std::string_view name, uint32_t pid, uint64_t ts_ns,
               std::span<const TraceArg> series) override;

  // Closes the event array, writes "displayTimeUnit" and "otherData" and flushes.
  Status Finish(std::span<const TraceArg> other_data = {}) override;

  bool writes_regular_file() const override { return out_.regular_file(); }
  uint64_t events_written() const override { return events_; }
  uint64_t bytes_written() const override { return out_.bytes_written() + buffer_.size(); }
  uint64_t trace_bytes() const override { return out_.bytes_given() + buffer_.size(); }

  // Appends `text` as a JSON string literal: quotes, backslash and control characters
  // escaped, invalid UTF-8 replaced by U+FFFD. Public for tests and other writers.
  // Out is std::string or ByteBuffer.
  template <typename Out>
  static void AppendJsonString(Out* out, std::string_view text);
  // Appends ns as µs with exactly three decimals, computed from the integer (no doubles).
  template <typename Out>
  static void AppendMicros(Out* out, uint64_t ns);

 private:
  // The trace object's first key, once.
  void OpenObject();
  // The rest of its opening up to the event array, once, before the first event.
  void Start();
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

  OutputFile out_;
  ByteBuffer buffer_;
  uint64_t events_ = 0;
  Status finish_status_;
  bool finished_ = false;
  bool opened_ = false;
  bool started_ = false;
  ClockAnchor clocks_;
  std::unordered_map<uint64_t, std::string> recurring_;  // RecurringName key -> JSON string
};

}  // namespace xtrace
