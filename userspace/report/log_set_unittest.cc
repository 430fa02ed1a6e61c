// Tests of reading a report's logs (log_set.h).
#include "report/log_set.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace xtrace::report
