// `xtrace report --by python`: device time and launches per line of the user's Python code.
// Each traced call's Python frames (PythonStack events) name the call's line: the innermost
// frame outside library code (files matching a skip pattern, by default torch/), so a oneDNN
// task or a launch made deep inside PyTorch counts for the model's line that called it. A
// device operation counts for the line of the append that recorded it.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "base/status.h"
#include "report/report_builder.h"

namespace xtrace::report {

struct PythonLinesOptions {
  std::vector<std::string> skips;  // substrings of library files' paths; default torch/
  size_t top = 0;                  // rows kept (0: all), by device time then host time
  // What the rest of `xtrace report` selects, selected the same way: calls, launches and
  // device operations that start in the window, of these processes (read.aggregate.pids);
  // read.salvage reads up to a log's damage and warns. Only rows whose line matches `name`.
  LogReadOptions read;
  std::optional<std::regex> name;
};

// A report of one section with the table "python_lines", read from `logs` (its warnings say
// what damage --salvage stepped over).
Result<Report> PythonLinesReport(const std::vector<std::string>& logs,
                                 const PythonLinesOptions& options);

}  // namespace xtrace::report
