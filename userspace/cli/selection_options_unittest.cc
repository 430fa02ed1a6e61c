// Tests for cli/selection_options: the window, pid, rank and name forms `xtrace convert` and
// `xtrace report` accept, and their one-line errors.
#include "cli/selection_options.h"

#include <gtest/gtest.h>

#include "log_test_util.h"

namespace xtrace {
namespace {

using test_util::Contains;

TEST(SelectionOptionsTest, SecondsFromTheStartInEveryForm) {
  for (const char* text : {"12.5", "12.5s", "+12.5s", "+12.5", "12500ms"}) {
    Result<TimeBound> b = ParseTimeBound("--from", text);
    ASSERT_TRUE(b.ok()) << text << ": " << b.status().message();
    EXPECT_EQ(b->kind, TimeBound::Kind::kSinceStart) << text;
    EXPECT_EQ(b->ns, 12'500'000'000u) << text;
  }
  Result<TimeBound> zero = ParseTimeBound("--from", "0");
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero->ns, 0u);
  Result<TimeBound> minutes = ParseTimeBound("--to", "2m");
  ASSERT_TRUE(minutes.ok());
  EXPECT_EQ(minutes->ns, 120'000'000'000u);
}

TEST(SelectionOptionsTest, WallClockTimesInUtcWithOffsetsAndFractions) {
  // 2026-11-23T11:35:12Z is 1795433712 s after the epoch.
  Result<TimeBound> utc = ParseTimeBound("--from", "2026-11-23T11:35:12.25Z");
  ASSERT_TRUE(utc.ok()) << utc.status().message();
  EXPECT_EQ(utc->kind, TimeBound::Kind::kRealtime);
  EXPECT_EQ(utc->ns, 1795433712'250'000'000u);
  Result<TimeBound> offset = ParseTimeBound("--from", "2026-11-23T12:35:12.25+01:00");
  ASSERT_TRUE(offset.ok()) << offset.status().message();
  EXPECT_EQ(offset->ns, utc->ns);
  Result<TimeBound> space = ParseTimeBound("--from", "2026-11-23 11:35:12Z");
  ASSERT_TRUE(space.ok());
  EXPECT_EQ(space->ns, 1795433712'000'000'000u);
  Result<TimeBound> local = ParseTimeBound("--from", "2026-11-23T11:35:12");
  ASSERT_TRUE(local.ok()) << "local time without a zone is accepted";
}

TEST(SelectionOptionsTest, BadTimesAreOneLineErrorsNamingTheOption) {
  for (const char* text : {"", "-3", "abc", "12x", "2026-13-01T00:00:00Z", "2026-11-23T11:35",
                           "2026-11-23T11:35:12+1", "2026-11-23T11:35:12Q", "1\n2"}) {
    Result<TimeBound> b = ParseTimeBound("--to", text);
    ASSERT_FALSE(b.ok()) << "'" << text << "' was accepted";
    EXPECT_TRUE(Contains(b.status().message(), "--to: '")) << text;
    EXPECT_EQ(b.status().message().find('\n'), std::string::npos) << text;
  }
}

TEST(SelectionOptionsTest, ResolvesAgainstTheCapturesClockAnchor) {
  const ClockAnchor start{.monotonic_ns = 5'000'000'000, .monotonic_raw_ns = 0,
                          .realtime_ns = 1795433700'000'000'000};
  EXPECT_EQ((TimeBound{TimeBound::Kind::kSinceStart, 2'000'000'000}.Resolve(start)), 7'000'000'000u);
  // 12 s of wall clock after the capture's start is 12 s of monotonic clock after it.
  EXPECT_EQ((TimeBound{TimeBound::Kind::kRealtime, 1795433712'000'000'000}.Resolve(start)),
            17'000'000'000u);
  // Before the clock began: the window opens at its start.
  EXPECT_EQ((TimeBound{TimeBound::Kind::kRealtime, 1'000}.Resolve(start)), 0u);
  EventSelection sel;
  sel.to = TimeBound{TimeBound::Kind::kSinceStart, 1'000'000'000};
  const MonotonicWindow w = ResolveWindow(sel, start);
  EXPECT_EQ(w.from_ns, 0u);
  EXPECT_EQ(w.to_ns, 6'000'000'000u);
}

TEST(SelectionOptionsTest, EmptyWindowsAreRefusedWhenComparable) {
  EventSelection sel;
  ASSERT_TRUE(ParseWindowBound("--from", "10", sel).ok());
  ASSERT_TRUE(ParseWindowBound("--to", "5", sel).ok());
  Status st = CheckWindow(sel);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "--to must be after --from"));
  ASSERT_TRUE(ParseWindowBound("--to", "2026-11-23T11:35:12Z", sel).ok());
  EXPECT_TRUE(CheckWindow(sel).ok()) << "start-relative and wall-clock ends compare per log";
}

TEST(SelectionOptionsTest, PidRankAndNameLists) {
  EventSelection sel;
  ASSERT_TRUE(ParsePidList("--pid", "42,7", sel).ok());
  EXPECT_EQ(sel.pids, (std::set<uint32_t>{7, 42}));
  ASSERT_TRUE(ParseRankList("--rank", "0,3", sel).ok());
  EXPECT_EQ(sel.ranks, (std::set<int32_t>{0, 3}));
  EXPECT_FALSE(ParsePidList("--pid", "42,", sel).ok());
  EXPECT_FALSE(ParsePidList("--pid", "0", sel).ok());
  EXPECT_FALSE(ParseRankList("--rank", "-1", sel).ok());
  EXPECT_TRUE(Contains(ParseRankList("--rank", "x", sel).message(), "--rank: 'x' is not"));
  ASSERT_TRUE(ParseNamePattern("--name", "gemm|conv", sel).ok());
  ASSERT_TRUE(sel.name.has_value());
  EXPECT_TRUE(std::regex_search("xgemm_f32", *sel.name));
  Status bad = ParseNamePattern("--name", "(", sel);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(bad.message(), "--name: '(' is not a regular expression"));
}

TEST(SelectionOptionsTest, TheOptionTableParsesEveryFlag) {
  EventSelection sel;
  const OptionTable table = SelectionOptionTable(sel);
  std::vector<std::string> args = {"--from", "+1s", "--to=3", "--pid", "9", "--rank", "2",
                                   "--name", "k"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  auto parsed = ParseCommandLine(table, argv, Positionals::kAnywhere);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ASSERT_TRUE(sel.from && sel.to);
  EXPECT_EQ(sel.from->ns, 1'000'000'000u);
  EXPECT_EQ(sel.to->ns, 3'000'000'000u);
  EXPECT_EQ(sel.pids.count(9), 1u);
  EXPECT_EQ(sel.ranks.count(2), 1u);
  EXPECT_EQ(sel.name_pattern, "k");
}

}  // namespace
}  // namespace xtrace
