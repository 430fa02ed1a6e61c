// Tests for LogReader (userspace/log/log_reader.cc): every kind of bad input gets a one-line
// error naming the file and the problem; salvage keeps what is good; reading streams. Reading a
// window, through the batch index or not: log_reader_window_unittest.cc.
#include "log/log_reader.h"

#include <capnp/message.h>
#include <capnp/schema.capnp.h>
#include <capnp/serialize-packed.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <kj/io.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <random>
#include <regex>
#include <thread>
#include <vector>

#include "log/event_codec.h"
#include "log/log_writer.h"
#include "log/xtrace_log.capnp.h"
#include "log_file_test_util.h"
#include "log_test_util.h"

namespace xtrace {
namespace {

using test_util::Contains;
using test_util::kEventsPerBatch;
using test_util::ReadOutcome;
using test_util::ReadToEnd;
using test_util::ReadFileBytes;
using test_util::SampleHeader;
using test_util::SampleLog;
using test_util::SampleSummary;
using test_util::ScratchDir;
using test_util::WriteFileBytes;
using test_util::WriteSampleLog;

void WritePackedMessage(const std::string& path, capnp::MessageBuilder& message, bool append) {
  kj::AutoCloseFd fd(
      ::open(path.c_str(), O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644));
  capnp::writePackedMessageToFd(fd.get(), message);
}

void WriteHeaderFrame(const std::string& path, uint32_t version,
                      const std::string& xtrace_version) {
  capnp::MallocMessageBuilder message;
  auto header = message.initRoot<log_schema::LogFrame>().initHeader();
  header.setMagic(log_schema::LOG_MAGIC);
  header.setFormatVersion(version);
  header.setXtraceVersion(xtrace_version);
  WritePackedMessage(path, message, /*append=*/false);
}

TEST(LogReaderTest, MissingFile) {
  ScratchDir dir;
  const std::string path = dir.File("nope.capnp");
  auto reader = LogReader::Open(path);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().message(), path + ": No such file or directory");
}

TEST(LogReaderTest, Directory) {
  ScratchDir dir;
  const std::string path = dir.File("sub");
  ASSERT_EQ(::mkdir(path.c_str(), 0755), 0);
  auto reader = LogReader::Open(path);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().message(), path + ": is a directory, not an xtrace log");
}

TEST(LogReaderTest, EmptyFile) {
  ScratchDir dir;
  const std::string path = dir.File("empty.capnp");
  WriteFileBytes(path, "");
  auto reader = LogReader::Open(path);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().message(), path + ": empty file, not an xtrace log");
}

TEST(LogReaderTest, GarbageIsNotAnXtraceLog) {
  ScratchDir dir;
  const std::string path = dir.File("garbage.capnp");
  std::mt19937 rng(42);
  for (int round = 0; round < 50; ++round) {
    std::string bytes(1 + rng() % 5000, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    WriteFileBytes(path, bytes);
    auto reader = LogReader::Open(path);
    ASSERT_FALSE(reader.ok()) << "round " << round;
    EXPECT_TRUE(Contains(reader.status().message(), path + ": not an xtrace log ("))
        << "round " << round;
    EXPECT_EQ(reader.status().message().find('\n'), std::string::npos);
  }
}

TEST(LogReaderTest, TextFileIsNotAnXtraceLog) {
  ScratchDir dir;
  const std::string path = dir.File("trace.json");
  WriteFileBytes(path, "{\"traceEvents\":[]}\n");
  auto reader = LogReader::Open(path);
  ASSERT_FALSE(reader.ok());
  EXPECT_TRUE(Contains(reader.status().message(), path + ": not an xtrace log ("));
}

TEST(LogReaderTest, OtherCapnpMessageIsNotAnXtraceLog) {
  ScratchDir dir;
  const std::string path = dir.File("other.capnp");
  capnp::MallocMessageBuilder message;
  auto node = message.initRoot<capnp::schema::Node>();
  node.setId(0x1234'5678'9abc'def0);
  node.setDisplayName("foo.capnp:Bar");
  node.initStruct().setDataWordCount(3);
  WritePackedMessage(path, message, false);
  auto reader = LogReader::Open(path);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().message(),
            path + ": not an xtrace log (its first message is not an xtrace header)");
}

TEST(LogReaderTest, UnsupportedFormatVersion) {
  ScratchDir dir;
  const std::string path = dir.File("future.capnp");
  WriteHeaderFrame(path, 3, "9.9.0");
  auto reader = LogReader::Open(path);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().message(),
            path +
                ": log format version 3 is not supported (this xtrace reads versions 1 to 2); "
                "it was written by xtrace 9.9.0, use that or newer");

  WriteHeaderFrame(path, 0, "");
  reader = LogReader::Open(path);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().message(),
            path + ": log format version 0 is not supported (this xtrace reads versions 1 to 2)");
}

// Cuts the log at many points inside batch 2 and checks the error names batch 2, its offset,
// and sizes that make sense: the same "need" for every cut, "have" growing with the cut.
TEST(LogReaderTest, TruncationNamesTheBatchAndSizes) {
  ScratchDir dir;
  const SampleLog log = WriteSampleLog(dir.File("full.capnp"), 3);
  const std::string bytes = ReadFileBytes(log.path);
  const uint64_t begin = log.frame_offsets[2];  // batch 2
  const uint64_t end = log.frame_offsets[3];
  const std::string cut_path = dir.File("cut.capnp");
  const std::regex sizes_re(
      R"(truncated message \(need (\d+) bytes unpacked, have (\d+); the file ends at byte (\d+)\)$)");

  uint64_t need_seen = 0;
  uint64_t last_have = 0;
  for (uint64_t cut :
       {begin + 1, begin + 2, begin + 9, begin + 100, (begin + end) / 2, end - 2, end - 1}) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    WriteFileBytes(cut_path, bytes.substr(0, cut));
    auto reader = LogReader::Open(cut_path);
    ASSERT_TRUE(reader.ok()) << reader.status().message();
    const ReadOutcome outcome = ReadToEnd(*reader);
    EXPECT_EQ(outcome.events.size(), static_cast<size_t>(kEventsPerBatch));  // batch 1 only
    ASSERT_FALSE(outcome.status.ok());
    const std::string& message = outcome.status.message();
    EXPECT_TRUE(
        Contains(message, cut_path + ": batch 2 (at byte " + std::to_string(begin) + "): "));
    std::smatch m;
    ASSERT_TRUE(std::regex_search(message, m, sizes_re)) << message;
    const uint64_t need = std::stoull(m[1]);
    const uint64_t have = std::stoull(m[2]);
    EXPECT_LT(have, need);
    EXPECT_EQ(std::stoull(m[3]), cut);
    if (need_seen == 0 && cut > begin + 9) need_seen = need;  // past the segment table
    if (cut > begin + 9) {
      EXPECT_EQ(need, need_seen);
    }
    EXPECT_GE(have, last_have);
    last_have = have;
    // Sticky: asking again gives the same error, not more events.
    Event event;
    EXPECT_EQ(reader->Next(&event).status().message(), message);
  }
  EXPECT_GT(need_seen, static_cast<uint64_t>(kEventsPerBatch) * 80);  // ~10 words per event
}

TEST(LogReaderTest, TruncatedHeaderIsNotAnXtraceLog) {
  ScratchDir dir;
  const SampleLog log = WriteSampleLog(dir.File("full.capnp"), 1);
  const std::string cut_path = dir.File("cut.capnp");
  WriteFileBytes(cut_path, ReadFileBytes(log.path).substr(0, log.frame_offsets[1] - 3));
  auto reader = LogReader::Open(cut_path);
  ASSERT_FALSE(reader.ok());
  EXPECT_TRUE(Contains(reader.status().message(),
                       cut_path + ": not an xtrace log (truncated message (need "));
}

TEST(LogReaderTest, SalvageReturnsEveryCompleteBatch) {
  ScratchDir dir;
  const SampleLog log = WriteSampleLog(dir.File("full.capnp"), 4);
  const std::string cut_path = dir.File("cut.capnp");
  const uint64_t batch4 = log.frame_offsets[4];
  WriteFileBytes(cut_path, ReadFileBytes(log.path).substr(0, batch4 + 57));

  auto reader = LogReader::Open(cut_path, {.salvage = true});
  ASSERT_TRUE(reader.ok());
  const ReadOutcome outcome = ReadToEnd(*reader);
  EXPECT_TRUE(outcome.status.ok()) << outcome.status.message();
  ASSERT_EQ(outcome.events.size(), static_cast<size_t>(3 * kEventsPerBatch));
  EXPECT_EQ(std::get<KernelLaunch>(outcome.events.back()).start_ns,
            test_util::RealisticLaunch(3 * kEventsPerBatch - 1, 0, 1).start_ns);
  EXPECT_EQ(reader->batches_read(), 3u);
  EXPECT_FALSE(reader->complete());
  ASSERT_FALSE(reader->damage().ok());
  EXPECT_TRUE(
      Contains(reader->damage().message(),
               cut_path + ": batch 4 (at byte " + std::to_string(batch4) + "): truncated message"));
}

TEST(LogReaderTest, SalvageOfIntactLogReportsNoDamage) {
  ScratchDir dir;
  const SampleLog log = WriteSampleLog(dir.File("full.capnp"), 2);
  auto reader = LogReader::Open(log.path, {.salvage = true});
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(ReadToEnd(*reader).events.size(), static_cast<size_t>(2 * kEventsPerBatch));
  EXPECT_TRUE(reader->damage().ok());
  EXPECT_TRUE(reader->complete());
}

TEST(LogReaderTest, MissingSummaryIsReadableAndFlaggedIncomplete) {
  ScratchDir dir;
  const SampleLog log = WriteSampleLog(dir.File("killed.capnp"), 2, /*finish=*/false);
  auto reader = LogReader::Open(log.path);
  ASSERT_TRUE(reader.ok());
  const ReadOutcome outcome = ReadToEnd(*reader);
  EXPECT_TRUE(outcome.status.ok());
  EXPECT_EQ(outcome.events.size(), static_cast<size_t>(2 * kEventsPerBatch));
  EXPECT_FALSE(reader->complete());
  EXPECT_FALSE(reader->summary().has_value());
  EXPECT_TRUE(reader->damage().ok());
}

// Appends a batch frame built by `fill` to `path`; returns the offset it starts at.
template <typename Fill>
uint64_t AppendBatchFrame(const std::string& path, Fill&& fill) {
  const uint64_t offset = std::filesystem::file_size(path);
  capnp::MallocMessageBuilder message;
  fill(message.initRoot<log_schema::LogFrame>().initBatch());
  WritePackedMessage(path, message, /*append=*/true);
  return offset;
}

TEST(LogReaderTest, CorruptStringIdIsReported) {
  ScratchDir dir;
  const std::string path = dir.File("bad_ids.capnp");
  WriteHeaderFrame(path, 1, "0.1.0");
  const uint64_t at = AppendBatchFrame(path, [](log_schema::Batch::Builder batch) {
    batch.setFirstStringId(1);
    auto strings = batch.initStrings(2);
    strings.set(0, "a");
    strings.set(1, "b");
    auto events = batch.initEvents(2);
    events[0].initThreadInfo().setName(2);          // fine: ids 0..2 exist
    events[1].initKernelLaunch().setKernelName(3);  // one past the table
  });
  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok());
  const ReadOutcome outcome = ReadToEnd(*reader);
  EXPECT_TRUE(outcome.events.empty());  // a bad batch is rejected whole
  EXPECT_EQ(outcome.status.message(),
            path + ": batch 1 (at byte " + std::to_string(at) +
                "): corrupt string id 3 in event 1 (the table has 3 strings)");
}

// Format 1 stored launch handles in the event itself; such logs still read.
TEST(LogReaderTest, Format1LaunchHandlesInlineStillRead) {
  ScratchDir dir;
  const std::string path = dir.File("v1.capnp");
  WriteHeaderFrame(path, 1, "0.1.0");
  AppendBatchFrame(path, [](log_schema::Batch::Builder batch) {
    batch.setFirstStringId(1);
    batch.setBaseNs(1000);
    auto launch = batch.initEvents(1)[0].initKernelLaunch();
    launch.setPid(7);
    launch.setKernel(0x55d0c0a3e000);
    launch.setCommandList(0x55d0c0a3f000);
    launch.setSignalEvent(0x55d0c1f00080);
  });
  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  const ReadOutcome outcome = ReadToEnd(*reader);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status.message();
  ASSERT_EQ(outcome.events.size(), 1u);
  const auto& l = std::get<KernelLaunch>(outcome.events[0]);
  EXPECT_EQ(l.pid, 7u);
  EXPECT_EQ(l.kernel, 0x55d0c0a3e000u);
  EXPECT_EQ(l.command_list, 0x55d0c0a3f000u);
  EXPECT_EQ(l.signal_event, 0x55d0c1f00080u);
}

TEST(LogReaderTest, HandleRefBeyondTheBatchTableIsReported) {
  ScratchDir dir;
  const std::string path = dir.File("bad_ref.capnp");
  WriteHeaderFrame(path, 2, "0.1.0");
  const uint64_t at = AppendBatchFrame(path, [](log_schema::Batch::Builder batch) {
    batch.setFirstStringId(1);
    batch.initHandles(2).set(0, 0x10);
    auto events = batch.initEvents(2);
    events[0].initKernelLaunch().setKernelRef(2);        // fine: handles[1]
    events[1].initKernelLaunch().setCommandListRef(3);  // one past the table
  });
  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok());
  const ReadOutcome outcome = ReadToEnd(*reader);
  EXPECT_TRUE(outcome.events.empty());
  EXPECT_EQ(outcome.status.message(),
            path + ": batch 1 (at byte " + std::to_string(at) +
                "): corrupt handle ref in event 1 (the batch has 2 handles)");
}

TEST(LogReaderTest, StringTableGapIsReported) {
  ScratchDir dir;
  const std::string path = dir.File("gap.capnp");
  WriteHeaderFrame(path, 1, "0.1.0");
  AppendBatchFrame(path, [](log_schema::Batch::Builder batch) {
    batch.setFirstStringId(1);
    batch.initStrings(1).set(0, "a");
    batch.initEvents(1)[0].initThreadInfo().setName(1);
  });
  const uint64_t at = AppendBatchFrame(path, [](log_schema::Batch::Builder batch) {
    batch.setFirstStringId(5);  // ids 2..4 were never written
    batch.initStrings(1).set(0, "e");
  });
  auto reader = LogReader::Open(path, {.salvage = true});
  ASSERT_TRUE(reader.ok());
  const ReadOutcome outcome = ReadToEnd(*reader);
  EXPECT_EQ(outcome.events.size(), 1u);
  EXPECT_EQ(reader->damage().message(),
            path + ": batch 2 (at byte " + std::to_string(at) +
                "): corrupt string table (its strings start at id 5, expected 2)");
}

TEST(LogReaderTest, CorruptPointerIsReportedNotCrashed) {
  ScratchDir dir;
  const SampleLog log = WriteSampleLog(dir.File("full.capnp"), 1, /*finish=*/false);
  // A batch frame whose root pointer points far outside its one-word segment, packed by
  // hand: segment table (1 segment of 2 words), then the root struct pointer.
  std::string frame;
  const uint32_t table[2] = {0, 2};
  const uint64_t words[2] = {(uint64_t{1} << 32) | (uint64_t{1000} << 2), 0};
  std::string raw(reinterpret_cast<const char*>(table), 8);
  raw.append(reinterpret_cast<const char*>(words), 16);
  for (size_t w = 0; w < raw.size(); w += 8) {  // pack: tag 0xff would need a count; use bits
    uint8_t tag = 0;
    std::string nonzero;
    for (int b = 0; b < 8; ++b) {
      if (raw[w + b] != 0) {
        tag |= static_cast<uint8_t>(1u << b);
        nonzero.push_back(raw[w + b]);
      }
    }
    frame.push_back(static_cast<char>(tag));
    frame += nonzero;
    if (tag == 0) frame.push_back('\0');  // zero run of no further words
  }
  WriteFileBytes(log.path, ReadFileBytes(log.path) + frame);
  auto reader = LogReader::Open(log.path);
  ASSERT_TRUE(reader.ok());
  const ReadOutcome outcome = ReadToEnd(*reader);
  EXPECT_EQ(outcome.events.size(), static_cast<size_t>(kEventsPerBatch));
  EXPECT_TRUE(Contains(
      outcome.status.message(),
      log.path + ": batch 2 (at byte " + std::to_string(log.size) + "): corrupt message: "));
  EXPECT_EQ(outcome.status.message().find('\n'), std::string::npos) << outcome.status.message();
}

TEST(LogReaderTest, DataAfterSummaryIsDamage) {
  ScratchDir dir;
  const SampleLog log = WriteSampleLog(dir.File("full.capnp"), 1);
  WriteFileBytes(log.path, ReadFileBytes(log.path) + "junk");
  auto reader = LogReader::Open(log.path, {.salvage = true});
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(ReadToEnd(*reader).events.size(), static_cast<size_t>(kEventsPerBatch));
  EXPECT_TRUE(reader->complete());
  EXPECT_EQ(reader->damage().message(), log.path + ": unexpected data after the summary (at byte " +
                                            std::to_string(log.size) + ")");
}

TEST(LogReaderTest, SecondHeaderIsDamage) {
  ScratchDir dir;
  const SampleLog log = WriteSampleLog(dir.File("full.capnp"), 1, /*finish=*/false);
  const std::string header = ReadFileBytes(log.path).substr(0, log.frame_offsets[1]);
  WriteFileBytes(log.path, ReadFileBytes(log.path) + header);
  auto reader = LogReader::Open(log.path);
  ASSERT_TRUE(reader.ok());
  const ReadOutcome outcome = ReadToEnd(*reader);
  EXPECT_EQ(outcome.status.message(),
            log.path + ": batch 2 (at byte " + std::to_string(log.size) + "): a second header");
}

// The reader must hand out events of batch 1 before batch 2 even exists: a FIFO proves it
// does not read ahead (or slurp the file). The writer waits, with a timeout so a broken
// reader fails the test instead of hanging it, until the reader has seen batch 1.
TEST(LogReaderTest, StreamsWithoutReadingAhead) {
  ScratchDir dir;
  const std::string path = dir.File("pipe.capnp");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);

  std::mutex mu;
  std::condition_variable cv;
  bool reader_saw_batch1 = false;
  bool writer_timed_out = false;
  std::thread writer_thread([&] {
    auto writer = LogWriter::Create(path, SampleHeader());  // blocks until the reader opens
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    for (uint32_t i = 0; i < 10; ++i) (*writer)->Append(ThreadInfo{.pid = 1, .tid = i});
    ASSERT_TRUE((*writer)->Flush().ok());
    {
      std::unique_lock lock(mu);
      writer_timed_out =
          !cv.wait_for(lock, std::chrono::seconds(10), [&] { return reader_saw_batch1; });
    }
    for (uint32_t i = 10; i < 20; ++i) (*writer)->Append(ThreadInfo{.pid = 1, .tid = i});
    ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
  });

  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_FALSE(reader->file_size().has_value());
  Event event;
  for (uint32_t i = 0; i < 10; ++i) {
    Result<bool> next = reader->Next(&event);
    ASSERT_TRUE(next.ok() && *next);
    EXPECT_EQ(std::get<ThreadInfo>(event).tid, i);
  }
  {
    std::lock_guard lock(mu);
    reader_saw_batch1 = true;
  }
  cv.notify_one();
  const ReadOutcome rest = ReadToEnd(*reader);
  writer_thread.join();
  EXPECT_FALSE(writer_timed_out) << "the reader needed batch 2 before returning batch 1";
  EXPECT_TRUE(rest.status.ok());
  EXPECT_EQ(rest.events.size(), 10u);
  EXPECT_TRUE(reader->complete());
}

TEST(LogReaderTest, ProgressCountsBytes) {
  ScratchDir dir;
  const SampleLog log = WriteSampleLog(dir.File("full.capnp"), 3);
  auto reader = LogReader::Open(log.path);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(reader->file_size(), log.size);
  EXPECT_LT(reader->bytes_read(), log.size);
  ReadToEnd(*reader);
  EXPECT_EQ(reader->bytes_read(), log.size);
  EXPECT_EQ(reader->events_read(), static_cast<uint64_t>(3 * kEventsPerBatch));
}

// NextEvent hands out the events in the reader's own batch, each decoded over the slot's
// previous event: kinds change from slot to slot between batches (a Python stack where a
// launch was, with fewer frames than the stack before it), and each event still reads as
// written, the same as Next's copies.
TEST(LogReaderTest, NextEventReadsEachEventOverTheSlotBefore) {
  ScratchDir dir;
  const std::string path = dir.File("mixed.capnp");
  std::vector<Event> written;
  {
    auto writer = LogWriter::Create(path, SampleHeader(), {.events_per_batch = 5});
    ASSERT_TRUE(writer.ok());
    StringTable& s = (*writer)->strings();
    const StringId name = s.Intern("gemm"), file = s.Intern("model.py"), fn = s.Intern("forward");
    auto stack = [&](uint64_t i, int frames) {
      PythonStack st{.pid = 7, .tid = 8, .start_ns = 1000 + i, .end_ns = 2000 + i, .frames = {},
                     .truncated = frames > 2};
      for (int f = 0; f < frames; ++f)
        st.frames.push_back({.file = file, .function = fn, .line = static_cast<uint32_t>(10 + f)});
      return st;
    };
    // Batches of five, the kinds rotating so that every slot sees several kinds.
    for (uint64_t i = 0; i < 40; ++i) {
      Event e;
      switch (i % 7) {
        case 0: e = ProcessInfo{.pid = static_cast<uint32_t>(100 + i)}; break;
        case 1: e = stack(i, static_cast<int>(4 - i % 4)); break;
        case 2: e = ThreadInfo{.pid = 7, .tid = static_cast<uint32_t>(i), .name = name}; break;
        default: e = test_util::RealisticLaunch(i, name, 1); break;
      }
      written.push_back(e);
      (*writer)->Append(e);
    }
    ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok());
  size_t n = 0;
  while (true) {
    Result<const Event*> next = reader->NextEvent();
    ASSERT_TRUE(next.ok()) << next.status().message();
    if (!*next) break;
    ASSERT_LT(n, written.size());
    const Event& read = **next;
    if (const auto* st = std::get_if<PythonStack>(&written[n])) {
      const auto* got = std::get_if<PythonStack>(&read);
      ASSERT_NE(got, nullptr) << "event " << n;
      EXPECT_EQ(got->frames, st->frames) << "event " << n;
      EXPECT_EQ(got->truncated, st->truncated) << "event " << n;
      EXPECT_EQ(got->start_ns, st->start_ns) << "event " << n;
    } else {
      test_util::ExpectSameEvent(written[n], read);
    }
    ++n;
  }
  EXPECT_EQ(n, written.size());
  EXPECT_EQ(reader->events_read(), written.size());
  EXPECT_TRUE(reader->complete());

  // Next copies the same events.
  auto copying = LogReader::Open(path);
  ASSERT_TRUE(copying.ok());
  const ReadOutcome outcome = ReadToEnd(*copying);
  ASSERT_TRUE(outcome.status.ok());
  ASSERT_EQ(outcome.events.size(), written.size());
  for (size_t i = 0; i < written.size(); ++i) {
    if (std::holds_alternative<PythonStack>(written[i])) {
      EXPECT_EQ(std::get<PythonStack>(outcome.events[i]).frames,
                std::get<PythonStack>(written[i]).frames);
    } else {
      test_util::ExpectSameEvent(written[i], outcome.events[i]);
    }
  }
}

}  // namespace
}  // namespace xtrace
