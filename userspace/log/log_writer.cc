// LogWriter: serialises batches of model events into packed Cap'n Proto frames.
#include "log/log_writer.h"

#include <capnp/message.h>
#include <capnp/serialize-packed.h>
#include <fcntl.h>
#include <kj/exception.h>
#include <kj/io.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "log/event_codec.h"
#include "log/itt_event_codec.h"
#include "log/log_format.h"

namespace xtrace {
namespace {

// Unpacked words a batch takes, to size the first segment so a batch is one segment (a
// smaller segment table, and no far pointers). An Event is 20 words (xtrace_log.capnp), and
// a launch's handles take at most three more.
constexpr size_t kWordsPerEvent = 23;
constexpr size_t kFrameOverheadWords = 64;
// Room for new strings in the kept first segment: a few hundred names.
constexpr size_t kKeptStringWords = 4096;

std::string ErrnoText(int err) { return std::strerror(err); }

// Out of line, so that the check before it stays small enough to inline into Append.
[[gnu::noinline, gnu::cold]] Status UnknownStringId(const std::string& path, StringId bad,
                                                    StringId known) {
  return Status::Error(path + ": an event refers to string id " + std::to_string(bad) +
                       ", but the string table has only " + std::to_string(known) + " strings");
}

// A span batch's head goes into the room left before its batch in the frame buffer, so the
// two leave in one write(2) without copying the batch. The head is a table word, a root
// pointer, LogFrame and SpanBatch: 8 words, at most 96 bytes packed.
constexpr size_t kHeadRoom = 128;
constexpr size_t kHeadSegmentWords = 16;

// Serialises `message` in packed stream framing into one contiguous buffer, so the whole
// frame reaches the file in one write(2). For the frames written once a file.
std::vector<uint8_t> PackOnce(capnp::MessageBuilder& message) {
  FramePacker packer;
  const size_t size = packer.Pack(message.getSegmentsForOutput());
  return std::vector<uint8_t>(packer.data(), packer.data() + size);
}

}  // namespace

LogWriter::LogWriter(std::string path, UniqueFd fd, Options options)
    : path_(std::move(path)), fd_(std::move(fd)), options_(options) {
  if (options_.events_per_batch == 0) options_.events_per_batch = 1;
  pending_.reserve(options_.events_per_batch);
  pending_tasks_.reserve(options_.events_per_batch);
}

Result<std::unique_ptr<LogWriter>> LogWriter::Create(const std::string& path,
                                                     const LogHeader& header, Options options) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return Status::Error(path + ": cannot create: " + ErrnoText(errno));
  std::unique_ptr<LogWriter> writer(new LogWriter(path, std::move(fd), options));
  if (Status st = writer->WriteHeader(header); !st.ok()) return st;
  return writer;
}

Status LogWriter::WriteHeader(const LogHeader& header) {
  LogHeader stamped = header;
  stamped.format_version = kLogFormatVersion;
  runs_.clear();
  index_given_up_ = false;
  index_at_slot_ = 0;
  try {
    auto pack = [&](uint64_t index_at) {
      capnp::MallocMessageBuilder message;
      auto out = message.initRoot<log_schema::LogFrame>().initHeader();
      log_codec::EncodeHeader(stamped, out);
      if (options_.batch_index) out.setBatchIndexAt(log_codec::EncodeBatchIndexAt(index_at));
      return PackOnce(message);
    };
    std::vector<uint8_t> frame = pack(0);
    if (options_.batch_index) {
      // Where the placeholder's bytes lie in the packed frame: the header packed with the
      // largest offset instead differs from it in exactly those 8 bytes (no byte of either is
      // zero, so the word packs as a tag and its 8 bytes either way, and so do its neighbours).
      std::vector<uint8_t> other = pack(log_codec::kMaxBatchIndexAt);
      if (other.size() == frame.size()) {
        size_t first = frame.size(), last = 0, differ = 0;
        for (size_t i = 0; i < frame.size(); ++i) {
          if (frame[i] == other[i]) continue;
          first = std::min(first, i);
          last = i;
          ++differ;
        }
        if (differ == 8 && last - first == 7) index_at_slot_ = bytes_written_ + first;
      }
    }
    return WriteFrame(frame.data(), frame.size());
  } catch (const kj::Exception& e) {
    return Status::Error(path_ + ": encoding the header: " + e.getDescription().cStr());
  }
}

void LogWriter::NoteSpanBatch(uint64_t at, uint64_t bytes, uint64_t base_ns, uint64_t end_ns,
                              uint64_t events) {
  if (index_given_up_ || index_at_slot_ == 0) return;
  if (!runs_.empty()) {
    SpanRun& run = runs_.back();
    if (run.offset + run.bytes == at && run.bytes + bytes <= kMaxRunBytes) {
      run.bytes += bytes;
      run.base_ns = std::min(run.base_ns, base_ns);
      run.end_ns = std::max(run.end_ns, end_ns);
      run.events += events;
      ++run.batches;
      return;
    }
  }
  if (runs_.size() >= kMaxIndexRuns) {
    index_given_up_ = true;
    runs_ = {};
    return;
  }
  runs_.push_back({.offset = at, .bytes = bytes, .base_ns = base_ns, .end_ns = end_ns,
                   .events = events, .batches = 1});
}

Result<uint64_t> LogWriter::WriteIndex() {
  if (index_at_slot_ == 0 || index_given_up_ || runs_.empty()) return uint64_t{0};
  // Only a regular file can be written over, and read other than front to back.
  struct stat st {};
  if (::fstat(fd_.get(), &st) != 0 || !S_ISREG(st.st_mode)) return uint64_t{0};
  const uint64_t at = bytes_written_;
  if (at > log_codec::kMaxBatchIndexAt) return uint64_t{0};
  try {
    capnp::MallocMessageBuilder message(16 + runs_.size() * 6);
    auto list = message.initRoot<log_schema::LogFrame>().initBatchIndex().initSpanRuns(
        static_cast<unsigned>(runs_.size()));
    for (unsigned i = 0; i < list.size(); ++i) {
      const SpanRun& run = runs_[i];
      auto out = list[i];
      out.setOffset(run.offset);
      out.setBytes(run.bytes);
      out.setBaseNs(run.base_ns);
      out.setEndNs(run.end_ns);
      out.setBatches(run.batches);
      out.setEvents(run.events);
    }
    const std::vector<uint8_t> frame = PackOnce(message);
    if (Status s = WriteFrame(frame.data(), frame.size()); !s.ok()) return s;
  } catch (const kj::Exception& e) {
    return Status::Error(path_ + ": encoding the batch index: " + e.getDescription().cStr());
  }
  return at;
}

void LogWriter::PointHeaderToIndex(uint64_t index_at) {
  if (index_at == 0) return;
  const uint64_t stored = log_codec::EncodeBatchIndexAt(index_at);
  uint8_t bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(stored >> (8 * i));
  // Best effort: a log whose header still holds the placeholder reads as one without an
  // index (every event is still there; windows read the heads).
  (void)::pwrite(fd_.get(), bytes, sizeof(bytes), static_cast<off_t>(index_at_slot_));
}

Status LogWriter::ContinueInNewFile(const LogSummary& summary, const std::string& path,
                                    const LogHeader& header) {
  if (Status st = Finish(summary); !st.ok()) return st;
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return error_ = Status::Error(path + ": cannot create: " + ErrnoText(errno));
  path_ = path;
  fd_ = std::move(fd);
  finished_ = false;
  strings_written_ = 1;
  bytes_written_ = 0;
  events_written_ = 0;
  batches_written_ = 0;
  error_ = WriteHeader(header);
  return error_;
}

LogWriter::~LogWriter() {
  // Best effort: an error here has nobody left to report to, and the file stays readable.
  if (!finished_ && error_.ok()) (void)WriteBatch();
}

template <typename E>
bool LogWriter::KnowsStringsOf(const E& event) {
  StringId bad = kEmptyString;
  const StringId known = strings_.size();
  log_codec::ForEachStringId(event, [&](StringId id) {
    if (id >= known) bad = id;
  });
  if (bad == kEmptyString) [[likely]] return true;
  error_ = UnknownStringId(path_, bad, known);
  return false;
}

void LogWriter::Append(const Event& event) {
  if (const auto* task = std::get_if<IttTask>(&event)) return Append(*task);
  if (!error_.ok() || finished_ || !KnowsStringsOf(event)) return;
  tasks_before_.push_back(pending_tasks_.size());
  pending_.push_back(event);
  if (pending_events() >= options_.events_per_batch) error_ = WriteBatch();
}

void LogWriter::Append(const IttTask& task) {
  if (!error_.ok() || finished_ || !KnowsStringsOf(task)) return;
  pending_tasks_.push_back(task);
  tasks_earliest_ = std::min(tasks_earliest_, task.start_ns);
  tasks_latest_ = std::max({tasks_latest_, task.start_ns, task.end_ns});
  if (pending_events() >= options_.events_per_batch) error_ = WriteBatch();
}

static_assert(log_codec::kNoTime == ~uint64_t{0}, "tasks_earliest_ starts as kNoTime");

void LogWriter::ClearPending() {
  pending_.clear();
  tasks_before_.clear();
  pending_tasks_.clear();
  tasks_earliest_ = log_codec::kNoTime;
  tasks_latest_ = 0;
}

Status LogWriter::Flush() {
  if (!error_.ok() || finished_) return error_;
  error_ = WriteBatch();
  return error_;
}

Status LogWriter::Finish(const LogSummary& summary) {
  if (finished_) return error_;
  if (Status st = Flush(); !st.ok()) {
    finished_ = true;
    return st;
  }
  finished_ = true;
  Result<uint64_t> index_at = WriteIndex();
  if (!index_at.ok()) {
    error_ = index_at.status();
    return error_;
  }
  try {
    capnp::MallocMessageBuilder message;
    log_codec::EncodeSummary(summary, message.initRoot<log_schema::LogFrame>().initSummary());
    const std::vector<uint8_t> frame = PackOnce(message);
    error_ = WriteFrame(frame.data(), frame.size());
  } catch (const kj::Exception& e) {
    error_ = Status::Error(path_ + ": encoding the summary: " + e.getDescription().cStr());
  }
  // Only a log that ends with its summary points to its index: a reader that finds the
  // pointer finds the index whole.
  if (error_.ok()) PointHeaderToIndex(*index_at);
  if (error_.ok() && fd_.Close() != 0) {
    error_ = Status::Error("closing " + path_ + ": " + ErrnoText(errno));
  }
  return error_;
}

Status LogWriter::WriteBatch() {
  const StringId new_strings = strings_.size() - strings_written_;
  const size_t pending = pending_events();
  if (pending == 0 && new_strings == 0) return Status::Ok();
  size_t frame_begin = kHeadRoom, frame_end = kHeadRoom;
  bool span_batch = false;  // written with its head: goes into the index
  uint64_t span_base_ns = 0, span_end_ns = 0;
  try {
    size_t string_bytes = 0;
    for (StringId id = strings_written_; id < strings_.size(); ++id) {
      string_bytes += strings_.Get(id).size() + 1;
    }
    const size_t words =
        kFrameOverheadWords + pending * kWordsPerEvent + new_strings + string_bytes / 8;
    // The kept first segment holds a full batch of events and a few strings; a batch that
    // needs more (a burst of new strings) gets a segment of its own rather than keeping one
    // that large for the rest of the capture.
    if (first_segment_ == nullptr) {
      first_segment_words_ = kFrameOverheadWords + options_.events_per_batch * kWordsPerEvent +
                             kKeptStringWords;
      first_segment_.reset(new capnp::word[first_segment_words_]());
    }
    std::optional<capnp::MallocMessageBuilder> message;
    if (words <= first_segment_words_) {
      message.emplace(kj::arrayPtr(first_segment_.get(), first_segment_words_));
    } else {
      message.emplace(static_cast<unsigned>(words));
    }
    auto batch = message->initRoot<log_schema::LogFrame>().initBatch();

    batch.setFirstStringId(strings_written_);
    auto strings = batch.initStrings(new_strings);
    for (StringId i = 0; i < new_strings; ++i) {
      const std::string& text = *strings_.Find(strings_written_ + i);
      strings.set(i, capnp::Text::Reader(text.c_str(), text.size()));
    }

    const uint64_t base_ns = log_codec::BatchBaseNs(pending_, tasks_earliest_);
    batch.setBaseNs(base_ns);
    batch.setEndNs(log_codec::BatchEndNs(pending_, tasks_latest_));
    auto events = batch.initEvents(static_cast<unsigned>(pending));
    log_codec::HandleTable handle_table;
    // The events in the order they came: each Event after the tasks appended before it.
    unsigned out = 0;
    size_t task = 0;
    auto tasks_until = [&](size_t end) {
      for (; task < end; ++task)
        log_codec::EncodeIttTask(pending_tasks_[task], base_ns, events[out++].initIttTask());
    };
    for (size_t i = 0; i < pending_.size(); ++i) {
      tasks_until(tasks_before_[i]);
      log_codec::EncodeEvent(pending_[i], base_ns, handle_table, events[out++]);
    }
    tasks_until(pending_tasks_.size());
    const auto& handles = handle_table.handles();
    auto table = batch.initHandles(static_cast<unsigned>(handles.size()));
    for (size_t i = 0; i < handles.size(); ++i) table.set(static_cast<unsigned>(i), handles[i]);
    frame_end = frame_.Pack(message->getSegmentsForOutput(), kHeadRoom);
    // A batch of spans only that brings no strings can be stepped over by a reader looking
    // at a time window, given its length and bounds first (LogFrame.spanBatch), in the same
    // write so the two cannot be parted by a crash: the head is laid out just before the
    // batch in the one buffer that write(2) takes.
    const uint64_t end_ns = batch.getEndNs();
    if (new_strings == 0 && end_ns != 0 &&
        std::all_of(pending_.begin(), pending_.end(), log_codec::IsWindowedEvent)) {
      capnp::word head_segment[kHeadSegmentWords]{};
      capnp::MallocMessageBuilder head_message(kj::arrayPtr(head_segment, kHeadSegmentWords));
      auto head = head_message.initRoot<log_schema::LogFrame>().initSpanBatch();
      head.setPackedBytes(frame_end - kHeadRoom);
      head.setBaseNs(base_ns);
      head.setEndNs(end_ns);
      head.setEvents(static_cast<uint32_t>(pending));
      const size_t head_size = head_.Pack(head_message.getSegmentsForOutput());
      KJ_REQUIRE(head_size <= kHeadRoom, "a span head longer than its room", head_size);
      frame_begin = kHeadRoom - head_size;
      std::memcpy(frame_.data() + frame_begin, head_.data(), head_size);
      span_batch = true;
      span_base_ns = base_ns;
      span_end_ns = end_ns;
    }
  } catch (const kj::Exception& e) {
    return Fail(Status::Error(path_ + ": encoding batch " + std::to_string(batches_written_ + 1) +
                              ": " + e.getDescription().cStr()));
  }
  const uint64_t at = bytes_written_;
  const size_t size = frame_end - frame_begin;
  if (Status st = WriteFrame(frame_.data() + frame_begin, size); !st.ok()) return st;
  if (span_batch) NoteSpanBatch(at, size, span_base_ns, span_end_ns, pending);
  ++batches_written_;
  events_written_ += pending;
  strings_written_ = strings_.size();
  ClearPending();
  return Status::Ok();
}

// Someone else may remove or cut the file while the capture writes it. Appending regardless
// would write to a file no one can open any more, or leave a hole of zeros where the cut-off
// frames were, which no reader can tell from data: the capture stops instead, saying so.
Status LogWriter::CheckFileUntouched() const {
  struct stat st {};
  if (::fstat(fd_.get(), &st) != 0 || !S_ISREG(st.st_mode)) return Status::Ok();
  if (st.st_nlink == 0)
    return Status::Error("writing " + path_ +
                         ": the file was removed during the capture; everything written to it "
                         "is lost");
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size < bytes_written_)
    return Status::Error("writing " + path_ + ": the file was cut short by someone else (" +
                         std::to_string(size) + " of the " + std::to_string(bytes_written_) +
                         " bytes written remain); frames past the cut are lost, convert "
                         "--salvage reads those before it");
  if (size > bytes_written_)
    return Status::Error("writing " + path_ + ": someone else wrote to the file (" +
                         std::to_string(size) + " bytes where xtrace wrote " +
                         std::to_string(bytes_written_) + ")");
  return Status::Ok();
}

Status LogWriter::WriteFrame(const void* data, size_t size) {
  if (Status st = CheckFileUntouched(); !st.ok()) return Fail(st);
  const auto* p = static_cast<const char*>(data);
  size_t left = size;
  // One write(2) normally carries the whole frame; the loop only resumes a short write.
  while (left > 0) {
    const ssize_t n = ::write(fd_.get(), p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      // Cut a partly written frame off again so the file still ends on a frame boundary
      // (with a full disk, every complete batch stays readable without --salvage).
      if (left != size && ::ftruncate(fd_.get(), static_cast<off_t>(bytes_written_)) == 0) {
        (void)::lseek(fd_.get(), static_cast<off_t>(bytes_written_), SEEK_SET);
      }
      return Fail(Status::Error("writing " + path_ + ": " + ErrnoText(err)));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  bytes_written_ += size;
  return Status::Ok();
}

Status LogWriter::Fail(Status status) {
  ClearPending();
  return status;
}

}  // namespace xtrace
