// Tests of reading a report's logs (log_set.h).
#include "report/log_set.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "log/log_writer.h"
#include "log_test_util.h"

namespace xtrace::report {
namespace {

constexpr int kEventsPerBatch = 100;

// Ten batches of launches 7.3 µs apart (test_util::RealisticLaunch), one process each.
std::string WriteLaunches(test_util::ScratchDir& dir) {
  const std::string path = dir.File("launches.capnp");
  auto writer = LogWriter::Create(path, test_util::SampleHeader(), {.events_per_batch = kEventsPerBatch});
  EXPECT_TRUE(writer.ok());
  if (!writer.ok()) return path;
  const StringId name = (*writer)->strings().Intern("gemm");
  for (int i = 0; i < 10 * kEventsPerBatch; ++i) {
    if (i % kEventsPerBatch == 0) (*writer)->Append(ProcessInfo{.pid = 48213});
    (*writer)->Append(test_util::RealisticLaunch(static_cast<uint64_t>(i), name, 1));
  }
  EXPECT_TRUE((*writer)->Finish(test_util::SampleSummary()).ok());
  return path;
}

uint64_t LaunchCalls(const LogAggregate& log) {
  uint64_t calls = 0;
  for (const auto& [key, section] : log.aggregator->sections())
    for (const auto& [name, row] : section.host_calls) calls += row.time.count;
  return calls;
}

// A window counts exactly the calls that start in it, and reads only the batches that reach
// into it, not the whole log.
TEST(LogSetTest, AWindowCountsItsCallsAndReadsOnlyTheBatchesReachingIntoIt) {
  test_util::ScratchDir dir;
  const std::string path = WriteLaunches(dir);
  LogReadOptions whole;
  auto all = AggregateLog(path, 0, whole);
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(LaunchCalls(*all), 1000u);

  // About launches 450 to 549 (5e12 + i * 7300 ns, plus a little): batches 5 and 6.
  const uint64_t from = 5'000'000'000'000 + 450 * 7'300, to = 5'000'000'000'000 + 550 * 7'300;
  uint64_t inside = 0;
  for (int i = 0; i < 10 * kEventsPerBatch; ++i) {
    const uint64_t at = test_util::RealisticLaunch(static_cast<uint64_t>(i), 0, 1).start_ns;
    inside += at >= from && at < to;
  }
  const uint64_t start = test_util::SampleHeader().start_clock.monotonic_ns;
  LogReadOptions windowed;
  windowed.from = TimeBound{.ns = from - start};
  windowed.to = TimeBound{.ns = to - start};
  auto window = AggregateLog(path, 0, windowed);
  ASSERT_TRUE(window.ok()) << window.status().message();
  EXPECT_GE(inside, 99u);
  EXPECT_EQ(LaunchCalls(*window), inside);
  EXPECT_TRUE(window->complete);
  EXPECT_LT(window->events, all->events / 3) << "the batches outside the window were read whole";
}

// A log's drops are summed from its drop windows; a report's window counts those overlapping it.
TEST(LogSetTest, DropsAreThoseOfTheWindowsThatOverlapTheReportsWindow) {
  test_util::ScratchDir dir;
  const std::string path = dir.File("drops.capnp");
  const uint64_t t0 = test_util::SampleHeader().start_clock.monotonic_ns;
  constexpr uint64_t kSecond = 1'000'000'000;
  {
    auto writer = LogWriter::Create(path, test_util::SampleHeader());
    ASSERT_TRUE(writer.ok());
    (*writer)->Append(RecordsDropped{.start_ns = t0 + kSecond, .end_ns = t0 + 2 * kSecond,
                                     .level_zero = 4});
    (*writer)->Append(RecordsDropped{.start_ns = t0 + 5 * kSecond, .end_ns = t0 + 6 * kSecond,
                                     .itt = 9, .itt_rings = 8});
    ASSERT_TRUE((*writer)->Finish(test_util::SampleSummary()).ok());
  }
  auto all = AggregateLog(path, 0, LogReadOptions{});
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(all->dropped.level_zero, 4u);
  EXPECT_EQ(all->dropped.itt, 9u);
  EXPECT_EQ(all->dropped.itt_rings, 8u);

  LogReadOptions windowed;  // from 2.5 s to 5.5 s: only the second window reaches into it
  windowed.from = TimeBound{.ns = 5 * kSecond / 2};
  windowed.to = TimeBound{.ns = 11 * kSecond / 2};
  auto window = AggregateLog(path, 0, windowed);
  ASSERT_TRUE(window.ok()) << window.status().message();
  EXPECT_EQ(window->dropped.total(), 9u);
  EXPECT_EQ(window->dropped.itt_rings, 8u);
}

// Only damage is met with "--salvage reports the part before it": a log torn in the middle
// has a part before the damage, a missing or empty file has none.
TEST(LogSetTest, OnlyDamageSuggestsSalvage) {
  test_util::ScratchDir dir;
  const std::string path = WriteLaunches(dir);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) * 2 / 3);
  auto torn = AggregateLog(path, 0, {});
  ASSERT_FALSE(torn.ok());
  EXPECT_NE(torn.status().message().find("; --salvage reports the part before it"), std::string::npos)
      << torn.status().message();
  LogReadOptions salvage;
  salvage.salvage = true;
  auto salvaged = AggregateLog(path, 0, salvage);
  ASSERT_TRUE(salvaged.ok()) << salvaged.status().message();
  EXPECT_FALSE(salvaged->damage.empty());

  const std::string empty = dir.File("empty.capnp");
  std::ofstream{empty};
  for (const std::string& unreadable : {empty, dir.File("missing.capnp")}) {
    auto failed = AggregateLog(unreadable, 0, {});
    ASSERT_FALSE(failed.ok()) << unreadable;
    EXPECT_NE(failed.status().message().find(unreadable), std::string::npos) << failed.status().message();
    EXPECT_EQ(failed.status().message().find("--salvage"), std::string::npos) << failed.status().message();
  }
}

}  // namespace
}  // namespace xtrace::report
