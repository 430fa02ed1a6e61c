// PerfettoWriter: streams a native Perfetto trace (a protobuf `Trace` of `TracePacket`s, the
// format ui.perfetto.dev and trace_processor read best) through the TraceWriter vocabulary:
//   - processes and threads are process and thread track descriptors; a pid from
//     kFirstSyntheticPid up (a GPU) is a track tree of its own, its "threads" (engines,
//     queues) child tracks; tids from kFirstSyntheticTid up (driver lanes) are child tracks of
//     their process; every custom track refuses the viewer's merging of same-named siblings;
//   - spans are TYPE_SLICE_BEGIN/END pairs, instants TYPE_INSTANT, counters counter tracks;
//   - names, categories, argument names and short argument strings are interned per packet
//     sequence; when the tables grow past a bound the sequence's incremental state is cleared
//     (sequence_flags 1) and they start again, so memory stays flat in the trace size;
//   - a flow end lands on the span just written when it falls inside it (flow_ids, or
//     terminating_flow_ids for an end), elsewhere on an instant inside the enclosing span;
//     viewers order a flow's events by time, which is the arrow's direction;
//   - times are CLOCK_MONOTONIC ns, declared as the trace's clock with a clock snapshot that
//     also relates it to CLOCK_REALTIME and CLOCK_MONOTONIC_RAW.
// Field numbers are those of Perfetto's published perfetto_trace.proto.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "export/byte_buffer.h"
#include "export/lane_packing.h"
#include "export/output_file.h"
#include "export/trace_writer.h"

namespace xtrace {

class PerfettoWriter final : public TraceWriter {
 public:
  // Interning bound: entries across the tables before the sequence's state is cleared.
  static constexpr size_t kDefaultMaxInterned = 1 << 16;
  // Packets of one writer share this trusted_packet_sequence_id.
  static constexpr uint32_t kSequenceId = 1;

  explicit PerfettoWriter(OutputFile out, size_t max_interned = kDefaultMaxInterned);
  static Result<std::unique_ptr<PerfettoWriter>> Create(const std::string& path);
  ~PerfettoWriter() override;
  PerfettoWriter(const PerfettoWriter&) = delete;
  PerfettoWriter& operator=(const PerfettoWriter&) = delete;

  void Clocks(const ClockAnchor& anchor) override;
  void ProcessName(uint32_t pid, std::string_view name, std::span<const TraceArg> args = {}) override;
  void ProcessSortIndex(uint32_t pid, int64_t index) override;
  void ThreadName(uint32_t pid, uint32_t tid, std::string_view name) override;
  void Complete(std::string_view name, std::string_view category, uint32_t pid, uint32_t tid,
                uint64_t ts_ns, uint64_t dur_ns, std::span<const TraceArg> args = {}) override;
  void Complete(RecurringName name, std::string_view category, uint32_t pid, uint32_t tid,
                uint64_t ts_ns, uint64_t dur_ns, std::span<const TraceArg> args = {}) override;
  void AsyncSpan(std::string_view name, std::string_view category, uint32_t pid, uint32_t tid,
                 uint64_t id, uint64_t ts_ns, uint64_t dur_ns,
                 std::span<const TraceArg> args = {}) override;
  void Instant(std::string_view name, std::string_view category, uint32_t pid, uint32_t tid,
               uint64_t ts_ns, InstantScope scope, std::span<const TraceArg> args = {}) override;
  void Flow(FlowPhase phase, std::string_view name, std::string_view category, uint32_t pid,
            uint32_t tid, uint64_t ts_ns, uint64_t id) override;
  void Counter(std::string_view name, uint32_t pid, uint64_t ts_ns,
               std::span<const TraceArg> series) override;
  // The facts go on an instant "xtrace capture" at the start of the trace, on a track of that
  // name.
  Status Finish(std::span<const TraceArg> other_data = {}) override;

  bool writes_regular_file() const override { return out_.regular_file(); }
  uint64_t events_written() const override { return events_; }
  uint64_t bytes_written() const override { return out_.bytes_written() + buffer_.size(); }
  uint64_t trace_bytes() const override { return out_.bytes_given() + buffer_.size(); }
  // How many times the interning tables were cleared (for tests).
  uint64_t incremental_state_clears() const { return clears_; }

 private:
  // Transparent hashing: look strings up by view without building a std::string.
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using InternTable = std::unordered_map<std::string, uint64_t, StringHash, std::equal_to<>>;

  struct Track {
    uint64_t uuid = 0;
    bool described = false;
    std::string name;
  };
  struct Lanes {
    LanePacking packing;
    std::vector<uint64_t> uuids;  // each lane's track
  };

  bool IsDevice(uint32_t pid) const { return pid >= kFirstSyntheticPid; }
  uint64_t ProcessTrack(uint32_t pid);
  uint64_t ThreadTrack(uint32_t pid, uint32_t tid);
  uint64_t CounterTrack(uint32_t pid, std::string_view name);
  uint64_t LaneTrack(uint32_t pid, std::string_view category, uint64_t start, uint64_t end);
  void DescribeProcess(uint32_t pid, Track& track, std::span<const TraceArg> args);
  void DescribeThread(uint32_t pid, uint32_t tid, Track& track);

  // Starts the sequence (first packet), or clears its incremental state when the interning
  // tables are full. Called before an event is encoded.
  void PrepareSequence();
  uint64_t Intern(InternTable& table, uint32_t interned_field, std::string_view text);
  uint64_t InternName(std::string_view name) { return Intern(names_, 2, name); }
  // Encodes a TrackEvent body into event_ (type, track, name, category, args).
  void EncodeEvent(uint32_t type, uint64_t track, uint64_t name_iid, std::string_view category,
                   std::span<const TraceArg> args);
  void EncodeArgs(std::span<const TraceArg> args);
  // Writes interned entries gathered while encoding, then the event as one packet.
  void EmitEvent(uint64_t ts_ns);
  void EmitInterned();
  void BeginSlice(uint64_t track, uint64_t name_iid, std::string_view category, uint64_t ts_ns,
                  uint64_t dur_ns, std::span<const TraceArg> args);
  void FlushPending();
  void EmitTrackDescriptor(std::string_view body);
  void EmitClockSnapshot();
  void MaybeFlushBuffer();

  OutputFile out_;
  size_t max_interned_;
  ByteBuffer buffer_;         // packets waiting to be written
  ByteBuffer event_;          // the TrackEvent being encoded
  ByteBuffer interned_;       // InternedData entries new since the last packet
  ByteBuffer scratch_;        // descriptors and other one-off messages
  uint64_t events_ = 0;
  uint64_t clears_ = 0;
  bool sequence_started_ = false;
  bool finished_ = false;
  Status finish_status_;
  ClockAnchor clocks_;
  bool have_clocks_ = false;
  uint64_t first_ts_ = 0;

  uint64_t next_uuid_ = 1;
  std::unordered_map<uint32_t, Track> processes_;
  std::map<std::pair<uint32_t, uint32_t>, Track> threads_;
  std::map<std::pair<uint32_t, std::string>, uint64_t> counters_;
  std::map<std::pair<uint32_t, std::string>, Lanes> lanes_;
  uint64_t capture_track_ = 0;

  InternTable names_, categories_, arg_names_, arg_strings_;
  // Most names are literals or table entries seen at the same address every time: a small
  // cache by (table, address), checked against the text, saves hashing them on every event.
  struct InternCacheEntry {
    const InternTable* table = nullptr;
    const char* data = nullptr;
    const std::string* text = nullptr;  // the table's key (nodes do not move)
    uint64_t iid = 0;
  };
  static constexpr size_t kInternCacheSize = 1024;
  std::vector<InternCacheEntry> intern_cache_ = std::vector<InternCacheEntry>(kInternCacheSize);
  std::unordered_map<uint64_t, uint64_t> recurring_;  // RecurringName key -> name iid
  uint64_t next_iid_ = 1;

  // The last span, held back so that flow ends which fall inside it attach to it.
  struct PendingSlice {
    bool active = false;
    uint64_t track = 0;
    uint64_t start = 0;
    uint64_t end = 0;
    ByteBuffer event;  // its TrackEvent body
  } pending_;
};

}  // namespace xtrace
