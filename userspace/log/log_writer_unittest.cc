// Tests for LogWriter (userspace/log/log_writer.cc): round trips through LogReader, batching,
// errors, compactness. The frame layout on disk: log_writer_layout_unittest.cc.
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

// The writer builds every batch in the same first segment: a batch of events that leave most
// fields at their defaults, after a batch that set them all, must read back with the defaults
// (a segment not zeroed between batches would leave the first batch's bytes in them).
TEST(LogWriterTest, ABatchOfDefaultsAfterAFullOneReadsAsWritten) {
  ScratchDir dir;
  const std::string path = dir.File("run.capnp");
  constexpr int kPerBatch = 64;
  std::vector<Event> written;
  {
    auto writer = LogWriter::Create(path, SampleHeader(), {.events_per_batch = kPerBatch});
    ASSERT_TRUE(writer.ok());
    const StringId name = (*writer)->strings().Intern("gemm_with_a_long_name");
    for (int i = 0; i < kPerBatch; ++i) {
      KernelLaunch e = RealisticLaunch(static_cast<uint64_t>(i), name, 1);
      e.result = -5;
      e.group_count_unreadable = true;
      e.launch_kind = 3;
      written.push_back(e);
    }
    for (int i = 0; i < kPerBatch; ++i) {
      if (i % 2 == 0) {
        written.push_back(ProcessInfo{.pid = static_cast<uint32_t>(i)});
      } else {
        written.push_back(ThreadInfo{});
      }
    }
    for (const Event& e : written) (*writer)->Append(e);
    EXPECT_EQ((*writer)->batches_written(), 2u);
    ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok());
  const std::vector<Event> read = ReadAll(*reader);
  ASSERT_EQ(read.size(), written.size());
  for (size_t i = 0; i < read.size(); ++i) {
    SCOPED_TRACE("event " + std::to_string(i));
    ExpectSameEvent(written[i], read[i]);
  }
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

}  // namespace
}  // namespace xtrace
