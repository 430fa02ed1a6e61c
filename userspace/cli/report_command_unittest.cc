// Tests of `xtrace report`'s command line: every option parsed through the option table, the
// errors naming the option, and a --help that lists every option and the examples.
#include "cli/report_command.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

}  // namespace
}  // namespace xtrace
