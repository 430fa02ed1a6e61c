// `xtrace report`: summary tables (host calls, device operations, submission latency,
// ranges, GPU utilization and idle causes) from one or many event logs.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/event_selection.h"
#include "report/report_builder.h"

namespace xtrace {

// What the report's command line says.
struct ReportArguments {
  std::vector<std::string> inputs;
  std::string output;
  report::OutputFormat format = report::OutputFormat::kText;
  bool diff = false;
  bool wide = false;  // names whole in text, whatever the terminal's width
  std::string categories;
  report::ReportOptions options;
  EventSelection selection;  // --from, --to, --pid, --name
  bool by_python = false;    // --by python: report/python_lines.h instead of the tables
  std::optional<std::vector<std::string>> python_skips;  // --python-skip, in order
};

struct ReportCommandLine {
  bool help = false;  // -h or --help: print ReportCommandHelp(), run nothing
  ReportArguments arguments;
};

// `args` is argv without the command name. The error is one line naming the option.
Result<ReportCommandLine> ParseReportCommandLine(std::span<char* const> args);

std::string ReportCommandHelp();

// The line a report says when none of its tables has a row (text: in their place; CSV and
// JSON: on standard error): what was read and what may have left nothing (the selection
// given, with the processes the logs hold instead, or no Python frames for --by python).
std::string NothingToReport(const ReportArguments& a, const report::Report& report);

// argv[0] is "report". Returns the process exit status (see --help).
int RunReportCommand(int argc, char** argv);

}  // namespace xtrace
