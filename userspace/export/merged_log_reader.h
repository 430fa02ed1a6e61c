// MergedLogReader: several event logs read as one stream in time order — a k-way merge over
// one LogReader per log, each holding one batch, so memory stays flat in the logs' total
// size. Each log's times move onto the common clock by its offset; an event without a time
// of its own (a process or device identity) keeps its place after its log's previous event.
// Within a log the order is the log's (a device operation is logged after its host calls),
// so the output is in time order across logs and nearly so within each.
#pragma once

#include <cstdint>
#include <optional>
#include <queue>
#include <vector>

#include "base/status.h"
#include "log/log_reader.h"
#include "model/event.h"

namespace xtrace {

// The time an event is placed by (its start), if it has one.
std::optional<uint64_t> EventStartNs(const Event& event);

class MergedLogReader {
 public:
  struct Source {
    LogReader reader;
    int64_t offset_ns = 0;  // the log's clock -> the common clock
  };

  explicit MergedLogReader(std::vector<Source> sources);

  // The next event in merged order and the index of the log it came from; Ok(false) when
  // every log is done. Errors are the readers' (they name the file).
  Result<bool> Next(Event* out, size_t* source);
  // The same without the copy: the event lies in its reader's batch and stays valid until the
  // next call; null when every log is done.
  Result<const Event*> NextEvent(size_t* source);

  // Sets log i's offset (before the first Next: the logs' headers decide it).
  void SetOffset(size_t i, int64_t offset_ns) { sources_[i].source.offset_ns = offset_ns; }

  size_t size() const { return sources_.size(); }
  LogReader& reader(size_t i) { return sources_[i].source.reader; }
  const LogReader& reader(size_t i) const { return sources_[i].source.reader; }
  uint64_t bytes_read() const;
  std::optional<uint64_t> total_size() const;

 private:
  struct Slot {
    Source source;
    const Event* next = nullptr;  // in the reader's batch
    uint64_t key = 0;  // the common clock's time `next` is merged by
    bool primed = false;
  };
  struct Later {
    const std::vector<Slot>* slots;
    bool operator()(size_t a, size_t b) const {
      const Slot& x = (*slots)[a];
      const Slot& y = (*slots)[b];
      return x.key != y.key ? x.key > y.key : a > b;  // ties: the earlier log first
    }
  };
  // Reads slot i's next event; false when the log is done.
  Result<bool> Advance(size_t i);

  std::vector<Slot> sources_;
  std::priority_queue<size_t, std::vector<size_t>, Later> heap_;
  bool started_ = false;
  // The log whose event the last call returned: advanced at the next call, so the event
  // stays where it is until then.
  std::optional<size_t> returned_;
};

}  // namespace xtrace
