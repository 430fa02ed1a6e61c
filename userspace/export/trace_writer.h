// TraceWriter: what the exporters write a timeline through, whatever the output format (Chrome
// JSON, Perfetto protobuf). The vocabulary is the trace-event one (pid/tid tracks, spans,
// instants, flow ends, counters) because every exporter already speaks it; each writer maps it
// onto its format.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "export/trace_layout.h"
#include "model/log_header.h"

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


// A name written many times (a kernel name on every launch): writers may keep its encoded
// form under `key`, which must name the same text for the whole trace.
struct RecurringName {
  uint64_t key;
  std::string_view text;
};

// What a whole trace is of, known before its first event: the devices and the distributed job.
// Chrome JSON writes it where PyTorch's profiler puts it, ahead of the events
// (docs/kineto-json.md).
struct TraceDescription {
  struct Device {
    uint32_t id = 0;  // index, as the device tracks and the operations' "device" number it
    std::string name;
    uint64_t timer_hz = 0;
    uint32_t kernel_timestamp_bits = 0;
  };
  std::vector<Device> devices;  // by id
  std::vector<int32_t> ranks;   // the distinct ranks the traced processes recorded, ascending
  std::optional<int32_t> world_size;
};

// The ranges the trace's flow ids are drawn from, one per kind of arrow, so that no two
// arrows share an id. All stay below 2^53, which a JSON reader's double holds exactly.
struct FlowIds {
  // Kineto's launch arrows (ac2g) carry the correlation id, which is also an argument on both
  // ends' slices; log i of a merge numbers its correlations from i * 2^32 + 1, below kWaitBase.
  // Operation -> the host call that saw it complete: this base plus the operation's id.
  static constexpr uint64_t kWaitBase = uint64_t{1} << 48;
  // API call -> the DRM ioctl it issued: this base plus a count.
  static constexpr uint64_t kDrmBase = uint64_t{1} << 50;
  // Arrows a selection or merge renumbers (everything but the launch arrows).
  static constexpr uint64_t kRenumberedBase = uint64_t{1} << 52;
};

class TraceWriter {
 public:
  virtual ~TraceWriter() = default;

  // The host clocks read together at the start of the capture: where a format can say which
  // clock its times are on and how it maps to wall time, it says so.
  virtual void Clocks(const ClockAnchor& anchor) = 0;

  // Called at most once, after Clocks and before any event; a format without a place for it
  // ignores it.
  virtual void Describe(const TraceDescription&) {}

  // Names and order of process and thread tracks.
  virtual void ProcessName(uint32_t pid, std::string_view name,
                           std::span<const TraceArg> args = {}) = 0;
  virtual void ProcessSortIndex(uint32_t pid, int64_t index) = 0;
  virtual void ThreadName(uint32_t pid, uint32_t tid, std::string_view name) = 0;

  // A span on a thread's track. Times are CLOCK_MONOTONIC ns.
  virtual void Complete(std::string_view name, std::string_view category, uint32_t pid,
                        uint32_t tid, uint64_t ts_ns, uint64_t dur_ns,
                        std::span<const TraceArg> args = {}) = 0;
  virtual void Complete(RecurringName name, std::string_view category, uint32_t pid, uint32_t tid,
                        uint64_t ts_ns, uint64_t dur_ns, std::span<const TraceArg> args = {}) = 0;

  // A span that may overlap others of its process without nesting: viewers give such spans
  // tracks of their own. `id` must be unique per span.
  virtual void AsyncSpan(std::string_view name, std::string_view category, uint32_t pid,
                         uint32_t tid, uint64_t id, uint64_t ts_ns, uint64_t dur_ns,
                         std::span<const TraceArg> args = {}) = 0;

  // A point in time on a thread, process or globally.
  enum class InstantScope { kThread, kProcess, kGlobal };
  virtual void Instant(std::string_view name, std::string_view category, uint32_t pid,
                       uint32_t tid, uint64_t ts_ns, InstantScope scope,
                       std::span<const TraceArg> args = {}) = 0;

  // One end of a flow arrow (the two share `id`). Each end attaches to the span enclosing
  // `ts_ns` on its thread. Ids are unique across the whole trace, whatever the category (see
  // FlowIds below): Perfetto pairs JSON flows by id, category and name, but other viewers pair
  // them by id alone.
  enum class FlowPhase { kStart, kEnd };
  virtual void Flow(FlowPhase phase, std::string_view name, std::string_view category,
                    uint32_t pid, uint32_t tid, uint64_t ts_ns, uint64_t id) = 0;

  // A sample of one or more counter series; each arg is a series.
  virtual void Counter(std::string_view name, uint32_t pid, uint64_t ts_ns,
                       std::span<const TraceArg> series) = 0;

  // Ends the trace with facts about it as a whole and flushes. Returns the first error (write
  // errors are latched until here). A writer destroyed without Finish leaves the output
  // unterminated.
  virtual Status Finish(std::span<const TraceArg> other_data = {}) = 0;

  // True when the output is a regular file (not standard output, a pipe or a device):
  // only such an output may be deleted after a failure.
  virtual bool writes_regular_file() const = 0;
  virtual uint64_t events_written() const = 0;
  virtual uint64_t bytes_written() const = 0;
  // The trace's own bytes, before any compression: what a viewer loads.
  virtual uint64_t trace_bytes() const { return bytes_written(); }
};

}  // namespace xtrace
