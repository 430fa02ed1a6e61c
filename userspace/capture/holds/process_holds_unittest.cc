// Tests for capture/holds/process_holds: every hold heard of is released once at the next turn,
// holds continued elsewhere (the bound, an exit) are not timed, and the summary sentence.
#include "capture/holds/process_holds.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace xtrace {
namespace {

TEST(ProcessHolds, ReleasesEveryHoldOnceAndTimesThem) {
  std::vector<uint32_t> continued;
  std::set<uint32_t> still_held = {10, 11, 12};
  ProcessHolds holds([&](uint32_t pid, uint64_t, bool) {
    continued.push_back(pid);
    return still_held.erase(pid) == 1;
  });
  EXPECT_FALSE(holds.any_pending());
  holds.Held(10, 10, HoldCause::kExec, 1'000'000);
  holds.Held(11, 15, HoldCause::kLibraryLoad, 2'000'000);
  holds.Held(12, 12, HoldCause::kExec, 3'000'000);
  still_held.erase(12);  // the guardian's bound continued it first
  EXPECT_TRUE(holds.any_pending());
  holds.ReleaseAll(5'000'000);
  EXPECT_EQ(continued, (std::vector<uint32_t>{10, 11, 12}));
  EXPECT_FALSE(holds.any_pending());
  holds.ReleaseAll(9'000'000);  // nothing twice
  EXPECT_EQ(continued.size(), 3u);

  const HoldStats s = holds.Stats(2, 0);
  EXPECT_EQ(s.at_exec, 2u);
  EXPECT_EQ(s.at_library, 1u);
  EXPECT_EQ(s.taken(), 3u);
  EXPECT_EQ(s.released, 2u);
  EXPECT_EQ(s.total_ns, 4'000'000u + 3'000'000u);
  EXPECT_EQ(s.max_ns, 4'000'000u);
  EXPECT_EQ(s.missed, 2u);
}

TEST(ProcessHolds, AHoldAgainBeforeTheReleaseCountsTheNewerOne) {
  std::vector<std::pair<uint64_t, bool>> released;
  ProcessHolds holds([&](uint32_t, uint64_t since_ns, bool at_exec) {
    released.emplace_back(since_ns, at_exec);
    return true;
  });
  holds.Held(7, 7, HoldCause::kExec, 1'000'000);
  holds.Held(7, 8, HoldCause::kTableGetter, 4'000'000);
  holds.ReleaseAll(6'000'000);
  // The newer hold is the one released, named by when and why it was taken.
  EXPECT_EQ(released, (std::vector<std::pair<uint64_t, bool>>{{4'000'000, false}}));
  const HoldStats s = holds.Stats(0, 0);
  EXPECT_EQ(s.taken(), 2u);
  EXPECT_EQ(s.released, 1u);
  EXPECT_EQ(s.max_ns, 2'000'000u);
}

// Each hold released here is told, whole-process, with its cause and the thread whose call
// took it; one the guardian's bound released first is not (when it ended is not known here).
TEST(ProcessHolds, TellsEachHoldItReleasesWithItsCauseAndThread) {
  std::set<uint32_t> still_held = {20, 21, 22};
  ProcessHolds holds([&](uint32_t pid, uint64_t, bool) { return still_held.erase(pid) == 1; });
  std::vector<XtraceHold> told;
  holds.set_released([&](const XtraceHold& h) { told.push_back(h); });
  holds.Held(20, 20, HoldCause::kExec, 1'000);
  holds.Held(21, 23, HoldCause::kTableGetter, 2'000);
  holds.Held(22, 22, HoldCause::kLibraryLoad, 3'000);
  still_held.erase(22);
  holds.ReleaseAll(5'000);
  ASSERT_EQ(told.size(), 2u);
  EXPECT_EQ(told[0].pid, 20u);
  EXPECT_EQ(told[0].cause, HoldCause::kExec);
  EXPECT_EQ(told[0].start_ns, 1'000u);
  EXPECT_EQ(told[0].end_ns, 5'000u);
  EXPECT_TRUE(told[0].whole_process());
  EXPECT_EQ(told[1].pid, 21u);
  EXPECT_EQ(told[1].tid, 23u);
  EXPECT_EQ(told[1].cause, HoldCause::kTableGetter);
  EXPECT_TRUE(told[1].whole_process());
}

TEST(ProcessHolds, SaysWhyFromTheRecord) {
  xt_record_header hdr{};
  hdr.type = XT_REC_PROCESS_EXEC;
  hdr.flags = XT_FLAG_HELD;
  EXPECT_EQ(HoldCauseOf(hdr), HoldCause::kExec);
  hdr.type = XT_REC_PROCESS_MAPS;
  EXPECT_EQ(HoldCauseOf(hdr), HoldCause::kLibraryLoad);
  hdr.flags = XT_FLAG_HELD | XT_FLAG_TABLE_GETTER;
  EXPECT_EQ(HoldCauseOf(hdr), HoldCause::kTableGetter);
  hdr.flags = XT_FLAG_HELD | XT_FLAG_ZE_INIT;
  EXPECT_EQ(HoldCauseOf(hdr), HoldCause::kLevelZeroInit);
}

TEST(HoldSummary, SaysHowManyHowLongAndWhatTheBoundDid) {
  EXPECT_EQ(HoldSummary(HoldStats{}), "");
  HoldStats s;
  s.at_exec = 12;
  s.released = 12;
  s.total_ns = 12 * 3'100'000;
  s.max_ns = 9'000'000;
  EXPECT_EQ(HoldSummary(s),
            " 12 process starts held 3.1 ms on average (max 9.0 ms) until probed.");
  s.at_library = 1;
  s.released_by_bound = 1;
  s.missed = 1;
  EXPECT_EQ(HoldSummary(s),
            " 12 process starts and 1 library load held 3.1 ms on average (max 9.0 ms) until "
            "probed; 1 released by the bound (--hold-max). 1 process was not held (more than "
            "1024 held at once, or the stop was refused): their first calls may be missing.");
  s.missed = 0;
  s.parents_continued = 2;
  EXPECT_EQ(HoldSummary(s),
            " 12 process starts and 1 library load held 3.1 ms on average (max 9.0 ms) until "
            "probed; 1 released by the bound (--hold-max). 2 parents that stopped with a held "
            "child (as nsenter and sudo do) continued with it.");
  // Holds missed or not taken are said even when none was taken.
  HoldStats missed;
  missed.missed = 1;
  EXPECT_EQ(HoldSummary(missed),
            " 1 process was not held (more than 1024 held at once, or the stop was refused): "
            "their first calls may be missing.");
  HoldStats jobs;
  jobs.terminal_jobs = 2;
  EXPECT_EQ(HoldSummary(jobs),
            " 2 holds were not taken in programs run as jobs of a terminal's shell, which would "
            "report the stop as the job's: their first calls may be missing "
            "(--hold-terminal-jobs holds them).");
}

}  // namespace
}  // namespace xtrace
