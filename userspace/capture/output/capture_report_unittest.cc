// Tests for capture/output/capture_report: the closing paragraph, the per-process counts and the
// progress lines.
#include "capture/output/capture_report.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "log_test_util.h"

namespace xtrace {
namespace {

using test_util::Contains;

TEST(CaptureReport, PerProcessCountsInPidOrderWithDropsAndNames) {
  RecordTally tally;
  tally.Add(20, "ITT");
  tally.Add(10, "Level Zero");
  tally.Add(10, "Level Zero");
  const auto stats = PerProcessStats(tally, {{10, 0}, {30, 4}},
                                     [](uint32_t pid) { return pid == 10 ? "trainer" : ""; });
  ASSERT_EQ(stats.size(), 3u);
  EXPECT_EQ(stats[0].pid, 10u);
  EXPECT_EQ(stats[0].comm, "trainer");
  EXPECT_EQ(stats[0].records_by_source,
            (std::vector<std::pair<std::string, uint64_t>>{{"Level Zero", 2}}));
  EXPECT_EQ(stats[1].pid, 20u);
  EXPECT_EQ(stats[2].pid, 30u);
  EXPECT_EQ(stats[2].dropped, 4u);
  EXPECT_TRUE(stats[2].records_by_source.empty());
}

TEST(CaptureReport, SummarySaysWhatWasCapturedAndWhatWasLost) {
  CaptureReport r;
  r.launches = 12;
  r.kernel_creates = 3;
  r.events = 40;
  r.file_bytes = 2048;
  r.dropped = 5;
  r.command_exit_status = 3 << 8;  // exited with status 3
  r.per_process = {{.pid = 10, .comm = "trainer", .records_by_source = {{"ITT", 7}}, .dropped = 1},
                   {.pid = 11, .comm = "", .records_by_source = {}, .dropped = 4}};
  SummaryFacts f;
  f.seconds = 1.5;
  f.where = "run.capnp";
  f.correlator.processes = 1;
  f.correlator.threads = 2;
  f.ring_bytes = {8 << 20};
  f.source_sentences = " ITT: 7 tasks. Python frames: 7 stacks resolved; 3 code objects read.";
  f.source_lines = "\nxtrace: DRM card0: 3 submissions.";
  f.holds_text = " 2 process starts held.";
  const std::string text = SummaryText(r, f);
  // The sources' lines end the paragraph: no sentence is glued onto the last of them.
  EXPECT_TRUE(Contains(text, " 2 process starts held.\nxtrace: DRM card0: 3 submissions.\n"));
  EXPECT_TRUE(Contains(text, " ITT: 7 tasks. Python frames: 7 stacks resolved;"));
  EXPECT_TRUE(Contains(text, "captured 12 kernel launches, 3 kernel creations and 0 other Level "
                             "Zero calls from 1 process (2 threads) in 1.50 s; 40 events written "
                             "to run.capnp (2.0 KiB)."));
  EXPECT_TRUE(Contains(text, "5 events dropped; raise --buffer-size (now 8.0 MiB)."));
  f.dropped_by_source = {{"Level Zero", 3}, {"DRM", 2}};
  EXPECT_TRUE(Contains(SummaryText(r, f),
                       "5 events dropped (Level Zero 3, DRM 2); raise --buffer-size (now 8.0 MiB)."));
  f.dropped_by_source.clear();
  f.notes = {"/lib/libze_loader.so.1 does not export zeCommandListHostSynchronize (an older Level "
             "Zero loader), and the Level Zero driver hands it out by pointer "
             "(zeDriverGetExtensionFunctionAddress): a call through such a pointer, past the "
             "loader, is not traced"};
  EXPECT_TRUE(Contains(SummaryText(r, f),
                       " /lib/libze_loader.so.1 does not export zeCommandListHostSynchronize (an "
                       "older Level Zero loader), and the Level Zero driver hands it out by "
                       "pointer (zeDriverGetExtensionFunctionAddress): a call through such a "
                       "pointer, past the loader, is not traced."));
  f.notes.clear();
  EXPECT_TRUE(Contains(text, "The command exited with status 3."));
  EXPECT_TRUE(Contains(text, " ITT: 7 tasks."));
  EXPECT_TRUE(Contains(text, "\n  pid 10 (trainer): ITT 7, dropped 1"));
  EXPECT_TRUE(Contains(text, "\n  pid 11 (?): no records, dropped 4"));
  EXPECT_FALSE(Contains(text, "Tables:")) << "table sizes only with --verbose";
  f.peak_rss_mib = 42;
  EXPECT_TRUE(Contains(SummaryText(r, f), "collector peak RSS 42 MiB."));
  r.dropped = 0;
  EXPECT_TRUE(Contains(SummaryText(r, f), " No events dropped."));
  EXPECT_FALSE(Contains(SummaryText(r, f), "kernels by device time")) << "none ran";
  EXPECT_FALSE(Contains(text, "never returned"));
  f.correlator.unfinished_calls = 1;
  EXPECT_TRUE(Contains(SummaryText(r, f), " 1 call never returned (the thread or its process "
                                          "exited inside it): shown as unfinished."));
  f.correlator.calls_at_stop = 2;
  EXPECT_TRUE(Contains(SummaryText(r, f), " 2 calls were still in progress when the capture "
                                          "stopped: shown as unfinished, to the stop."));
}

// The top kernels (report::TopKernels) close the paragraph, before the per-process lines.
TEST(CaptureReport, SummaryEndsWithTheTopKernels) {
  CaptureReport r;
  r.per_process = {{.pid = 10, .comm = "trainer", .records_by_source = {{"Level Zero", 7}}}};
  SummaryFacts f;
  f.where = "run.capnp";
  f.kernels_text = "Top 1 kernels by device time:\n  100.0%  1 us  1 calls  avg 1 us  gemm\n";
  const std::string text = SummaryText(r, f);
  const size_t top = text.find("\nxtrace: Top 1 kernels by device time:\n  100.0%");
  ASSERT_NE(top, std::string::npos) << text;
  EXPECT_LT(top, text.find("per process")) << text;
  EXPECT_FALSE(Contains(text, "gemm\n\n")) << "no blank line after the table";
}

TEST(CaptureReport, ProgressAndDropLines) {
  EXPECT_EQ(ProgressLine(3.4, 120, 4096, 0), "xtrace: 3 s, 120 events, 4.0 KiB written, 0 dropped ");
  EXPECT_EQ(DropsLine(7, 9, {1 << 20}),
            "7 events dropped in the last second (9 in all); raise --buffer-size (now 1.0 MiB)");
  // Lost in the programs' own ITT rings: --buffer-size would not help them.
  EXPECT_EQ(DropsLine(7, 9, {1 << 20, 1 << 22}, 7),
            "7 events dropped in the last second (9 in all); all in the programs' own ITT rings: "
            "raise --itt-ring-size (now 4.0 MiB a thread, for threads that make theirs from then "
            "on) or give xtrace a CPU the program does not use");
}

TEST(CaptureReport, TheRemedyFitsWhereRecordsWereLost) {
  EXPECT_EQ(DropRemedy(5, 0, {8 << 20}), "raise --buffer-size (now 8.0 MiB)");
  EXPECT_EQ(DropRemedy(5, 2, {8 << 20, 1 << 20}),
            "raise --buffer-size (now 8.0 MiB); 2 of them in the programs' own ITT rings: raise "
            "--itt-ring-size (now 1.0 MiB a thread, for threads that make theirs from then on) or "
            "give xtrace a CPU the program does not use");
  EXPECT_TRUE(DropRemedy(5, 5, {8 << 20}).starts_with("all in the programs' own ITT rings"));
  // A count that ran ahead of the total (read at another moment) is held to it.
  EXPECT_TRUE(DropRemedy(5, 9, {8 << 20}).starts_with("all in"));
  CaptureReport r;
  r.dropped = 5;
  SummaryFacts f;
  f.ring_bytes = {8 << 20};
  f.dropped_in_itt_rings = 5;
  const std::string text = SummaryText(r, f);
  EXPECT_TRUE(Contains(text, " 5 events dropped; all in the programs' own ITT rings")) << text;
  EXPECT_FALSE(Contains(text, "raise --buffer-size")) << text;
}

}  // namespace
}  // namespace xtrace
