// Tests of LogReader's windows (userspace/log/log_reader.cc): batches outside the window are
// skipped or stepped over unread, through the batch index where the log has one, and a window
// read gives what a whole read gives inside it; damage where the read does not go is unseen.
#include "log/log_reader.h"

#include <capnp/message.h>
#include <capnp/serialize-packed.h>
#include <gtest/gtest.h>
#include <kj/io.h>

#include <cstring>
#include <string>
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
using test_util::ReadFileBytes;
using test_util::ReadOutcome;
using test_util::ReadToEnd;
using test_util::SampleHeader;
using test_util::SampleLog;
using test_util::SampleSummary;
using test_util::ScratchDir;
using test_util::WriteFileBytes;
using test_util::WriteSampleLog;

// With a window, batches whose spans all lie outside it come back without their spans but
// with their identities; batches reaching into it come back whole; old logs (no endNs) whole.
TEST(LogReaderTest, WindowSkipsTheSpansOfBatchesOutsideIt) {
  ScratchDir dir;
  const std::string path = dir.File("windowed.capnp");
  {
    auto writer = LogWriter::Create(path, SampleHeader(), {.events_per_batch = kEventsPerBatch});
    ASSERT_TRUE(writer.ok());
    StringTable& s = (*writer)->strings();
    const StringId name = s.Intern("gemm");
    for (int i = 0; i < 10 * kEventsPerBatch; ++i) {
      if (i % kEventsPerBatch == 0) {
        (*writer)->Append(ProcessInfo{.pid = static_cast<uint32_t>(100 + i / kEventsPerBatch)});
        ++i;
      }
      (*writer)->Append(test_util::RealisticLaunch(static_cast<uint64_t>(i), name, 1));
    }
    ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  // Launch i starts near 5e12 + i * 7300 ns: the window holds launches 450 to 549, in
  // batches 5 and 6 (events 400-599) only.
  const uint64_t from = 5'000'000'000'000 + 450 * 7'300, to = 5'000'000'000'000 + 550 * 7'300;
  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok());
  reader->SetWindow(LogReaderOptions::Window{.from_ns = from, .to_ns = to});
  Event e;
  std::vector<uint32_t> processes;
  uint64_t launches = 0, launches_inside = 0;
  while (true) {
    Result<bool> next = reader->Next(&e);
    ASSERT_TRUE(next.ok()) << next.status().message();
    if (!*next) break;
    if (const auto* p = std::get_if<ProcessInfo>(&e)) processes.push_back(p->pid);
    if (const auto* l = std::get_if<KernelLaunch>(&e)) {
      ++launches;
      if (l->end_ns >= from && l->start_ns < to) ++launches_inside;
    }
  }
  EXPECT_EQ(reader->batches_read(), 10u);
  EXPECT_EQ(reader->batches_skipped(), 8u);
  EXPECT_EQ(launches, 2u * (kEventsPerBatch - 1)) << "the two batches reaching into the window, whole";
  EXPECT_EQ(launches_inside, 100u);
  EXPECT_EQ(processes.size(), 10u) << "identities come back from skipped batches too";
}

// The header's batchIndexAt, as stored (its 8 bytes lie in the packed header as they are).
uint64_t StoredBatchIndexAt(const std::string& bytes) {
  kj::ArrayInputStream input(
      kj::ArrayPtr<const kj::byte>(reinterpret_cast<const kj::byte*>(bytes.data()), bytes.size()));
  capnp::PackedMessageReader message(input);
  return message.getRoot<log_schema::LogFrame>().getHeader().getBatchIndexAt();
}

// Writes `stored` over the header's batchIndexAt in the file: 0 in the stored form (all bytes
// 0x80) makes the log one without an index, as builds before it wrote.
void SetBatchIndexAt(const std::string& path, uint64_t stored) {
  std::string bytes = ReadFileBytes(path);
  const uint64_t now = StoredBatchIndexAt(bytes);
  const std::string from(reinterpret_cast<const char*>(&now), 8);
  const size_t at = bytes.find(from);
  ASSERT_NE(at, std::string::npos);
  ASSERT_LT(at, 200u) << "in the header";
  std::memcpy(&bytes[at], &stored, 8);
  WriteFileBytes(path, bytes);
  ASSERT_EQ(StoredBatchIndexAt(ReadFileBytes(path)), stored);
}

// 60 batches of launches, a thread's name in every tenth (which parts the index's runs), a
// process's identity in the first.
std::string WriteRunsLog(const std::string& path) {
  auto writer = LogWriter::Create(path, SampleHeader(), {.events_per_batch = kEventsPerBatch});
  EXPECT_TRUE(writer.ok());
  const StringId name = (*writer)->strings().Intern("gemm");
  (*writer)->Append(ProcessInfo{.pid = 1, .comm = name});
  for (int i = 0; i < 60 * kEventsPerBatch; ++i) {
    if (i % (10 * kEventsPerBatch) == 5 * kEventsPerBatch)
      (*writer)->Append(ThreadInfo{.pid = 1, .tid = static_cast<uint32_t>(i), .name = name});
    (*writer)->Append(test_util::RealisticLaunch(static_cast<uint64_t>(i), name, 1));
  }
  EXPECT_TRUE((*writer)->Finish(SampleSummary()).ok());
  return path;
}

ReadOutcome ReadWindow(const std::string& path, LogReaderOptions::Window window,
                       uint64_t* runs_skipped = nullptr, uint64_t* batches_skipped = nullptr) {
  auto reader = LogReader::Open(path);
  EXPECT_TRUE(reader.ok());
  if (!reader.ok()) return {};
  reader->SetWindow(window);
  ReadOutcome outcome = ReadToEnd(*reader);
  EXPECT_TRUE(reader->complete());
  if (runs_skipped) *runs_skipped = reader->runs_skipped();
  if (batches_skipped) *batches_skipped = reader->batches_skipped();
  return outcome;
}

// A window read through the batch index returns exactly what the same window read by the
// heads returns (a log without the index, as builds before it wrote): the batches reaching into
// the window whole, every identity; and the spans reaching into the window are those of a
// whole read.
TEST(LogReaderTest, WindowThroughTheIndexGivesWhatTheHeadsGive) {
  ScratchDir dir;
  const std::string indexed = WriteRunsLog(dir.File("indexed.capnp"));
  const std::string old = WriteRunsLog(dir.File("old.capnp"));
  SetBatchIndexAt(old, log_codec::EncodeBatchIndexAt(0));
  // Launch i starts near 5e12 + i * 7300 ns.
  for (const auto& [first, last] : {std::pair{3020, 3090}, std::pair{0, 10}, std::pair{5990, 6100},
                                    std::pair{1480, 2750}, std::pair{9000, 9100}}) {
    const LogReaderOptions::Window window{
        .from_ns = 5'000'000'000'000 + static_cast<uint64_t>(first) * 7'300,
        .to_ns = 5'000'000'000'000 + static_cast<uint64_t>(last) * 7'300};
    SCOPED_TRACE("launches " + std::to_string(first) + " to " + std::to_string(last));
    uint64_t runs_skipped = 0, batches_skipped = 0, old_runs = 0, old_batches = 0;
    const ReadOutcome a = ReadWindow(indexed, window, &runs_skipped, &batches_skipped);
    const ReadOutcome b = ReadWindow(old, window, &old_runs, &old_batches);
    ASSERT_TRUE(a.status.ok()) << a.status.message();
    ASSERT_TRUE(b.status.ok()) << b.status.message();
    EXPECT_GT(runs_skipped, 0u);
    EXPECT_EQ(old_runs, 0u) << "no index: nothing to skip runs by";
    EXPECT_EQ(batches_skipped, old_batches);
    ASSERT_EQ(a.events.size(), b.events.size());
    for (size_t i = 0; i < a.events.size(); ++i) test_util::ExpectSameEvent(b.events[i], a.events[i]);

    // Against the whole log: the same identities, and the same spans reaching into the window.
    auto whole = LogReader::Open(indexed);
    ASSERT_TRUE(whole.ok());
    const ReadOutcome all = ReadToEnd(*whole);
    auto reaching = [&](const std::vector<Event>& events) {
      std::vector<uint64_t> starts;
      size_t identities = 0;
      for (const Event& e : events) {
        if (const auto* l = std::get_if<KernelLaunch>(&e)) {
          if (l->end_ns >= window.from_ns && l->start_ns < window.to_ns) starts.push_back(l->start_ns);
        } else {
          ++identities;
        }
      }
      return std::pair{starts, identities};
    };
    EXPECT_EQ(reaching(a.events), reaching(all.events));
  }
}

// The index is read ahead, and the runs it steps over are not read at all: damage in the heads
// of a run outside the window goes unseen by the indexed read, while the same log read by its
// heads (no index) finds it.
TEST(LogReaderTest, RunsOutsideTheWindowAreNotReadEvenTheirHeads) {
  ScratchDir dir;
  const std::string path = WriteRunsLog(dir.File("run.capnp"));
  std::string bytes = ReadFileBytes(path);
  // Every byte between the first batch and the middle of the log: the runs there, their heads
  // and a batch of identities (which a window also reads: it stays whole).
  uint64_t first_run = 0, first_run_bytes = 0;
  {
    kj::ArrayInputStream input(kj::ArrayPtr<const kj::byte>(
        reinterpret_cast<const kj::byte*>(bytes.data()), bytes.size()));
    while (input.tryGetReadBuffer().size() > 0) {
      capnp::PackedMessageReader message(input);
      const auto root = message.getRoot<log_schema::LogFrame>();
      if (root.isBatchIndex()) {
        ASSERT_GE(root.getBatchIndex().getSpanRuns().size(), 6u);
        first_run = root.getBatchIndex().getSpanRuns()[0].getOffset();
        first_run_bytes = root.getBatchIndex().getSpanRuns()[0].getBytes();
      }
    }
  }
  ASSERT_GT(first_run_bytes, 0u);
  for (uint64_t i = first_run; i < first_run + first_run_bytes; ++i) bytes[i] = '\xff';
  WriteFileBytes(path, bytes);
  const LogReaderOptions::Window window{.from_ns = 5'000'000'000'000 + 5'500 * 7'300,
                                        .to_ns = 5'000'000'000'000 + 5'510 * 7'300};
  uint64_t runs_skipped = 0;
  const ReadOutcome indexed = ReadWindow(path, window, &runs_skipped);
  ASSERT_TRUE(indexed.status.ok()) << indexed.status.message();
  EXPECT_GE(runs_skipped, 5u);
  EXPECT_TRUE(std::any_of(indexed.events.begin(), indexed.events.end(), [&](const Event& e) {
    const auto* l = std::get_if<KernelLaunch>(&e);
    return l && l->start_ns >= window.from_ns && l->start_ns < window.to_ns;
  }));

  SetBatchIndexAt(path, log_codec::EncodeBatchIndexAt(0));
  auto by_heads = LogReader::Open(path);
  ASSERT_TRUE(by_heads.ok());
  by_heads->SetWindow(window);
  EXPECT_FALSE(ReadToEnd(*by_heads).status.ok()) << "the damaged heads are read without the index";
}

// An index pointer that leads nowhere good (past the end, into a batch, onto the header) is
// ignored: the log reads by its heads, every event there.
TEST(LogReaderTest, ABadIndexPointerIsIgnored) {
  ScratchDir dir;
  const std::string good = WriteRunsLog(dir.File("good.capnp"));
  const LogReaderOptions::Window window{.from_ns = 5'000'000'000'000 + 3'000 * 7'300,
                                        .to_ns = 5'000'000'000'000 + 3'010 * 7'300};
  const ReadOutcome expected = ReadWindow(good, window);
  ASSERT_TRUE(expected.status.ok());
  const std::string bytes = ReadFileBytes(good);
  // Where the first batch begins: right after the header.
  uint64_t first_batch = 0;
  {
    kj::ArrayInputStream input(kj::ArrayPtr<const kj::byte>(
        reinterpret_cast<const kj::byte*>(bytes.data()), bytes.size()));
    capnp::PackedMessageReader header(input);
    first_batch = bytes.size() - input.tryGetReadBuffer().size();
  }
  for (const uint64_t at : {uint64_t{bytes.size() + 100}, uint64_t{bytes.size() / 2}, uint64_t{1},
                            first_batch}) {
    const std::string path = dir.File("bad.capnp");
    WriteFileBytes(path, ReadFileBytes(good));
    SetBatchIndexAt(path, log_codec::EncodeBatchIndexAt(at));
    uint64_t runs_skipped = 0;
    const ReadOutcome got = ReadWindow(path, window, &runs_skipped);
    ASSERT_TRUE(got.status.ok()) << "index at " << at << ": " << got.status.message();
    EXPECT_EQ(runs_skipped, 0u) << "index at " << at;
    ASSERT_EQ(got.events.size(), expected.events.size()) << "index at " << at;
  }
}

// Batches of spans only are stepped over unread when they miss the window: damage inside one
// goes unnoticed by a windowed read, which returns the window's batch whole, while a whole
// read reports it.
TEST(LogReaderTest, WindowStepsOverSpanBatchesUnread) {
  ScratchDir dir;
  const SampleLog log = WriteSampleLog(dir.File("run.capnp"), 10);
  // Batch 3 (frame_offsets[4]) loses the middle of its bytes.
  std::string bytes = ReadFileBytes(log.path);
  const uint64_t middle = (log.frame_offsets[4] + log.frame_offsets[5]) / 2;
  for (uint64_t i = middle; i < middle + 24; ++i) bytes[i] = '\xff';
  WriteFileBytes(log.path, bytes);

  // Launch i starts near 5e12 + i * 7300 ns: a window inside batch 8 (launches 800-899).
  auto reader = LogReader::Open(log.path);
  ASSERT_TRUE(reader.ok());
  reader->SetWindow(LogReaderOptions::Window{.from_ns = 5'000'000'000'000 + 820 * 7'300,
                                             .to_ns = 5'000'000'000'000 + 830 * 7'300});
  const ReadOutcome windowed = ReadToEnd(*reader);
  ASSERT_TRUE(windowed.status.ok()) << windowed.status.message();
  ASSERT_EQ(windowed.events.size(), static_cast<size_t>(kEventsPerBatch));
  EXPECT_EQ(std::get<KernelLaunch>(windowed.events.front()).start_ns,
            test_util::RealisticLaunch(800, 0, 1).start_ns);
  EXPECT_EQ(reader->batches_read(), 10u);
  EXPECT_EQ(reader->batches_skipped(), 9u);
  EXPECT_TRUE(reader->complete());
  // Stepped over, not read: the reader's position passed the damage without unpacking it.

  auto whole = LogReader::Open(log.path);
  ASSERT_TRUE(whole.ok());
  const ReadOutcome all = ReadToEnd(*whole);
  EXPECT_FALSE(all.status.ok()) << "the damage in batch 4 is found by a whole read";
}

// A batch to step over that the file ends inside of is truncation, named like any other;
// with salvage, what came before it is kept.
TEST(LogReaderTest, WindowStepOverPastTheEndIsTruncation) {
  ScratchDir dir;
  const SampleLog log = WriteSampleLog(dir.File("run.capnp"), 10, /*finish=*/false);
  std::string bytes = ReadFileBytes(log.path);
  bytes.resize(log.size - 40);
  WriteFileBytes(log.path, bytes);
  const LogReaderOptions::Window window{.from_ns = 5'000'000'000'000 + 220 * 7'300,
                                        .to_ns = 5'000'000'000'000 + 230 * 7'300};
  {
    auto reader = LogReader::Open(log.path);
    ASSERT_TRUE(reader.ok());
    reader->SetWindow(window);
    const ReadOutcome outcome = ReadToEnd(*reader);
    ASSERT_FALSE(outcome.status.ok());
    EXPECT_TRUE(Contains(outcome.status.message(), log.path + ": batch 10 (at byte " +
                                                       std::to_string(log.frame_offsets[10]) +
                                                       "): truncated message"))
        << outcome.status.message();
    EXPECT_TRUE(Contains(outcome.status.message(),
                         "the file ends at byte " + std::to_string(log.size - 40)))
        << outcome.status.message();
    EXPECT_EQ(outcome.events.size(), static_cast<size_t>(kEventsPerBatch));
  }
  auto salvaged = LogReader::Open(log.path, LogReaderOptions{.salvage = true});
  ASSERT_TRUE(salvaged.ok());
  salvaged->SetWindow(window);
  const ReadOutcome outcome = ReadToEnd(*salvaged);
  EXPECT_TRUE(outcome.status.ok());
  EXPECT_EQ(outcome.events.size(), static_cast<size_t>(kEventsPerBatch));
  EXPECT_TRUE(Contains(salvaged->damage().message(), "truncated message"));
}

}  // namespace
}  // namespace xtrace
