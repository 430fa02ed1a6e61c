// Where a capture's events go: the correlator's output is appended to the log, each rotated
// file starts with the identities it is given (the processes and threads the log knows, as
// the correlator's ProcessIdentities said them), and the per-file tallies its summary gives
// are kept (records per process and source, events, ring drops). Who a process is, and what
// to call it, is the process table's (ProcessTable::NameOf).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "correlate/event_sink.h"
#include "log/log_writer.h"
#include "model/event_tap.h"

namespace xtrace {

// Records per process and source, over one file or the whole capture.
struct RecordTally {
  std::map<uint32_t, std::map<std::string, uint64_t>> records;  // pid -> source -> records
  void Add(uint32_t pid, std::string_view family) { ++records[pid][std::string(family)]; }
};

class LogSink final : public EventSink {
 public:
  // `writer` goes on in each new file (LogWriter::ContinueInNewFile) and outlives the sink, as
  // does `tap` (fed every event; may be null).
  explicit LogSink(LogWriter& writer, EventTap* tap = nullptr) : writer_(writer), tap_(tap) {}

  void OnEvent(const Event& event) override;
  void OnIttTask(const IttTask& task) override;

  // A record of source `family` from `pid` was read (counted for this file and in all).
  void CountRecord(uint32_t pid, std::string_view family);

  // The writer has just gone on in a new file. Its tallies start here, from the ring's
  // running drop totals now; `identities` (ProcessIdentities::Written: every process and
  // thread the log knows) are written first, so the file reads on its own.
  void BeginFile(uint64_t dropped_total, const std::map<uint32_t, uint64_t>& drops_total,
                 const std::vector<Event>& identities);

  // What the current file lost in the ring, given the ring's running totals.
  uint64_t FileDropped(uint64_t dropped_total) const { return dropped_total - file_dropped_base_; }
  std::map<uint32_t, uint64_t> FileDropsByPid(const std::map<uint32_t, uint64_t>& drops_total) const;
  // What the current file lost, by source, from the RecordsDropped events it holds.
  std::vector<std::pair<std::string, uint64_t>> FileDroppedBySource() const;

  uint64_t events() const { return events_; }
  uint64_t file_events() const { return file_events_; }
  const RecordTally& file_tally() const { return file_tally_; }
  const RecordTally& total_tally() const { return total_tally_; }

 private:
  LogWriter& writer_;
  EventTap* tap_;
  uint64_t events_ = 0;
  uint64_t file_events_ = 0;
  RecordTally file_tally_, total_tally_;
  // The counters CountRecord bumped last (map nodes stay put): the next record is mostly of
  // the same process and source.
  struct LastCount {
    uint32_t pid = 0;
    const std::string* family = nullptr;  // the file tally's key
    uint64_t* file = nullptr;
    uint64_t* total = nullptr;
  } last_;
  uint64_t file_dropped_base_ = 0;
  RecordsDropped file_dropped_;  // summed from this file's RecordsDropped events
  std::map<uint32_t, uint64_t> file_drops_base_;
};

}  // namespace xtrace
