// Turns a section's statistics into the report's tables (1 host calls, 2 device operations,
// 3 submission latency, 4 ranges, 5 engines and their largest gaps, 6 categories), sorted,
// filtered by name and cut to --top.
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "report/categories.h"
#include "report/report_table.h"
#include "report/section_stats.h"

namespace xtrace::report {

enum class SortKey { kTotal, kCalls, kAverage, kMax, kName };

struct TableOptions {
  SortKey sort = SortKey::kTotal;
  size_t top = 0;                   // rows per table; 0: all
  std::optional<std::regex> name;   // only rows whose name matches
  const Categories* categories = nullptr;  // adds category columns and tables
  bool mangled = false;             // kernel and range names as captured, not demangled
  uint64_t time_origin_ns = 0;      // gap times are shown relative to it
};

std::vector<ReportTable> BuildSectionTables(const SectionStats& stats, const TableOptions& options);

// A kernel or range name as the tables show it: demangled unless `mangled` (display_name.h).
std::string ShownName(const TableOptions& options, std::string_view captured);

// Whether the --name pattern (if any) finds the name as shown or as captured.
bool NameSelected(const TableOptions& options, std::string_view captured, std::string_view shown);

// Sorts by the column the key names (descending; names ascending), then keeps `top` rows.
void SortAndCut(ReportTable* table, SortKey sort, size_t top);

}  // namespace xtrace::report
