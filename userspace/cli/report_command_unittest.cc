// Tests of `xtrace report`'s command line: every option parsed through the option table, the
// errors naming the option, and a --help that lists every option and the examples.
#include "cli/report_command.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "log/log_writer.h"
#include "log_test_util.h"
#include "report/display_name.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

Result<ReportCommandLine> Parse(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return ParseReportCommandLine(argv);
}

TEST(ReportCommandLine, EveryOptionSetsWhatItSays) {
  auto line = Parse({"run.capnp", "--format", "json", "-o", "out.json", "--by", "rank", "--sort",
                     "average", "--top", "10", "--gaps=3", "--categories", "k.txt", "--wide",
                     "--mangled", "--from", "1", "--to", "2", "--pid", "4,5", "--name", "gemm",
                     "--salvage", "more.capnp"});
  ASSERT_TRUE(line.ok()) << line.status().message();
  const ReportArguments& a = line->arguments;
  EXPECT_EQ(a.inputs, (std::vector<std::string>{"run.capnp", "more.capnp"}));
  EXPECT_EQ(a.format, report::OutputFormat::kJson);
  EXPECT_EQ(a.output, "out.json");
  EXPECT_EQ(a.options.read.aggregate.by, report::GroupBy::kRank);
  EXPECT_EQ(a.options.tables.sort, report::SortKey::kAverage);
  EXPECT_EQ(a.options.tables.top, 10u);
  EXPECT_EQ(a.options.read.aggregate.top_gaps, 3u);
  EXPECT_EQ(a.categories, "k.txt");
  EXPECT_TRUE(a.wide);
  EXPECT_TRUE(a.options.tables.mangled);
  EXPECT_TRUE(a.options.read.from.has_value());
  EXPECT_TRUE(a.options.read.to.has_value());
  EXPECT_EQ(a.options.read.aggregate.pids, (std::set<uint32_t>{4, 5}));
  EXPECT_TRUE(a.options.tables.name.has_value());
  EXPECT_TRUE(a.options.read.salvage);
  EXPECT_FALSE(a.diff);
}

TEST(ReportCommandLine, DiffTakesTwoLogs) {
  auto line = Parse({"--diff", "before.capnp", "after.capnp"});
  ASSERT_TRUE(line.ok()) << line.status().message();
  EXPECT_TRUE(line->arguments.diff);
  EXPECT_FALSE(Parse({"--diff", "before.capnp"}).ok());
}

TEST(ReportCommandLine, ErrorsNameTheOption) {
  for (const auto& [args, option] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"x.capnp", "--top", "zero"}, "--top"},
           {{"x.capnp", "--top", "0"}, "--top"},
           {{"x.capnp", "--format", "xml"}, "--format"},
           {{"x.capnp", "--by", "planet"}, "--by"},
           {{"x.capnp", "--sort", "size"}, "--sort"},
           {{"x.capnp", "--from", "5", "--to", "1"}, "--from"},
           {{"x.capnp", "--frobnicate"}, "--frobnicate"},
       }) {
    auto line = Parse(args);
    ASSERT_FALSE(line.ok()) << option;
    EXPECT_NE(line.status().message().find(option), std::string::npos) << line.status().message();
  }
  EXPECT_FALSE(Parse({}).ok());  // which log?
}

TEST(ReportCommandLine, HelpListsEveryOptionAndTheExamples) {
  auto line = Parse({"--help"});
  ASSERT_TRUE(line.ok());
  EXPECT_TRUE(line->help);
  const std::string help = ReportCommandHelp();
  for (const char* part :
       {"Usage: xtrace report LOG... [options]", "xtrace report --diff BEFORE AFTER", "TABLES",
        "--format F", "-o, --output FILE", "--by KEY", "--sort KEY", "--top N", "--gaps N",
        "--categories FILE", "--wide", "--mangled", "--from T", "--to T", "--pid PID[,PID...]",
        "--name REGEX", "--diff", "--salvage", "-h, --help", "\nOUTPUT\n", "\nSELECTION\n",
        "\nDAMAGED LOGS\n", "demangled", "\nExamples:\n", "xtrace report run.capnp --top 10",
        "Exit status: 0 reported"})
    EXPECT_NE(help.find(part), std::string::npos) << "--help lacks " << part;
  for (size_t start = 0, end; (end = help.find('\n', start)) != std::string::npos; start = end + 1)
    EXPECT_LE(end - start, 95u) << help.substr(start, end - start);
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `xtrace report LOG ARGS... -o FILE`, which must succeed: what it wrote.
std::string Report(const test_util::ScratchDir& dir, const std::string& log, std::vector<std::string> args) {
  const std::string out = dir.File("report.txt");
  args.insert(args.begin(), {"report", log, "-o", out});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  EXPECT_EQ(RunReportCommand(static_cast<int>(argv.size()), argv.data()), 0);
  return Slurp(out);
}

// A report whose tables are all empty says so and why, with the processes the log holds
// instead: in text in place of the tables, for CSV and JSON on standard error.
TEST(ReportCommand, NothingSelectedSaysSoAndWhatTheLogHolds) {
  test_util::ScratchDir dir;
  const std::string log = dir.File("run.capnp");
  {
    auto writer = LogWriter::Create(log, test_util::SampleHeader());
    ASSERT_TRUE(writer.ok());
    const StringId gemm = (*writer)->strings().Intern("gemm");
    (*writer)->Append(ProcessInfo{.pid = 48213, .comm = (*writer)->strings().Intern("python3"), .rank = 2});
    for (uint64_t i = 0; i < 10; ++i) (*writer)->Append(test_util::RealisticLaunch(i, gemm, 1));
    ASSERT_TRUE((*writer)->Finish(test_util::SampleSummary()).ok());
  }
  auto report = [&](std::vector<std::string> args) { return Report(dir, log, std::move(args)); };
  const std::string all = report({});
  EXPECT_NE(all.find("zeCommandListAppendLaunchKernel"), std::string::npos) << all;
  EXPECT_EQ(all.find("Nothing to report"), std::string::npos) << all;

  EXPECT_EQ(report({"--pid", "1", "--from", "1h"}),
            "Nothing to report: no call, device operation or range of " + log +
                " is in the selection (--from 1h --pid 1). " + log + " holds pid 48213 (python3, rank 2).\n");
  EXPECT_EQ(report({"--by", "python"}),
            "Nothing to report: no traced call of " + log +
                " carries Python frames (no CPython process was traced, or the capture ran "
                "with --no-python-frames).\n");
  // --rank selects by the rank a process recorded.
  EXPECT_EQ(report({"--rank", "2"}), all);
  EXPECT_EQ(report({"--rank", "0,1"}),
            "Nothing to report: no call, device operation or range of " + log +
                " is in the selection (--rank 0,1). " + log + " holds pid 48213 (python3, rank 2).\n");
  // CSV and JSON keep their shape (the tables' headers, no rows); the warning goes to stderr.
  for (const char* format : {"csv", "json"}) {
    testing::internal::CaptureStderr();
    const std::string out = report({"--pid", "1", "--format", format});
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(out.find("Nothing to report"), std::string::npos) << out;
    EXPECT_NE(out.find("host_calls"), std::string::npos) << out;
    EXPECT_NE(err.find("xtrace report: warning: Nothing to report: no call, device operation or range of " + log +
                       " is in the selection (--pid 1). " + log + " holds pid 48213 (python3, rank 2)."),
              std::string::npos)
        << format << ": " << err;
  }
  // Rows selected: no warning.
  testing::internal::CaptureStderr();
  report({"--format", "json"});
  EXPECT_EQ(testing::internal::GetCapturedStderr().find("Nothing to report"), std::string::npos);
}

// A log of kernels whose names differ deep inside long template names, on one engine, some of
// them without timestamps: every table of a report, each wider than a terminal.
std::string WriteWideLog(const test_util::ScratchDir& dir) {
  const std::string log = dir.File("wide.capnp");
  auto writer = LogWriter::Create(log, test_util::SampleHeader());
  EXPECT_TRUE(writer.ok());
  StringTable& s = (*writer)->strings();
  (*writer)->Append(ProcessInfo{.pid = 48213, .comm = s.Intern("trainer")});
  // An engine named as a user knows it, long as real ones are ("GPU 0 compute 0.1 immediate").
  (*writer)->Append(DeviceInfo{.device = 0, .name = s.Intern("GPU A"), .timer_hz = 1000,
                               .kernel_timestamp_bits = 32, .queue_group_flags = {0x1}});
  (*writer)->Append(DeviceQueue{.pid = 48213, .device = 0, .handle = 0x77, .immediate = true,
                                .ordinal = 0, .index = 1, .track = 1});
  const std::string shared(90, 'x');
  const StringId names[] = {s.Intern("void gemm<" + shared + ", tile<256>, float>(float*)"),
                            s.Intern("void gemm<" + shared + ", tile<128>, float>(float*)")};
  uint64_t t = test_util::SampleHeader().start_clock.monotonic_ns + 1'000'000;
  for (uint64_t k = 0; k < 40; ++k) {
    KernelLaunch launch;
    launch.pid = launch.tid = 48213;
    launch.start_ns = t;
    launch.end_ns = t + 2'000;
    launch.kernel_name = names[k % 2];
    (*writer)->Append(launch);
    DeviceOp op;
    op.pid = 48213;
    op.device = 0;
    op.queue = 0x77;
    op.name = names[k % 2];
    op.append_tid = op.submit_tid = 48213;
    op.append_ns = op.submit_ns = t;
    op.start_ns = t + 3'000;
    op.end_ns = op.start_ns + 120'000 + k * 1'000;
    op.measured = k % 5 != 0;
    (*writer)->Append(op);
    ApiCall wait;
    wait.pid = wait.tid = 48213;
    wait.fn = XT_ZE_COMMAND_QUEUE_SYNCHRONIZE;
    wait.start_ns = t + 2'500;
    wait.end_ns = op.end_ns + 1'000;
    (*writer)->Append(wait);
    t = op.end_ns + 25'000;
  }
  EXPECT_TRUE((*writer)->Finish(test_util::SampleSummary()).ok());
  return log;
}

// With COLUMNS, text fits that width: no line wider, names cut visibly, every table's columns
// kept in parts; --wide and CSV keep the names whole.
TEST(ReportCommand, TextFitsTheWidthAskedAndKeepsEveryColumn) {
  test_util::ScratchDir dir;
  const std::string log = WriteWideLog(dir);
  auto report = [&](std::vector<std::string> args) { return Report(dir, log, std::move(args)); };
  const char* columns_before = std::getenv("COLUMNS");
  const std::string saved = columns_before ? columns_before : "";
  ASSERT_EQ(setenv("COLUMNS", "70", 1), 0);
  const std::string narrow = report({});
  ASSERT_EQ(setenv("COLUMNS", "80", 1), 0);
  const std::string text = report({});
  const std::string wide = report({"--wide"});
  const std::string csv = report({"--format", "csv"});
  if (columns_before) setenv("COLUMNS", saved.c_str(), 1);
  else unsetenv("COLUMNS");

  size_t lines = 0;
  for (size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1, ++lines) {
    const std::string line = text.substr(start, end - start);
    EXPECT_LE(report::DisplayWidth(line), 80u) << line;
  }
  EXPECT_GT(lines, 20u) << text;
  // A terminal narrower than 80 columns still gets every line within it: no table's columns
  // that tell rows apart, with one more, are wider than 70.
  for (size_t start = 0, end; (end = narrow.find('\n', start)) != std::string::npos; start = end + 1)
    EXPECT_LE(report::DisplayWidth(narrow.substr(start, end - start)), 70u) << narrow;
  // The names, cut visibly, still tell the two kernels apart.
  EXPECT_NE(text.find(report::kCutMark), std::string::npos) << text;
  EXPECT_NE(text.find("tile<256>"), std::string::npos) << text;
  EXPECT_NE(text.find("tile<128>"), std::string::npos) << text;
  // Every column of the widest tables is still there, in parts.
  for (const char* header : {"Est. bound", "GB/s", "Idle: unknown", "Verdict", "Est. %", "p99",
                             "Append->End", "Submitter meanwhile"})
    EXPECT_NE(text.find(header), std::string::npos) << header << " lost:\n" << text;
  EXPECT_NE(text.find("Device operations (per kernel; copies and fills by append function) (continued)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("GPU utilization (per engine) (continued)"), std::string::npos) << text;

  // Full width: names whole, tables in one part.
  const std::string name = "void gemm<" + std::string(90, 'x') + ", tile<256>, float>(float*)";
  for (const std::string* whole : {&wide, &csv}) {
    EXPECT_NE(whole->find(name), std::string::npos) << *whole;
    EXPECT_EQ(whole->find(report::kCutMark), std::string::npos) << *whole;
    EXPECT_EQ(whole->find("(continued)"), std::string::npos) << *whole;
  }
}

}  // namespace
}  // namespace xtrace
