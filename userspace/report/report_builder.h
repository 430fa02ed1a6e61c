// Builds `xtrace report` from logs: every log streamed through its own aggregator, sections
// merged across logs, the per-kernel spread across logs (stragglers), and --diff of two sets
// of logs; then rendered as text, CSV or JSON (the schema is in docs/report-json.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "report/log_set.h"
#include "report/report_table.h"
#include "report/report_tables.h"
#include "report/table_writer.h"

namespace xtrace::report {

inline constexpr int kReportJsonVersion = 1;

enum class OutputFormat { kText, kCsv, kJson };

struct ReportOptions {
  LogReadOptions read;
  TableOptions tables;
};

struct LogDescription {
  std::string path, rank, host, damage;
  bool rank_recorded = false;
  std::vector<int32_t> ranks;  // every rank recorded in the log, ascending
  bool complete = false;
  uint64_t events = 0;
};

struct Report {
  std::vector<LogDescription> logs;
  std::vector<ReportSection> sections;  // one per --by value ("" label without --by)
  std::vector<ReportTable> across_logs;  // with several logs: the spread per kernel
  std::vector<ReportTable> diff;         // with --diff
  std::vector<std::string> warnings;     // cut-short or salvaged logs
  // Every traced process the logs hold, whatever the selection: what a selection that kept
  // nothing is told it could have kept.
  std::map<uint32_t, LoggedProcess> processes;

  // Whether any table has a row (an empty selection has none).
  bool HasRows() const;
};

// Reads every log (already expanded by ExpandLogInputs).
Result<Report> BuildReport(const std::vector<std::string>& logs, const ReportOptions& options);

// Per kernel and per API function, the change from `before` to `after`.
Result<Report> BuildDiff(const std::vector<std::string>& before, const std::vector<std::string>& after,
                         const ReportOptions& options);

// `layout` applies to text only: CSV and JSON keep every name whole.
std::string RenderReport(const Report& report, OutputFormat format, const TextLayout& layout = {});
nlohmann::json ReportToJson(const Report& report);

}  // namespace xtrace::report
