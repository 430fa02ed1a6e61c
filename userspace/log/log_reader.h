// LogReader: reads an event log written by LogWriter as a stream — one batch in memory at a
// time plus the string table — and turns damage into a one-line error naming the file, or,
// with salvage, into a warning after everything readable has been returned.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "model/event.h"
#include "model/log_header.h"
#include "model/string_table.h"

namespace xtrace {

struct LogReaderOptions {
  // On damage (truncation, corruption), stop reading but keep what came before: Next returns
  // false instead of an error and damage() says what was wrong.
  bool salvage = false;
  // Only spans and instants that may reach into [from_ns, to_ns) (CLOCK_MONOTONIC) are
  // wanted: a batch whose spans all lie outside (Batch.baseNs/endNs) is read without
  // decoding them, and only its other events (identities, counters, clock readings) are
  // returned. Spans of the batches that reach into the window all come back, inside or not:
  // this is a fast path, not a filter. Logs without Batch.endNs are read whole. A log that
  // ended cleanly has an index of its span batches (LogFrame.batchIndex): runs of them that
  // miss the window are stepped over without reading even their heads.
  struct Window {
    uint64_t from_ns = 0;
    uint64_t to_ns = UINT64_MAX;
  };
  std::optional<Window> window = std::nullopt;
};

class LogReader {
 public:
  using Options = LogReaderOptions;

  // Opens `path` and reads its header. Errors: missing/unreadable file, empty file, not an
  // xtrace log, unsupported format version.
  static Result<LogReader> Open(const std::string& path, Options options = {});

  LogReader(LogReader&&) noexcept;
  LogReader& operator=(LogReader&&) noexcept;
  ~LogReader();

  const LogHeader& header() const;

  // Sets or clears Options::window from the next batch on (a window on the log's clock is
  // known once its header has been read).
  void SetWindow(std::optional<Options::Window> window);

  // The next event, in the order written. Ok(false) at the end: after the summary, at the end
  // of a log without one (complete() is then false), or — with salvage — at damage.
  // Without salvage, damage is an error (and so is every later call).
  Result<bool> Next(Event* out);

  // Next without the copy: the event itself, valid until the next call of NextEvent or Next
  // (it lies in the batch the reader holds); null at the end, as Next's false.
  Result<const Event*> NextEvent();

  // Every string the events returned so far refer to (ids are those in the events).
  const StringTable& strings() const;

  // The summary, once Next has reached it.
  const std::optional<LogSummary>& summary() const;
  // True once the summary has been read: the capture ended cleanly. A log read to its end
  // without a summary was cut short (e.g. the capture was killed).
  bool complete() const { return summary().has_value(); }

  // With salvage: the damage that stopped reading (ok if none). Names the file and batch.
  const Status& damage() const;

  const std::string& path() const;
  uint64_t batches_read() const;
  uint64_t batches_skipped() const;           // of those, read without their spans (window)
  uint64_t runs_skipped() const;              // runs of span batches stepped over by the index
  // The latest end of a span in the batches met so far, read or stepped over (Batch.endNs,
  // CLOCK_MONOTONIC): where a log without its summary reaches. 0: none, or a log written
  // before batches had their end.
  uint64_t spans_end_ns() const;
  uint64_t events_read() const;               // events returned by Next
  uint64_t unknown_events() const;            // events of kinds newer than this build, skipped
  uint64_t bytes_read() const;                // file bytes consumed so far (for progress)
  std::optional<uint64_t> file_size() const;  // when the input is a regular file

 private:
  struct Impl;
  explicit LogReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace xtrace
