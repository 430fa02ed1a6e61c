// Tests for LogWriter (userspace/log/log_writer.cc): round trips through LogReader, the frame
// layout on disk (checked with Cap'n Proto's own reader), batching, errors, compactness.
#include "log/log_writer.h"

#include <capnp/serialize-packed.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <kj/io.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "log/event_codec.h"
#include "log/log_reader.h"
#include "log/xtrace_log.capnp.h"
#include "log_test_util.h"

namespace xtrace {
namespace {

using test_util::ExpectSameEvent;
using test_util::RealisticLaunch;
using test_util::SampleHeader;
using test_util::SampleSummary;
using test_util::ScratchDir;

std::vector<Event> ReadAll(LogReader& reader) {
  std::vector<Event> events;
  Event event;
  while (true) {
    Result<bool> next = reader.Next(&event);
    EXPECT_TRUE(next.ok()) << next.status().message();
    if (!next.ok() || !*next) break;
    events.push_back(event);
  }
  return events;
}

// What each frame of the file is, decoded by Cap'n Proto's stock packed reader: an
// independent check of the on-disk format (the code under test uses its own unpacker).
struct FrameInfo {
  log_schema::LogFrame::Which kind = log_schema::LogFrame::HEADER;
  uint64_t offset = 0;  // where the frame begins in the file
  uint32_t first_string_id = 0;
  std::vector<std::string> strings;
  size_t events = 0;  // a batch's, or what a span batch head says
  uint64_t base_ns = 0, end_ns = 0;
  uint64_t packed_bytes = 0;  // a span batch head's
  uint64_t batch_index_at = 0;  // a header's, decoded (0: none)
  struct Run {
    uint64_t offset, bytes, base_ns, end_ns, events;
    uint32_t batches;
  };
  std::vector<Run> runs;  // a batch index's
};

std::vector<FrameInfo> DecodeFrames(const std::string& path) {
  std::vector<FrameInfo> frames;
  const std::string bytes = test_util::ReadFileBytes(path);
  kj::ArrayInputStream input(
      kj::ArrayPtr<const kj::byte>(reinterpret_cast<const kj::byte*>(bytes.data()), bytes.size()));
  while (input.tryGetReadBuffer().size() > 0) {
    FrameInfo info;
    info.offset = bytes.size() - input.tryGetReadBuffer().size();
    capnp::PackedMessageReader message(input);
    auto root = message.getRoot<log_schema::LogFrame>();
    info.kind = root.which();
    if (root.isBatch()) {
      info.first_string_id = root.getBatch().getFirstStringId();
      for (auto text : root.getBatch().getStrings()) info.strings.emplace_back(text.cStr());
      info.events = root.getBatch().getEvents().size();
      info.base_ns = root.getBatch().getBaseNs();
      info.end_ns = root.getBatch().getEndNs();
    }
    if (root.isHeader()) {
      info.batch_index_at = log_codec::DecodeBatchIndexAt(root.getHeader().getBatchIndexAt());
    }
    if (root.isBatchIndex()) {
      for (auto r : root.getBatchIndex().getSpanRuns()) {
        info.runs.push_back({r.getOffset(), r.getBytes(), r.getBaseNs(), r.getEndNs(),
                             r.getEvents(), r.getBatches()});
      }
    }
    if (root.isSpanBatch()) {
      info.events = root.getSpanBatch().getEvents();
      info.base_ns = root.getSpanBatch().getBaseNs();
      info.end_ns = root.getSpanBatch().getEndNs();
      info.packed_bytes = root.getSpanBatch().getPackedBytes();
    }
    frames.push_back(std::move(info));
  }
  return frames;
}

TEST(LogWriterTest, RoundTripsEveryEventKindAndField) {
  ScratchDir dir;
  const std::string path = dir.File("run.capnp");
  std::vector<Event> written;
  {
    auto writer = LogWriter::Create(path, SampleHeader());
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    StringTable& strings = (*writer)->strings();

    written.push_back(ProcessInfo{.pid = 4'000'000,
                                  .ns_pid = 17,
                                  .comm = strings.Intern("python3"),
                                  .command_line = strings.Intern("python3 train.py --epochs 3"),
                                  .cgroup = strings.Intern("/system.slice/docker-" +
                                                           std::string(64, 'a') + ".scope"),
                                  .container_id = strings.Intern(std::string(64, 'a')),
                                  .rank = 12});
    written.push_back(
        ThreadInfo{.pid = 4'000'000, .tid = 4'000'001, .name = strings.Intern("worker-1")});
    KernelCreate create;
    create.pid = 4'000'000;
    create.tid = 4'000'001;
    create.start_ns = 9'000'000'000'000'000'000u;
    create.end_ns = 9'000'000'000'000'004'321u;
    create.module = 0x7f00'dead'beef'0001;
    create.kernel = 0xffff'ffff'ffff'fffe;
    create.name = strings.Intern("gemm_kernel_with_a_long_templated_name<float, 128, 64>");
    create.result = -2147483647;
    create.name_truncated = true;
    written.push_back(create);

    KernelLaunch launch;
    launch.pid = 4'000'000;
    launch.tid = 4'000'001;
    launch.start_ns = 9'000'000'000'000'010'000u;
    launch.end_ns = 9'000'000'000'000'012'345u;
    launch.command_list = 0x1111'2222'3333'4444;
    launch.kernel = 0xffff'ffff'ffff'fffe;
    launch.signal_event = 0x8000'0000'0000'0000;
    launch.group_count[0] = 4'294'967'295u;
    launch.group_count[1] = 65'536;
    launch.group_count[2] = 3;
    launch.num_wait_events = 77;
    launch.result = 0x78000001;
    launch.kernel_name = create.name;
    launch.name_known = true;
    launch.group_count_unreadable = false;
    written.push_back(launch);

    // The opposite value of every flag, an unknown name, zero handles.
    KernelLaunch unknown;
    unknown.pid = 1;
    unknown.tid = 2;
    unknown.start_ns = 9'000'000'000'000'020'000u;
    unknown.end_ns = unknown.start_ns;
    unknown.kernel = 0x42;
    unknown.kernel_name = strings.Intern("kernel@0x42");
    unknown.name_known = false;
    unknown.group_count_unreadable = true;
    written.push_back(unknown);

    // Times at the edges: an end before its start and the extremes of uint64 round-trip.
    KernelLaunch odd;
    odd.start_ns = 0;
    odd.end_ns = std::numeric_limits<uint64_t>::max();
    written.push_back(odd);
    KernelCreate backwards;
    backwards.start_ns = std::numeric_limits<uint64_t>::max();
    backwards.end_ns = 5;
    written.push_back(backwards);
    // A process whose rank was not read (the default, -1, must survive packing).
    written.push_back(ProcessInfo{.pid = 4'000'002, .comm = strings.Intern("no-rank")});

    for (const Event& e : written) (*writer)->Append(e);
    ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }

  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  const std::vector<Event> read = ReadAll(*reader);
  ASSERT_EQ(read.size(), written.size());
  for (size_t i = 0; i < read.size(); ++i) {
    SCOPED_TRACE("event " + std::to_string(i));
    ExpectSameEvent(written[i], read[i]);
  }
  const StringTable& strings = reader->strings();
  EXPECT_EQ(strings.Get(std::get<ProcessInfo>(read[0]).comm), "python3");
  EXPECT_EQ(strings.Get(std::get<ProcessInfo>(read[0]).command_line),
            "python3 train.py --epochs 3");
  EXPECT_EQ(strings.Get(std::get<ThreadInfo>(read[1]).name), "worker-1");
  EXPECT_EQ(std::get<ProcessInfo>(read[0]).rank, 12);
  EXPECT_EQ(std::get<ProcessInfo>(read.back()).rank, -1);
  EXPECT_EQ(strings.Get(std::get<KernelLaunch>(read[3]).kernel_name),
            "gemm_kernel_with_a_long_templated_name<float, 128, 64>");
  EXPECT_EQ(strings.Get(std::get<KernelLaunch>(read[4]).kernel_name), "kernel@0x42");
}

TEST(LogWriterTest, HeaderAndSummaryRoundTripAndVersionIsStamped) {
  ScratchDir dir;
  const std::string path = dir.File("run.capnp");
  LogHeader header = SampleHeader();
  header.format_version = 999;  // the writer stamps its own
  {
    auto writer = LogWriter::Create(path, header);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  const LogHeader& h = reader->header();
  EXPECT_EQ(h.format_version, 2u);
  EXPECT_EQ(h.xtrace_version, "0.1.0-test");
  EXPECT_EQ(h.host, "gpu-node-7");
  EXPECT_EQ(h.kernel_release, "6.18.0-test");
  EXPECT_EQ(h.boot_id, "0f3c1d2e-aaaa-bbbb-cccc-0123456789ab");
  EXPECT_EQ(h.command_line, "xtrace record -o run.capnp -- python train.py");
  EXPECT_EQ(h.start_clock.monotonic_ns, 1'000'000'000'123u);
  EXPECT_EQ(h.start_clock.monotonic_raw_ns, 1'000'000'500'456u);
  EXPECT_EQ(h.start_clock.realtime_ns, 1'763'000'000'000'000'789u);

  EXPECT_TRUE(ReadAll(*reader).empty());
  ASSERT_TRUE(reader->complete());
  const LogSummary& s = *reader->summary();
  EXPECT_EQ(s.end_clock.monotonic_ns, 1'000'900'000'000u);
  EXPECT_EQ(s.end_clock.monotonic_raw_ns, 1'000'900'000'500u);
  EXPECT_EQ(s.end_clock.realtime_ns, 1'763'000'900'000'000'000u);
  EXPECT_EQ(s.events, 12345u);
  EXPECT_EQ(s.dropped, 7u);
  EXPECT_EQ(s.processes, 3u);
  ASSERT_EQ(s.process_stats.size(), 2u);
  EXPECT_EQ(s.process_stats[0].pid, 4242u);
  EXPECT_EQ(s.process_stats[0].comm, "python3");
  EXPECT_EQ(s.process_stats[0].dropped, 5u);
  ASSERT_EQ(s.process_stats[0].records_by_source.size(), 2u);
  EXPECT_EQ(s.process_stats[0].records_by_source[0],
            (std::pair<std::string, uint64_t>("Level Zero", 1200)));
  EXPECT_EQ(s.process_stats[0].records_by_source[1], (std::pair<std::string, uint64_t>("ITT", 30)));
  EXPECT_EQ(s.process_stats[1].pid, 4243u);
  EXPECT_TRUE(s.process_stats[1].records_by_source.empty());
}

TEST(LogWriterTest, FileIsHeaderBatchesSummaryAsStockCapnpReaderSeesIt) {
  ScratchDir dir;
  const std::string path = dir.File("run.capnp");
  {
    auto writer = LogWriter::Create(path, SampleHeader(), {.events_per_batch = 2});
    ASSERT_TRUE(writer.ok());
    const StringId a = (*writer)->strings().Intern("a");
    for (int i = 0; i < 5; ++i) (*writer)->Append(ThreadInfo{.pid = 1, .tid = 2, .name = a});
    ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  const std::vector<FrameInfo> frames = DecodeFrames(path);
  ASSERT_EQ(frames.size(), 5u);  // header, 3 batches (2 + 2 + 1), summary
  EXPECT_EQ(frames[0].kind, log_schema::LogFrame::HEADER);
  for (int i = 1; i <= 3; ++i) EXPECT_EQ(frames[i].kind, log_schema::LogFrame::BATCH);
  EXPECT_EQ(frames[1].events + frames[2].events + frames[3].events, 5u);
  EXPECT_EQ(frames[4].kind, log_schema::LogFrame::SUMMARY);
}

// The batch index: consecutive span batches make one run, up to kMaxRunBytes; whatever lies
// between (a batch with strings or identities) parts runs. Only a clean finish writes it, and
// the header then points to it; a log cut short, or written without it, has the header's
// placeholder (decoding to 0), as logs of builds before the index.
TEST(LogWriterTest, AFinishedLogIndexesItsRunsOfSpanBatches) {
  ScratchDir dir;
  using F = log_schema::LogFrame;
  auto write = [&](const std::string& name, bool finish, bool index) {
    const std::string path = dir.File(name);
    auto writer =
        LogWriter::Create(path, SampleHeader(), {.events_per_batch = 500, .batch_index = index});
    EXPECT_TRUE(writer.ok());
    const StringId kernel = (*writer)->strings().Intern("gemm");
    // 40 batches' worth of launches (some 15 KB a batch, well under kMaxRunBytes in all: the
    // size bound is the next test's), a thread's name ahead of launch 10000.
    for (uint64_t i = 0; i < 40 * 500; ++i) {
      if (i == 20 * 500) (*writer)->Append(ThreadInfo{.pid = 1, .tid = 2, .name = kernel});
      (*writer)->Append(RealisticLaunch(i, kernel, 1));
    }
    if (finish) {
      EXPECT_TRUE((*writer)->Finish(SampleSummary()).ok());
    } else {
      EXPECT_TRUE((*writer)->Flush().ok());
    }
    return path;
  };
  {
    const std::vector<FrameInfo> frames = DecodeFrames(write("indexed.capnp", true, true));
    ASSERT_GE(frames.size(), 3u);
    const FrameInfo& index = frames[frames.size() - 2];
    ASSERT_EQ(index.kind, F::BATCH_INDEX);
    EXPECT_EQ(frames.back().kind, F::SUMMARY);
    EXPECT_EQ(frames[0].batch_index_at, index.offset);
    // Every head lies in exactly one run, at the place the run says; runs are in order.
    std::vector<const FrameInfo*> heads;
    for (const FrameInfo& f : frames)
      if (f.kind == F::SPAN_BATCH) heads.push_back(&f);
    ASSERT_FALSE(heads.empty());
    size_t h = 0;
    uint64_t events = 0, batches = 0;
    for (size_t r = 0; r < index.runs.size(); ++r) {
      const auto& run = index.runs[r];
      if (r > 0) {
        EXPECT_GE(run.offset, index.runs[r - 1].offset + index.runs[r - 1].bytes);
      }
      EXPECT_LE(run.bytes, LogWriter::kMaxRunBytes);
      ASSERT_LT(h, heads.size());
      EXPECT_EQ(heads[h]->offset, run.offset) << "run " << r;
      uint64_t base = UINT64_MAX, end = 0;
      uint32_t in_run = 0;
      while (h < heads.size() && heads[h]->offset < run.offset + run.bytes) {
        base = std::min(base, heads[h]->base_ns);
        end = std::max(end, heads[h]->end_ns);
        events += heads[h]->events;
        ++in_run;
        ++h;
      }
      EXPECT_EQ(in_run, run.batches) << "run " << r;
      EXPECT_EQ(run.base_ns, base) << "run " << r;
      EXPECT_EQ(run.end_ns, end) << "run " << r;
      batches += run.batches;
    }
    EXPECT_EQ(h, heads.size()) << "every span batch is in a run";
    EXPECT_EQ(batches, heads.size());
    uint64_t run_events = 0;
    for (const auto& run : index.runs) run_events += run.events;
    EXPECT_EQ(run_events, events);
    // 41 batches (20001 events): batch 1 brings the string, batch 21 the thread's name;
    // neither has a head, and the second parts the runs.
    EXPECT_EQ(heads.size(), 39u);
    EXPECT_EQ(index.runs.size(), 2u);
  }
  for (const auto& [name, finish, index] :
       {std::tuple{"cut.capnp", false, true}, std::tuple{"unindexed.capnp", true, false}}) {
    const std::vector<FrameInfo> frames = DecodeFrames(write(name, finish, index));
    EXPECT_EQ(frames[0].batch_index_at, 0u) << name;
    for (const FrameInfo& f : frames) EXPECT_NE(f.kind, F::BATCH_INDEX) << name;
  }
}

// Runs stop growing at kMaxRunBytes, so that a window touching one reads at most about that
// much of it.
TEST(LogWriterTest, IndexRunsAreBoundedInBytes) {
  ScratchDir dir;
  const std::string path = dir.File("long.capnp");
  {
    auto writer = LogWriter::Create(path, SampleHeader(), {.events_per_batch = 4096});
    ASSERT_TRUE(writer.ok());
    const StringId kernel = (*writer)->strings().Intern("gemm");
    for (uint64_t i = 0; i < 400'000; ++i) (*writer)->Append(RealisticLaunch(i, kernel, 1));
    ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  const std::vector<FrameInfo> frames = DecodeFrames(path);
  const FrameInfo& index = frames[frames.size() - 2];
  ASSERT_EQ(index.kind, log_schema::LogFrame::BATCH_INDEX);
  ASSERT_GE(index.runs.size(), 3u) << "the log is several MiB";
  uint64_t batches = 0;
  for (size_t r = 0; r < index.runs.size(); ++r) {
    EXPECT_LE(index.runs[r].bytes, LogWriter::kMaxRunBytes);
    // Contiguous: only the size bound parts them.
    if (r > 0) {
      EXPECT_EQ(index.runs[r].offset, index.runs[r - 1].offset + index.runs[r - 1].bytes);
    }
    batches += index.runs[r].batches;
  }
  EXPECT_EQ(batches, 400'000u / 4096);  // every full batch but the first, which brings "gemm"
}

// A batch of spans only that brings no strings is preceded by its length and bounds, so a
// windowed reader can step over it; one with strings, or with other kinds, is not.
TEST(LogWriterTest, SpansOnlyBatchesWithoutStringsArePrecededByTheirLengthAndBounds) {
  ScratchDir dir;
  const std::string path = dir.File("run.capnp");
  {
    auto writer = LogWriter::Create(path, SampleHeader(), {.events_per_batch = 3});
    ASSERT_TRUE(writer.ok());
    const StringId name = (*writer)->strings().Intern("gemm");
    for (int i = 0; i < 6; ++i) (*writer)->Append(RealisticLaunch(i, name, 1));  // 2 batches
    (*writer)->Append(RealisticLaunch(6, name, 1));
    (*writer)->Append(ThreadInfo{.pid = 1, .tid = 2, .name = name});
    (*writer)->Append(RealisticLaunch(7, name, 1));
    ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  using F = log_schema::LogFrame;
  const std::vector<FrameInfo> frames = DecodeFrames(path);
  // header, batch (with "gemm"), head + batch, batch, batch index, summary
  ASSERT_EQ(frames.size(), 7u);
  EXPECT_EQ(frames[0].kind, F::HEADER);
  EXPECT_EQ(frames[1].kind, F::BATCH);
  EXPECT_EQ(frames[1].strings.size(), 1u);
  ASSERT_EQ(frames[2].kind, F::SPAN_BATCH);
  ASSERT_EQ(frames[3].kind, F::BATCH);
  EXPECT_TRUE(frames[3].strings.empty());
  EXPECT_EQ(frames[2].packed_bytes, frames[4].offset - frames[3].offset);
  EXPECT_EQ(frames[2].events, 3u);
  EXPECT_EQ(frames[3].events, 3u);
  EXPECT_EQ(frames[2].base_ns, frames[3].base_ns);
  EXPECT_EQ(frames[2].end_ns, frames[3].end_ns);
  uint64_t end_ns = 0;
  for (int i = 3; i < 6; ++i) end_ns = std::max(end_ns, RealisticLaunch(i, 0, 1).end_ns);
  EXPECT_EQ(frames[2].end_ns, end_ns);
  EXPECT_EQ(frames[4].kind, F::BATCH);  // a thread's name among the launches: no head
  // The index lists the one span batch (with its head), and the header points to it.
  ASSERT_EQ(frames[5].kind, F::BATCH_INDEX);
  ASSERT_EQ(frames[5].runs.size(), 1u);
  EXPECT_EQ(frames[5].runs[0].offset, frames[2].offset);
  EXPECT_EQ(frames[5].runs[0].bytes, frames[4].offset - frames[2].offset);
  EXPECT_EQ(frames[5].runs[0].base_ns, frames[3].base_ns);
  EXPECT_EQ(frames[5].runs[0].end_ns, frames[3].end_ns);
  EXPECT_EQ(frames[5].runs[0].batches, 1u);
  EXPECT_EQ(frames[5].runs[0].events, 3u);
  EXPECT_EQ(frames[0].batch_index_at, frames[5].offset);
  EXPECT_EQ(frames[6].kind, F::SUMMARY);

  // The head changes nothing for a reader without a window: every event, in order.
  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok());
  const std::vector<Event> read = ReadAll(*reader);
  ASSERT_EQ(read.size(), 9u);
  EXPECT_EQ(std::get<KernelLaunch>(read[4]).start_ns, RealisticLaunch(4, 0, 1).start_ns);
  EXPECT_TRUE(std::holds_alternative<ThreadInfo>(read[7]));
  EXPECT_EQ(reader->batches_read(), 3u);
}

TEST(LogWriterTest, EachStringIsWrittenOnceAndUsableInLaterBatches) {
  ScratchDir dir;
  const std::string path = dir.File("run.capnp");
  {
    auto writer = LogWriter::Create(path, SampleHeader(), {.events_per_batch = 3});
    ASSERT_TRUE(writer.ok());
    StringTable& strings = (*writer)->strings();
    const StringId main = strings.Intern("main");
    const StringId gemm = strings.Intern("gemm");
    for (uint32_t i = 0; i < 3; ++i)
      (*writer)->Append(ThreadInfo{.pid = 1, .tid = i, .name = main});
    // Batch 2 uses a string from batch 1 and introduces one; "gemm" again is no new string.
    EXPECT_EQ(strings.Intern("gemm"), gemm);
    const StringId relu = strings.Intern("relu");
    (*writer)->Append(KernelCreate{.name = gemm});
    (*writer)->Append(KernelCreate{.name = relu});
    (*writer)->Append(ThreadInfo{.name = main});
    // Batch 3 introduces nothing.
    (*writer)->Append(KernelCreate{.name = relu});
    ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  const std::vector<FrameInfo> frames = DecodeFrames(path);
  ASSERT_EQ(frames.size(), 5u);
  EXPECT_EQ(frames[1].first_string_id, 1u);  // id 0 ("") is never written
  EXPECT_EQ(frames[1].strings, (std::vector<std::string>{"main", "gemm"}));
  EXPECT_EQ(frames[2].first_string_id, 3u);
  EXPECT_EQ(frames[2].strings, (std::vector<std::string>{"relu"}));
  EXPECT_EQ(frames[3].first_string_id, 4u);
  EXPECT_TRUE(frames[3].strings.empty());

  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok());
  const std::vector<Event> events = ReadAll(*reader);
  ASSERT_EQ(events.size(), 7u);
  EXPECT_EQ(reader->strings().Get(std::get<ThreadInfo>(events[5]).name), "main");
  EXPECT_EQ(reader->strings().Get(std::get<KernelCreate>(events[3]).name), "gemm");
  EXPECT_EQ(reader->strings().Get(std::get<KernelCreate>(events[6]).name), "relu");
}

TEST(LogWriterTest, ManyBatchesKeepEveryEventInOrder) {
  ScratchDir dir;
  const std::string path = dir.File("run.capnp");
  constexpr uint64_t kEvents = 100'000;
  {
    auto writer = LogWriter::Create(path, SampleHeader(), {.events_per_batch = 1000});
    ASSERT_TRUE(writer.ok());
    StringTable& strings = (*writer)->strings();
    for (uint64_t i = 0; i < kEvents; ++i) {
      // A new name every 100 events: the table grows across batches.
      const StringId name = strings.Intern("kernel_" + std::to_string(i / 100));
      KernelLaunch e = RealisticLaunch(i, name, 1);
      (*writer)->Append(e);
    }
    EXPECT_EQ((*writer)->batches_written(), 100u);
    EXPECT_EQ((*writer)->events_written(), kEvents);
    ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok());
  Event event;
  for (uint64_t i = 0; i < kEvents; ++i) {
    Result<bool> next = reader->Next(&event);
    ASSERT_TRUE(next.ok() && *next) << "event " << i;
    const auto& launch = std::get<KernelLaunch>(event);
    ASSERT_EQ(launch.start_ns, RealisticLaunch(i, 0, 1).start_ns) << "event " << i;
    ASSERT_EQ(reader->strings().Get(launch.kernel_name), "kernel_" + std::to_string(i / 100));
  }
  Result<bool> end = reader->Next(&event);
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(*end);
  EXPECT_EQ(reader->batches_read(), 100u);
  EXPECT_TRUE(reader->complete());
}

TEST(LogWriterTest, AppendWritesABatchWhenFullAndFlushWritesTheRest) {
  ScratchDir dir;
  auto writer = LogWriter::Create(dir.File("run.capnp"), SampleHeader(), {.events_per_batch = 10});
  ASSERT_TRUE(writer.ok());
  const uint64_t header_bytes = (*writer)->bytes_written();
  EXPECT_GT(header_bytes, 0u);
  for (int i = 0; i < 25; ++i) (*writer)->Append(ThreadInfo{.pid = 1, .tid = 2});
  EXPECT_EQ((*writer)->batches_written(), 2u);
  EXPECT_EQ((*writer)->events_written(), 20u);
  ASSERT_TRUE((*writer)->Flush().ok());
  EXPECT_EQ((*writer)->batches_written(), 3u);
  EXPECT_EQ((*writer)->events_written(), 25u);
  // Nothing pending: no empty batch.
  const uint64_t bytes = (*writer)->bytes_written();
  ASSERT_TRUE((*writer)->Flush().ok());
  EXPECT_EQ((*writer)->batches_written(), 3u);
  EXPECT_EQ((*writer)->bytes_written(), bytes);
  EXPECT_EQ(bytes, std::filesystem::file_size(dir.File("run.capnp")));
}

TEST(LogWriterTest, FlushedBatchesSurviveSigkill) {
  ScratchDir dir;
  const std::string path = dir.File("killed.capnp");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The capture process: two flushed batches, a third pending, then SIGKILL (no
    // destructor, no Finish).
    auto writer = LogWriter::Create(path, SampleHeader());
    if (!writer.ok()) ::_exit(1);
    for (uint32_t i = 0; i < 30; ++i) {
      (*writer)->Append(ThreadInfo{.pid = 1, .tid = i});
      if (i == 9 || i == 19) (void)(*writer)->Flush();
    }
    ::kill(::getpid(), SIGKILL);
    ::_exit(2);
  }
  int wstatus = 0;
  ASSERT_EQ(::waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL);

  auto reader = LogReader::Open(path);  // no salvage needed: the file ends on a frame
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  const std::vector<Event> events = ReadAll(*reader);
  ASSERT_EQ(events.size(), 20u);
  EXPECT_EQ(std::get<ThreadInfo>(events[19]).tid, 19u);
  EXPECT_FALSE(reader->complete());
  EXPECT_TRUE(reader->damage().ok());
}

TEST(LogWriterTest, DestructorWithoutFinishWritesPendingEventsButNoSummary) {
  ScratchDir dir;
  const std::string path = dir.File("run.capnp");
  {
    auto writer = LogWriter::Create(path, SampleHeader());
    ASSERT_TRUE(writer.ok());
    (*writer)->Append(ThreadInfo{.pid = 1, .tid = 2});
  }
  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(ReadAll(*reader).size(), 1u);
  EXPECT_FALSE(reader->complete());
}

TEST(LogWriterTest, EventWithUnknownStringIdIsRejected) {
  ScratchDir dir;
  const std::string path = dir.File("run.capnp");
  auto writer = LogWriter::Create(path, SampleHeader());
  ASSERT_TRUE(writer.ok());
  (*writer)->Append(ThreadInfo{.pid = 1, .tid = 2, .name = 999});
  const Status st = (*writer)->Flush();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("string id 999"), std::string::npos) << st.message();
  EXPECT_EQ((*writer)->events_written(), 0u);
  // Latched: Finish reports it too.
  EXPECT_EQ((*writer)->Finish(SampleSummary()).message(), st.message());
}

TEST(LogWriterTest, CreateErrorNamesPathAndReason) {
  ScratchDir dir;
  const std::string path = dir.File("no/such/dir/run.capnp");
  auto writer = LogWriter::Create(path, SampleHeader());
  ASSERT_FALSE(writer.ok());
  EXPECT_NE(writer.status().message().find(path), std::string::npos);
  EXPECT_NE(writer.status().message().find("No such file or directory"), std::string::npos)
      << writer.status().message();
}

TEST(LogWriterTest, DiskFullNamesFileAndErrno) {
  XTRACE_REQUIRE_DEV_FULL();
  auto writer = LogWriter::Create("/dev/full", SampleHeader());
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().message(), "writing /dev/full: No space left on device");
}

// A write that fails half way (here: the file size limit, like a full disk) is latched, and
// the partial frame is cut off so every complete batch stays readable without salvage.
TEST(LogWriterTest, FailedWriteIsLatchedAndLeavesAReadableFile) {
  ScratchDir dir;
  const std::string path = dir.File("limited.capnp");
  constexpr rlim_t kFileLimit = 64 * 1024;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);  // get EFBIG instead of being killed
    const struct rlimit limit = {kFileLimit, kFileLimit};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(10);
    auto writer = LogWriter::Create(path, SampleHeader(), {.events_per_batch = 500});
    if (!writer.ok()) ::_exit(11);
    const StringId name = (*writer)->strings().Intern("k");
    for (uint64_t i = 0; i < 100'000; ++i) (*writer)->Append(RealisticLaunch(i, name, 1));
    const Status st = (*writer)->Flush();
    if (st.ok()) ::_exit(12);
    if (st.message() != "writing " + path + ": File too large") {
      std::fprintf(stderr, "unexpected error: %s\n", st.message().c_str());
      ::_exit(13);
    }
    if ((*writer)->Finish(SampleSummary()).ok()) ::_exit(14);  // still latched
    if ((*writer)->bytes_written() > kFileLimit) ::_exit(15);
    ::_exit(0);
  }
  int wstatus = 0;
  ASSERT_EQ(::waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFEXITED(wstatus));
  ASSERT_EQ(WEXITSTATUS(wstatus), 0);

  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  const std::vector<Event> events = ReadAll(*reader);
  EXPECT_GT(events.size(), 0u);
  EXPECT_EQ(events.size() % 500, 0u);  // whole batches only
  EXPECT_FALSE(reader->complete());
}

// Someone else removing or cutting the file is found at the next write, which fails naming
// the file and what happened instead of writing where no reader will look.
TEST(LogWriterTest, AFileRemovedOrCutByOthersIsAnErrorAtTheNextWrite) {
  ScratchDir dir;
  const std::string removed = dir.File("removed.capnp"), cut = dir.File("cut.capnp");
  for (const std::string& path : {removed, cut}) {
    auto writer = LogWriter::Create(path, SampleHeader());
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    const StringId name = (*writer)->strings().Intern("k");
    (*writer)->Append(RealisticLaunch(1, name, 1));
    ASSERT_TRUE((*writer)->Flush().ok());
    if (path == removed) ASSERT_EQ(::unlink(path.c_str()), 0);
    else ASSERT_EQ(::truncate(path.c_str(), 10), 0);
    (*writer)->Append(RealisticLaunch(2, name, 1));
    const Status st = (*writer)->Flush();
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.message().rfind("writing " + path + ": the file was " +
                                     (path == removed ? "removed during the capture"
                                                      : "cut short by someone else (10 of the "),
                                 0),
              0u)
        << st.message();
    EXPECT_FALSE((*writer)->Finish(SampleSummary()).ok());  // latched: nothing more written
  }
  struct stat st {};
  ASSERT_EQ(::stat(cut.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 10);
}

// Compactness guard: realistic launches must stay small (see the schema's comments on
// baseNs, the event union and nameKnown). Prints the measured size.
TEST(LogWriterTest, RealisticLaunchesTakeFewBytesEach) {
  ScratchDir dir;
  const std::string path = dir.File("run.capnp");
  constexpr uint64_t kLaunches = 200'000;
  uint64_t fixed_bytes = 0;
  {
    auto writer = LogWriter::Create(path, SampleHeader());
    ASSERT_TRUE(writer.ok());
    StringId first = 0;
    for (int k = 0; k < 40; ++k) {
      const StringId id = (*writer)->strings().Intern("kernel_name_" + std::to_string(k));
      if (k == 0) first = id;
    }
    fixed_bytes = (*writer)->bytes_written();
    for (uint64_t i = 0; i < kLaunches; ++i) (*writer)->Append(RealisticLaunch(i, first, 40));
    ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  const double per_launch =
      static_cast<double>(std::filesystem::file_size(path) - fixed_bytes) / kLaunches;
  std::printf("[ measured ] %.2f bytes per launch event\n", per_launch);
  EXPECT_LT(per_launch, 32.0);  // the budget `make bench` reports on for real captures
}

// Calls `fn` with every batch of the log at `path`, read with Cap'n Proto's own packed reader
// (what `capnp decode` sees), not LogReader.
void ForEachRawBatch(const std::string& path,
                     const std::function<void(log_schema::Batch::Reader)>& fn) {
  kj::AutoCloseFd fd(::open(path.c_str(), O_RDONLY));
  kj::FdInputStream raw(fd.get());
  kj::BufferedInputStreamWrapper input(raw);
  capnp::ReaderOptions options;
  options.traversalLimitInWords = 1ull << 30;  // a batch of 64k handles is large
  while (input.tryGetReadBuffer().size() > 0) {
    capnp::PackedMessageReader message(input, options);
    auto root = message.getRoot<log_schema::LogFrame>();
    if (root.isBatch()) fn(root.getBatch());
  }
}

// Launch handles go to the batch's handle table once each; events carry small refs, which
// Cap'n Proto's own reader (and so `capnp decode`) shows next to that table.
TEST(LogWriterTest, LaunchHandlesAreStoredOncePerBatchAndReferred) {
  ScratchDir dir;
  const std::string path = dir.File("run.capnp");
  {
    auto writer = LogWriter::Create(path, SampleHeader(), {.events_per_batch = 3});
    ASSERT_TRUE(writer.ok());
    const StringId name = (*writer)->strings().Intern("k");
    for (uint64_t i = 0; i < 4; ++i) {
      KernelLaunch l;
      l.kernel = 0x55d0c0a3e000 + 0x40 * (i % 2);
      l.command_list = 0x55d0c0a3f000;
      l.signal_event = i == 1 ? 0x55d0c1f00080 : 0;
      l.kernel_name = name;
      (*writer)->Append(l);
    }
    ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  std::vector<std::vector<uint64_t>> tables;
  std::vector<std::vector<uint32_t>> refs;  // per batch: kernel, list, signal refs per event
  ForEachRawBatch(path, [&](log_schema::Batch::Reader batch) {
    tables.emplace_back();
    for (uint64_t h : batch.getHandles()) tables.back().push_back(h);
    refs.emplace_back();
    for (auto e : batch.getEvents()) {
      auto l = e.getKernelLaunch();
      EXPECT_EQ(l.getKernel(), 0u);  // the inline fields stay empty
      EXPECT_EQ(l.getCommandList(), 0u);
      refs.back().insert(refs.back().end(),
                         {l.getKernelRef(), l.getCommandListRef(), l.getSignalEventRef()});
    }
  });
  ASSERT_EQ(tables.size(), 2u);  // 3 + 1 events
  EXPECT_EQ(tables[0], (std::vector<uint64_t>{0x55d0c0a3e000, 0x55d0c0a3f000, 0x55d0c0a3e040,
                                              0x55d0c1f00080}));
  EXPECT_EQ(refs[0], (std::vector<uint32_t>{1, 2, 0, 3, 2, 4, 1, 2, 0}));
  // Every batch has its own table: the second starts again from ref 1.
  EXPECT_EQ(tables[1], (std::vector<uint64_t>{0x55d0c0a3e040, 0x55d0c0a3f000}));
  EXPECT_EQ(refs[1], (std::vector<uint32_t>{1, 2, 0}));

  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok());
  const std::vector<Event> read = ReadAll(*reader);
  ASSERT_EQ(read.size(), 4u);
  for (uint64_t i = 0; i < 4; ++i) {
    const auto& l = std::get<KernelLaunch>(read[i]);
    EXPECT_EQ(l.kernel, 0x55d0c0a3e000 + 0x40 * (i % 2));
    EXPECT_EQ(l.command_list, 0x55d0c0a3f000u);
    EXPECT_EQ(l.signal_event, i == 1 ? 0x55d0c1f00080u : 0u);
  }
}

// Refs are 16 bits: in a batch with more distinct handles than that, the rest stay inline.
TEST(LogWriterTest, HandlesBeyondSixteenBitRefsStayInline) {
  ScratchDir dir;
  const std::string path = dir.File("run.capnp");
  constexpr uint64_t kLaunches = 70'000;  // distinct kernels, one batch
  {
    auto writer = LogWriter::Create(path, SampleHeader(), {.events_per_batch = kLaunches});
    ASSERT_TRUE(writer.ok());
    const StringId name = (*writer)->strings().Intern("k");
    for (uint64_t i = 0; i < kLaunches; ++i) {
      KernelLaunch l;
      l.kernel = 0x7f0000000000 + 0x40 * i;
      l.command_list = 0x55d0c0a3f000;
      l.kernel_name = name;
      (*writer)->Append(l);
    }
    ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  size_t inline_handles = 0;
  ForEachRawBatch(path, [&](log_schema::Batch::Reader batch) {
    EXPECT_EQ(batch.getHandles().size(), 65535u);
    for (auto e : batch.getEvents()) {
      if (e.getKernelLaunch().getKernelRef() == 0) {
        EXPECT_NE(e.getKernelLaunch().getKernel(), 0u);
        ++inline_handles;
      }
    }
  });
  EXPECT_EQ(inline_handles, kLaunches - 65534);  // the command list took ref 2

  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok());
  const std::vector<Event> read = ReadAll(*reader);
  ASSERT_EQ(read.size(), kLaunches);
  for (uint64_t i = 0; i < kLaunches; i += 997) {
    EXPECT_EQ(std::get<KernelLaunch>(read[i]).kernel, 0x7f0000000000 + 0x40 * i) << i;
    EXPECT_EQ(std::get<KernelLaunch>(read[i]).command_list, 0x55d0c0a3f000u) << i;
  }
  EXPECT_EQ(std::get<KernelLaunch>(read.back()).kernel, 0x7f0000000000 + 0x40 * (kLaunches - 1));
}

}  // namespace
}  // namespace xtrace
