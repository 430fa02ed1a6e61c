// LogWriter: writes the event log (xtrace_log.capnp) — a header, batches of events with the
// strings they introduce, and a summary on a clean finish — so that a capture killed at any
// moment still leaves a file whose complete batches are all readable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "log/frame_packer.h"
#include "model/event.h"
#include "model/log_header.h"
#include "model/string_table.h"

namespace xtrace {

struct LogWriterOptions {
  // Events per batch; Append writes a batch when this many are pending. Larger batches pack
  // a little better; smaller ones lose less on a crash. (How long events may stay pending is
  // the caller's call: it calls Flush on its own timer.)
  size_t events_per_batch = 4096;
  // Write the batch index (LogFrame.batchIndex) at a clean finish, for windowed readers.
  // Off only to make logs as builds before it wrote them (tests).
  bool batch_index = true;
};

class LogWriter {
 public:
  using Options = LogWriterOptions;

  // Creates (truncates) `path` and writes the header frame. header.format_version is
  // ignored: the writer stamps its own kLogFormatVersion.
  static Result<std::unique_ptr<LogWriter>> Create(const std::string& path, const LogHeader& header,
                                                   Options options = {});

  // Without a Finish, writes what is pending (no summary: readers flag the log incomplete).
  ~LogWriter();
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;

  // Intern names here before appending events that refer to them; new strings go out with
  // the next batch.
  StringTable& strings() { return strings_; }

  // Buffers `event`; writes a batch when events_per_batch are pending. An event whose string
  // ids are not in strings() is a caller bug: it is dropped and the error latched. Errors
  // (also write errors) are returned by the next Flush or Finish; after one, events are
  // dropped.
  void Append(const Event& event);
  // The same for an IttTask, the bulk of an ITT capture, without an Event around it: it is
  // kept as it is until its batch is written, in its place among the other events.
  void Append(const IttTask& task);

  // Writes pending events and strings as one batch frame with a single write(2). No-op when
  // nothing is pending. Returns the latched error, if any.
  Status Flush();

  // Flushes, writes the summary and closes the file. Later calls return the first result.
  // A finish on a regular file writes the batch index first and then points the header to it
  // (Header.batchIndexAt, written over in place).
  Status Finish(const LogSummary& summary);

  // Rotation: finishes the current file with `summary` and goes on in `path` (created or
  // truncated) with `header`. The string table carries over and the new file's first batch
  // repeats every string, so each file reads on its own with the same string ids. Counters
  // (bytes_written and so on) restart with the new file.
  Status ContinueInNewFile(const LogSummary& summary, const std::string& path,
                           const LogHeader& header);

  const std::string& path() const { return path_; }
  uint64_t bytes_written() const { return bytes_written_; }    // bytes in complete frames
  uint64_t events_written() const { return events_written_; }  // events in written batches
  uint64_t batches_written() const { return batches_written_; }
  // Runs of span batches the index holds so far (0 once it was given up: see kMaxIndexRuns).
  size_t index_runs() const { return runs_.size(); }

  // A run of span batches grows to at most this many bytes: a window reads at most about
  // this much of a run it only touches, and the index has an entry per MiB of spans.
  static constexpr uint64_t kMaxRunBytes = 1 << 20;
  // The index is given up (and its memory freed) past this many runs, about 10 MB: a capture
  // whose span batches are this scattered (a new thread or string in every batch, for hours)
  // gets no index, and windows read it by its heads, as logs of builds before the index.
  static constexpr size_t kMaxIndexRuns = 1 << 18;

 private:
  LogWriter(std::string path, UniqueFd fd, Options options);
  Status WriteHeader(const LogHeader& header);

  // False, with the error latched, when `event` refers to a string not in strings().
  template <typename E>
  bool KnowsStringsOf(const E& event);
  size_t pending_events() const { return pending_.size() + pending_tasks_.size(); }
  void ClearPending();
  Status WriteBatch();
  // A batch of spans and its head, `bytes` long, were written at `at`: into the index.
  void NoteSpanBatch(uint64_t at, uint64_t bytes, uint64_t base_ns, uint64_t end_ns,
                     uint64_t events);
  // Writes the index frame (before the summary) and returns where it begins; 0 when there is
  // none to write.
  Result<uint64_t> WriteIndex();
  // Writes `index_at` over the header's placeholder (after the summary).
  void PointHeaderToIndex(uint64_t index_at);
  Status WriteFrame(const void* data, size_t size);
  Status CheckFileUntouched() const;
  Status Fail(Status status);

  std::string path_;
  UniqueFd fd_;
  Options options_;
  StringTable strings_;
  StringId strings_written_ = 1;  // id 0 ("") is implicit, never written
  // The pending events, in the order appended. IttTasks are kept as they are (a third of an
  // Event's size, with no variant to build, copy and destroy for each); every other event as
  // an Event, with how many tasks were appended before it, so that its batch holds them all
  // in the order they came.
  std::vector<Event> pending_;
  std::vector<size_t> tasks_before_;  // one per event of pending_
  std::vector<IttTask> pending_tasks_;
  // The earliest start of pending_tasks_ (none: all bits set, log_codec::kNoTime), and their
  // latest start or end, kept as they come rather than found again when the batch is written.
  uint64_t tasks_earliest_ = ~uint64_t{0};
  uint64_t tasks_latest_ = 0;
  // The batch's frame, packed after room for its span head (kept between batches).
  FramePacker frame_;
  FramePacker head_;  // a span batch's head, copied into the room before the batch
  // The first segment of each batch's message, kept between batches. Cap'n Proto requires a
  // segment it is given to be zeroed, and zeroes what a message used when it is destroyed.
  std::unique_ptr<capnp::word[]> first_segment_;
  size_t first_segment_words_ = 0;
  Status error_;
  bool finished_ = false;
  uint64_t bytes_written_ = 0;
  uint64_t events_written_ = 0;
  uint64_t batches_written_ = 0;

  struct SpanRun {
    uint64_t offset = 0, bytes = 0, base_ns = 0, end_ns = 0, events = 0;
    uint32_t batches = 0;
  };
  std::vector<SpanRun> runs_;
  bool index_given_up_ = false;
  // Where in the file the header's batchIndexAt word lies (its packed bytes); 0: not found,
  // no index for this file.
  uint64_t index_at_slot_ = 0;
};

}  // namespace xtrace
