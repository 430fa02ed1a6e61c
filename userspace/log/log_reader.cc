// LogReader: frames come from PackedFrameInput, are decoded with Cap'n Proto's reader under
// limits, validated as a whole batch, and handed out one event at a time.
#include "log/log_reader.h"

#include <capnp/message.h>
#include <kj/exception.h>

#include <algorithm>
#include <vector>

#include "log/event_codec.h"
#include "log/log_format.h"
#include "log/packed_frame_input.h"

namespace xtrace {
namespace {

// Decoding reads each word of a batch once; the traversal limit (Cap'n Proto's defence
// against messages whose pointers overlap to amplify work) is a multiple of the message
// size rather than its fixed 64 MiB default, so big batches pass and bogus ones do not.
constexpr uint64_t kTraversalWordsPerWord = 4;
constexpr uint64_t kMinTraversalWords = 1024;
constexpr int kNestingLimit = 16;  // LogFrame -> Batch -> List -> Event: far below this

capnp::ReaderOptions LimitsFor(uint64_t frame_words) {
  capnp::ReaderOptions options;
  options.traversalLimitInWords = frame_words * kTraversalWordsPerWord + kMinTraversalWords;
  options.nestingLimit = kNestingLimit;
  return options;
}

std::string KjMessage(const kj::Exception& e) { return e.getDescription().cStr(); }

}  // namespace

struct LogReader::Impl {
  Impl(std::string path_in, Options options_in, PackedFrameInput input_in)
      : path(std::move(path_in)), options(options_in), input(std::move(input_in)) {}

  Status ReadHeader();
  // Reads the batch index (Header.batchIndexAt) into `runs`, and comes back to where the
  // reader was. An index that is not there or does not hold together is ignored: the log is
  // then read by its heads, as logs written before the index. Errors: read or seek failures.
  Status LoadIndex();
  // Reads frames until one yields events, the summary has been read, or the file ends.
  Status LoadNext();
  Status LoadBatch(log_schema::Batch::Reader batch_reader, const std::string& where);
  // Whether a window is set and a batch's spans, all within [base_ns, end_ns], miss it.
  bool Outside(uint64_t base_ns, uint64_t end_ns) const {
    return options.window && end_ns != 0 &&
           (end_ns < options.window->from_ns || base_ns >= options.window->to_ns);
  }
  // Errors name the batch by its number and where it begins: at its head (LogFrame.spanBatch)
  // when it has one, as that was written with it.
  std::string Where() const {
    return path + ": batch " + std::to_string(batches_read + 1) + " (at byte " +
           std::to_string(batch_offset) + ")";
  }

  std::string path;
  Options options;
  PackedFrameInput input;
  LogHeader header;
  StringTable strings;
  std::optional<LogSummary> summary;
  Status damage;
  Status error;  // sticky: without salvage, damage fails every later Next
  bool done = false;
  // The current batch, decoded and validated: its first batch_size events. The vector only
  // grows: each event is decoded over the one in its slot before, which is usually of the
  // same kind, so no slot is constructed (some 200 bytes zeroed) per event.
  std::vector<Event> batch;
  size_t batch_size = 0;
  std::vector<uint64_t> handles;  // the current batch's handle table (Batch.handles)
  size_t next = 0;
  uint64_t batches_read = 0;
  uint64_t batch_offset = 0;  // where the batch being read begins
  bool after_head = false;    // the last frame was the head of the one being read
  uint64_t batches_skipped = 0;
  uint64_t events_read = 0;
  // The batch index: read at the first frame wanted through a window.
  uint64_t index_at = 0;  // Header.batchIndexAt, 0: none
  bool index_tried = false;
  struct Run {
    uint64_t offset = 0, bytes = 0, base_ns = 0, end_ns = 0;
    uint32_t batches = 0;
  };
  std::vector<Run> runs;
  size_t next_run = 0;
  uint64_t runs_skipped = 0;
  uint64_t unknown_events = 0;
  uint64_t spans_end_ns = 0;  // the latest Batch.endNs met, read or stepped over
};

Status LogReader::Impl::ReadHeader() {
  Result<bool> frame = input.ReadFrame();
  if (!frame.ok()) {
    if (input.read_failed()) return frame.status().WithContext(path);
    return Status::Error(path + ": not an xtrace log (" + frame.status().message() + ")");
  }
  if (!*frame) return Status::Error(path + ": empty file, not an xtrace log");
  try {
    capnp::SegmentArrayMessageReader message(input.segments(), LimitsFor(input.frame_words()));
    const auto root = message.getRoot<log_schema::LogFrame>();
    if (root.which() != log_schema::LogFrame::HEADER ||
        root.getHeader().getMagic() != log_schema::LOG_MAGIC) {
      return Status::Error(path +
                           ": not an xtrace log (its first message is not an xtrace header)");
    }
    header = log_codec::DecodeHeader(root.getHeader());
    index_at = log_codec::DecodeBatchIndexAt(root.getHeader().getBatchIndexAt());
  } catch (const kj::Exception& e) {
    return Status::Error(path + ": not an xtrace log (" + KjMessage(e) + ")");
  }
  if (header.format_version < kOldestReadableLogFormatVersion ||
      header.format_version > kLogFormatVersion) {
    std::string message = path + ": log format version " + std::to_string(header.format_version) +
                          " is not supported (this xtrace reads versions " +
                          std::to_string(kOldestReadableLogFormatVersion) + " to " +
                          std::to_string(kLogFormatVersion) + ")";
    if (header.format_version > kLogFormatVersion) {
      message += "; it was written by xtrace " + header.xtrace_version + ", use that or newer";
    }
    return Status::Error(message);
  }
  return Status::Ok();
}

Status LogReader::Impl::LoadIndex() {
  index_tried = true;
  const uint64_t resume = input.offset();
  const std::optional<uint64_t> size = input.file_size();
  if (index_at == 0 || !size || index_at <= resume || index_at >= *size) return Status::Ok();
  if (Status st = input.Seek(index_at); !st.ok()) return st.WithContext(path);
  std::vector<Run> loaded;
  bool whole = false;
  if (Result<bool> frame = input.ReadFrame(); frame.ok() && *frame) {
    try {
      capnp::SegmentArrayMessageReader message(input.segments(), LimitsFor(input.frame_words()));
      const auto root = message.getRoot<log_schema::LogFrame>();
      if (root.which() == log_schema::LogFrame::BATCH_INDEX) {
        whole = true;
        uint64_t end = resume;  // runs lie in order between the header and the index
        for (const auto run : root.getBatchIndex().getSpanRuns()) {
          const Run r{.offset = run.getOffset(), .bytes = run.getBytes(),
                      .base_ns = run.getBaseNs(), .end_ns = run.getEndNs(),
                      .batches = run.getBatches()};
          if (r.offset < end || r.bytes == 0 || r.bytes > index_at - r.offset || r.end_ns == 0) {
            whole = false;
            break;
          }
          end = r.offset + r.bytes;
          loaded.push_back(r);
        }
      }
    } catch (const kj::Exception&) {
      whole = false;
    }
  }
  if (input.read_failed()) return Status::Error(path + ": reading the batch index failed");
  if (Status st = input.Seek(resume); !st.ok()) return st.WithContext(path);
  if (whole) runs = std::move(loaded);
  return Status::Ok();
}

Status LogReader::Impl::LoadNext() {
  while (true) {
    if (summary) {
      // The summary is the last frame; anything after it is damage.
      const uint64_t at = input.offset();
      Result<bool> frame = input.ReadFrame();
      if (frame.ok() && !*frame) {
        done = true;
        return Status::Ok();
      }
      return Status::Error(path + ": unexpected data after the summary (at byte " +
                           std::to_string(at) + ")");
    }
    if (options.window && !after_head) {
      // Runs of span batches that miss the window: one seek each, their heads unread.
      if (!index_tried) {
        if (Status st = LoadIndex(); !st.ok()) return st;
      }
      const uint64_t at = input.offset();
      while (next_run < runs.size() && runs[next_run].offset < at) ++next_run;
      if (next_run < runs.size() && runs[next_run].offset == at) {
        const Run& run = runs[next_run++];
        if (Outside(run.base_ns, run.end_ns)) {
          spans_end_ns = std::max(spans_end_ns, run.end_ns);
          batch_offset = at;
          if (Status st = input.Skip(run.bytes); !st.ok()) return st.WithContext(Where());
          batches_read += run.batches;
          batches_skipped += run.batches;
          ++runs_skipped;
          continue;
        }
      }
    }
    Result<bool> frame = input.ReadFrame();
    if (!after_head) batch_offset = input.frame_offset();
    after_head = false;
    if (!frame.ok()) return frame.status().WithContext(Where());
    if (!*frame) {
      done = true;  // no summary: the capture was cut short, but everything so far is good
      return Status::Ok();
    }
    try {
      capnp::SegmentArrayMessageReader message(input.segments(), LimitsFor(input.frame_words()));
      const auto root = message.getRoot<log_schema::LogFrame>();
      switch (root.which()) {
        case log_schema::LogFrame::HEADER:
          return Status::Error(Where() + ": a second header");
        case log_schema::LogFrame::SUMMARY:
          summary = log_codec::DecodeSummary(root.getSummary());
          continue;
        case log_schema::LogFrame::BATCH_INDEX:
          continue;  // read ahead where a window wants it
        case log_schema::LogFrame::SPAN_BATCH: {
          // The next frame is a batch of spans only, without strings: outside the window
          // nothing in it is wanted, and it is stepped over unread.
          const auto head = root.getSpanBatch();
          if (!Outside(head.getBaseNs(), head.getEndNs())) {
            after_head = true;  // its batch comes next, read as any other
            continue;
          }
          if (Status st = input.Skip(head.getPackedBytes()); !st.ok()) return st.WithContext(Where());
          spans_end_ns = std::max(spans_end_ns, head.getEndNs());
          ++batches_read;
          ++batches_skipped;
          continue;
        }
        case log_schema::LogFrame::BATCH: {
          if (Status st = LoadBatch(root.getBatch(), Where()); !st.ok()) return st;
          ++batches_read;
          if (batch_size != 0) return Status::Ok();
          continue;
        }
      }
      // A frame kind from a newer xtrace: nothing in it is for us.
    } catch (const kj::Exception& e) {
      return Status::Error(Where() + ": corrupt message: " + KjMessage(e));
    }
  }
}

Status LogReader::Impl::LoadBatch(log_schema::Batch::Reader batch_reader,
                                  const std::string& where) {
  const uint32_t first_id = batch_reader.getFirstStringId();
  if (first_id != strings.size()) {
    return Status::Error(where + ": corrupt string table (its strings start at id " +
                         std::to_string(first_id) + ", expected " + std::to_string(strings.size()) +
                         ")");
  }
  for (capnp::Text::Reader text : batch_reader.getStrings()) {
    (void)strings.Insert(strings.size(), std::string_view(text.begin(), text.size()));
  }

  const uint64_t base_ns = batch_reader.getBaseNs();
  // Outside the window: [baseNs, endNs] bounds every span, so only the other kinds are read.
  const uint64_t end_ns = batch_reader.getEndNs();
  const bool outside = Outside(base_ns, end_ns);
  if (outside) ++batches_skipped;
  spans_end_ns = std::max(spans_end_ns, end_ns);
  const auto handle_list = batch_reader.getHandles();
  handles.clear();
  for (uint64_t h : handle_list) handles.push_back(h);
  const auto events = batch_reader.getEvents();
  batch_size = 0;
  if (batch.size() < events.size()) batch.resize(events.size());
  for (unsigned i = 0; i < events.size(); ++i) {
    const auto in = events[i];
    if (outside && log_codec::IsWindowedKind(in.which())) continue;
    // Decoded in place: an Event is some 200 bytes, and a copy of each would cost as much
    // as the decoding.
    Event& event = batch[batch_size];
    const log_codec::DecodeResult decoded = log_codec::DecodeEvent(in, base_ns, handles, &event);
    if (decoded == log_codec::DecodeResult::kUnknownKind) {
      ++unknown_events;
      continue;
    }
    if (decoded == log_codec::DecodeResult::kBadHandleRef) {
      batch_size = 0;
      return Status::Error(where + ": corrupt handle ref in event " + std::to_string(i) +
                           " (the batch has " + std::to_string(handles.size()) + " handles)");
    }
    StringId bad = kEmptyString;
    log_codec::ForEachStringId(event, [&](StringId id) {
      if (id >= strings.size()) bad = id;
    });
    if (bad != kEmptyString) {
      batch_size = 0;
      return Status::Error(where + ": corrupt string id " + std::to_string(bad) + " in event " +
                           std::to_string(i) + " (the table has " + std::to_string(strings.size()) +
                           " strings)");
    }
    ++batch_size;
  }
  next = 0;
  return Status::Ok();
}

LogReader::LogReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LogReader::LogReader(LogReader&&) noexcept = default;
LogReader& LogReader::operator=(LogReader&&) noexcept = default;
LogReader::~LogReader() = default;

Result<LogReader> LogReader::Open(const std::string& path, Options options) {
  Result<PackedFrameInput> input = PackedFrameInput::Open(path);
  if (!input.ok()) return input.status();
  auto impl = std::make_unique<Impl>(path, options, std::move(*input));
  if (Status st = impl->ReadHeader(); !st.ok()) return st;
  return LogReader(std::move(impl));
}

Result<const Event*> LogReader::NextEvent() {
  Impl& r = *impl_;
  if (!r.error.ok()) return r.error;
  while (r.next == r.batch_size) {
    if (r.done) return static_cast<const Event*>(nullptr);
    r.batch_size = 0;
    r.next = 0;
    if (Status st = r.LoadNext(); !st.ok()) {
      r.done = true;
      r.batch_size = 0;
      if (r.options.salvage) {
        r.damage = st;
        return static_cast<const Event*>(nullptr);
      }
      r.error = st;
      return st;
    }
  }
  ++r.events_read;
  return &r.batch[r.next++];
}

Result<bool> LogReader::Next(Event* out) {
  Result<const Event*> next = NextEvent();
  if (!next.ok()) return next.status();
  if (!*next) return false;
  *out = **next;
  return true;
}

void LogReader::SetWindow(std::optional<Options::Window> window) { impl_->options.window = window; }
const LogHeader& LogReader::header() const { return impl_->header; }
const StringTable& LogReader::strings() const { return impl_->strings; }
const std::optional<LogSummary>& LogReader::summary() const { return impl_->summary; }
const Status& LogReader::damage() const { return impl_->damage; }
const std::string& LogReader::path() const { return impl_->path; }
uint64_t LogReader::batches_read() const { return impl_->batches_read; }
uint64_t LogReader::batches_skipped() const { return impl_->batches_skipped; }
uint64_t LogReader::runs_skipped() const { return impl_->runs_skipped; }
uint64_t LogReader::spans_end_ns() const { return impl_->spans_end_ns; }
uint64_t LogReader::events_read() const { return impl_->events_read; }
uint64_t LogReader::unknown_events() const { return impl_->unknown_events; }
uint64_t LogReader::bytes_read() const { return impl_->input.offset(); }
std::optional<uint64_t> LogReader::file_size() const { return impl_->input.file_size(); }

}  // namespace xtrace
