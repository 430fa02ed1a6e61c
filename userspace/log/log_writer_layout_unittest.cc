// Tests of LogWriter's frame layout on disk (userspace/log/log_writer.cc), checked with Cap'n
// Proto's own reader: header, batches and summary; each string once; the batch index of runs
// of span batches; span batches preceded by their length and bounds; launch handles stored
// once per batch.
#include "log/log_writer.h"

#include <capnp/serialize-packed.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <kj/io.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "log/event_codec.h"
#include "log/log_reader.h"
#include "log/xtrace_log.capnp.h"
#include "log_file_test_util.h"
#include "log_test_util.h"

namespace xtrace {
namespace {

using test_util::ExpectSameEvent;
using test_util::ReadAll;
using test_util::RealisticLaunch;
using test_util::SampleHeader;
using test_util::SampleSummary;
using test_util::ScratchDir;

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
