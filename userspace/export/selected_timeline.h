// SelectedTimeline: what stands between the exporters of one or many logs and the trace
// writer when `xtrace convert` selects part of a capture (--from/--to, --name) or puts
// several logs on one time axis. Each log writes through an input of its own (Input()),
// which moves its times onto the trace's clock and keeps its pids, tids and ids apart from
// the other logs'; the timeline then keeps what the selection asks for:
//   - spans that reach into the window [from, to), whole (not clipped: their duration stays
//     the measured one); instants inside it;
//   - flows whose two ends both lie in the window (an arrow to a slice that is not there
//     would mislead); with --name none, as their other ends are calls the pattern does not
//     name; flow ids are renumbered, so the logs' ids never collide;
//   - device work whose submitting call was left out keeps its slice, its correlation made
//     0 (Kineto's "none"): a correlation must name a host call in the trace;
//   - counters inside the window, and each counter's last value before it, at the window's
//     start, so the window starts with the right level;
//   - process and thread names of the processes with something in the window, each written
//     once (the rotated files of a capture each name every live process again).
// Memory: names per process and thread, the last counter values, the flows whose end has not
// come yet (the exporters write the two ends together) and the kept calls' correlation ids as
// ranges (a window keeps runs of consecutive calls) — nothing per event.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "export/id_ranges.h"
#include "export/trace_writer.h"

namespace xtrace {

struct TimelineSelection {
  uint64_t from_ns = 0;          // on the trace's clock
  uint64_t to_ns = UINT64_MAX;
  const std::regex* name = nullptr;  // spans and instants whose name matches (searched)
};

// How one log's events land on the timeline.
struct TimelineInput {
  int64_t offset_ns = 0;   // added to every time: the log's clock -> the trace's clock
  // 0 for the first host: pids and tids as they are; host N > 0: pid and tid become
  // N << 22 | pid (Linux ids stay below 2^22), its GPUs move past the first host's.
  uint32_t host_index = 0;
  // Captures of one machine share its pids but number their GPU queue tracks each from 1:
  // capture N > 0 of a machine moves its GPU tracks to N << 24 | track.
  uint32_t capture_index = 0;
  std::string host;        // appended to process names when the trace has several hosts
  bool label_host = false;
};

class SelectedTimeline {
 public:
  SelectedTimeline(TraceWriter& out, TimelineSelection selection);
  ~SelectedTimeline();

  // The writer log N's exporters write through (N counts from 0 in call order). The
  // reference stays valid as long as the timeline.
  TraceWriter& AddInput(const TimelineInput& input);

  void Clocks(const ClockAnchor& anchor) { out_.Clocks(anchor); }
  // Writes the counters' values at the window's start, then finishes the output.
  Status Finish(std::span<const TraceArg> other_data);

  uint64_t spans_kept() const { return spans_kept_; }
  uint64_t spans_dropped() const { return spans_dropped_; }
  uint64_t flows_dropped() const { return flows_dropped_; }

 private:
  class Input;
  friend class Input;
  struct StoredArg {
    std::string key, value;
  };
  struct ProcessEntry {
    std::string name;
    std::vector<StoredArg> args;
    std::optional<int64_t> sort_index;
    bool named = false;
    std::string written;  // the name last written (rotated files repeat it)
    std::optional<int64_t> written_sort_index;
  };
  struct ThreadEntry {
    std::string name, written;
  };
  struct CarriedCounter {
    uint64_t ts_ns = 0;
    std::vector<std::pair<std::string, TraceArg>> series;  // key owned by .first
  };
  struct PendingFlow {
    std::string name, category;
    uint32_t pid, tid;
    uint64_t ts_ns;
  };

  bool InWindow(uint64_t ts_ns) const { return ts_ns >= sel_.from_ns && ts_ns < sel_.to_ns; }
  bool SpanInWindow(uint64_t ts_ns, uint64_t dur_ns) const {
    return ts_ns < sel_.to_ns && (ts_ns >= sel_.from_ns || dur_ns >= sel_.from_ns - ts_ns);
  }
  bool NameSelected(std::string_view name);
  // The process gets its names written before its first event.
  void Activate(uint32_t pid);
  void WriteProcessName(uint32_t pid, ProcessEntry& p);
  void WriteThreadName(uint32_t pid, uint32_t tid, ThreadEntry& t);

  TraceWriter& out_;
  TimelineSelection sel_;
  std::vector<std::unique_ptr<Input>> inputs_;
  std::set<uint32_t> active_;
  std::map<uint32_t, ProcessEntry> processes_;
  std::map<std::pair<uint32_t, uint32_t>, ThreadEntry> threads_;
  std::map<std::pair<uint32_t, std::string>, CarriedCounter> carried_;
  std::unordered_map<std::string, bool> name_matches_;
  uint64_t next_flow_id_ = FlowIds::kRenumberedBase;
  // Whether anything is left out (a window or a name): only then can device work lose its call.
  bool selecting() const {
    return sel_.name || sel_.from_ns > 0 || sel_.to_ns < UINT64_MAX;
  }
  // With a selection: the correlation ids of the host calls kept (each log numbers its own
  // apart). A call is written before the device work it submitted, which completes later.
  IdRanges kept_calls_;
  uint64_t spans_kept_ = 0, spans_dropped_ = 0, flows_dropped_ = 0;
};

}  // namespace xtrace
