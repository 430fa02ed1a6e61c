// Tests for cli/option_table: parsing each kind of option through a table, the one-line
// errors, and --help built from the same table.
#include "cli/option_table.h"

#include "cli/args.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace xtrace {
namespace {

struct Settings {
  bool flag = false;
  std::vector<std::string> names;
  int number = 0;
};

OptionTable Table(Settings& s) {
  return {
      {'f', "--flag", "", "FIRST", "a switch", [&s](const std::string&, const std::string&) {
         s.flag = true;
         return Status::Ok();
       }},
      {'n', "--name", "NAME", "FIRST", "a repeatable text value",
       [&s](const std::string&, const std::string& v) {
         s.names.push_back(v);
         return Status::Ok();
       }},
      {0, "--a-rather-long-option-name", "COUNT", "SECOND",
       "a number from 1 to 9, with a help text long enough to need more than one line when it is "
       "wrapped to the width of a terminal",
       [&s](const std::string& flag, const std::string& v) {
         if (v.size() != 1 || v[0] < '1' || v[0] > '9')
           return Status::Error(flag + ": '" + v + "' is not a number from 1 to 9");
         s.number = v[0] - '0';
         return Status::Ok();
       }},
  };
}

struct Outcome {
  Settings settings;
  Result<ParsedCommandLine> parsed = Status::Error("not parsed");
};

Outcome Parse(std::vector<std::string> args, Positionals positionals = Positionals::kAnywhere) {
  Outcome run;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  run.parsed = ParseCommandLine(Table(run.settings), argv, positionals);
  return run;
}

std::string Error(std::vector<std::string> args) {
  Outcome run = Parse(std::move(args));
  return run.parsed.ok() ? "(parsed)" : run.parsed.status().message();
}

TEST(OptionTable, ParsesSwitchesValuesAndEveryValueSpelling) {
  Outcome run = Parse({"-f", "--name", "a", "-n", "b", "--name=c", "--a-rather-long-option-name", "7"});
  ASSERT_TRUE(run.parsed.ok()) << run.parsed.status().message();
  EXPECT_TRUE(run.settings.flag);
  EXPECT_EQ(run.settings.names, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(run.settings.number, 7);
  EXPECT_FALSE(run.parsed->help);
  EXPECT_TRUE(run.parsed->positionals.empty());
}

TEST(OptionTable, ValuesAreTakenVerbatimEvenWhenTheyLookLikeOptions) {
  Outcome run = Parse({"--name", "-f", "--name", "", "--name=x=y"});
  ASSERT_TRUE(run.parsed.ok()) << run.parsed.status().message();
  EXPECT_EQ(run.settings.names, (std::vector<std::string>{"-f", "", "x=y"}));
  EXPECT_FALSE(run.settings.flag);
}

TEST(OptionTable, PositionalsAnywhereOrEndingTheOptions) {
  Outcome anywhere = Parse({"in", "-f", "-", "--", "-n", "x"});
  ASSERT_TRUE(anywhere.parsed.ok());
  EXPECT_EQ(anywhere.parsed->positionals, (std::vector<std::string>{"in", "-", "-n", "x"}));
  EXPECT_TRUE(anywhere.settings.flag);
  EXPECT_TRUE(anywhere.settings.names.empty());

  Outcome ending = Parse({"-f", "cmd", "-n", "x"}, Positionals::kEndOptions);
  ASSERT_TRUE(ending.parsed.ok());
  EXPECT_EQ(ending.parsed->positionals, (std::vector<std::string>{"cmd", "-n", "x"}));
  EXPECT_TRUE(ending.settings.names.empty());

  Outcome dashes = Parse({"--", "--flag"}, Positionals::kEndOptions);
  ASSERT_TRUE(dashes.parsed.ok());
  EXPECT_EQ(dashes.parsed->positionals, (std::vector<std::string>{"--flag"}));
  EXPECT_FALSE(dashes.settings.flag);
}

TEST(OptionTable, CommonApplyFunctions) {
  bool flag = false;
  EXPECT_TRUE(SetTrue(flag)("--flag", "").ok());
  EXPECT_TRUE(flag);

  std::optional<uint64_t> duration;
  EXPECT_TRUE(StoreParsed(duration, ParseDuration)("--duration", "2s").ok());
  EXPECT_EQ(duration, 2'000'000'000ull);
  const Status bad = StoreParsed(duration, ParseDuration)("-d", "soon");
  EXPECT_NE(bad.message().find("-d: 'soon' is not a duration"), std::string::npos) << bad.message();
  EXPECT_EQ(duration, 2'000'000'000ull) << "a bad value must leave the setting alone";
}

TEST(OptionTable, HelpStopsParsing) {
  for (const char* help : {"-h", "--help"}) {
    Outcome run = Parse({"-f", help, "--frobnicate"});
    ASSERT_TRUE(run.parsed.ok()) << help;
    EXPECT_TRUE(run.parsed->help);
  }
}

TEST(OptionTable, ErrorsAreOneLineNamingTheOptionAndValue) {
  EXPECT_EQ(Error({"--frobnicate"}), "unknown option '--frobnicate'");
  EXPECT_EQ(Error({"-x"}), "unknown option '-x'");
  EXPECT_EQ(Error({"--name"}), "--name needs a value (NAME)");
  EXPECT_EQ(Error({"-f", "-n"}), "-n needs a value (NAME)");
  EXPECT_EQ(Error({"--flag=yes"}), "--flag takes no value (got 'yes')");
  EXPECT_EQ(Error({"--a-rather-long-option-name", "12"}),
            "--a-rather-long-option-name: '12' is not a number from 1 to 9");
  EXPECT_EQ(Error({"--a-rather-long-option-name=0"}),
            "--a-rather-long-option-name: '0' is not a number from 1 to 9");
  for (const std::string& e : {Error({"--frobnicate"}), Error({"--name"})})
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

TEST(OptionTable, HelpListsEveryOptionInItsGroupWithUsageAndExamples) {
  Settings unused;
  const OptionTable table = Table(unused);
  const CommandDoc doc = {
      .command = "demo",
      .usage = {"[options] IN", "--other"},
      .description = "Does a demo.\n",
      .groups = {{"SECOND", "listed first"}},
      .notes = "A note.\n",
      .examples = {"xtrace demo in"},
      .exit_status = "Exit status: 0.\n",
  };
  const std::string help = RenderHelp(doc, table);
  EXPECT_EQ(help.rfind("Usage: xtrace demo [options] IN\n       xtrace demo --other\n\nDoes a demo.\n", 0), 0u)
      << help;
  EXPECT_NE(help.find("\n  -f, --flag             a switch\n"), std::string::npos) << help;
  EXPECT_NE(help.find("\n  -n, --name NAME        a repeatable text value\n"), std::string::npos) << help;
  // A flag too wide for its column has its help on the next line, wrapped and indented.
  EXPECT_NE(help.find("\n      --a-rather-long-option-name COUNT\n                         a number"),
            std::string::npos) << help;
  EXPECT_NE(help.find("  -h, --help"), std::string::npos);
  // Groups: the doc's order first, then the table's.
  const size_t second = help.find("\nSECOND (listed first)\n");
  const size_t first = help.find("\nFIRST\n");
  ASSERT_NE(second, std::string::npos) << help;
  ASSERT_NE(first, std::string::npos) << help;
  EXPECT_LT(second, first);
  EXPECT_LT(first, help.find("A note."));
  EXPECT_NE(help.find("\nExamples:\n  xtrace demo in\n\nExit status: 0.\n"), std::string::npos) << help;
  for (size_t start = 0, end; (end = help.find('\n', start)) != std::string::npos; start = end + 1)
    EXPECT_LE(end - start, 95u) << help.substr(start, end - start);
}

// A usage error quotes what the user typed; control characters in it (found by the option
// parser's fuzzer) are escaped so the error stays one line.
TEST(OptionTable, UsageErrorsStayOneLine) {
  EXPECT_EQ(OneLine("unknown option '--pid\n\x1d'"), "unknown option '--pid\\n\\x1d'");
  EXPECT_EQ(OneLine("tab\there, del\x7f, caf\xc3\xa9"), "tab\\there, del\\x7f, caf\xc3\xa9");
  EXPECT_EQ(OneLine("plain"), "plain");
}

}  // namespace
}  // namespace xtrace
