// Renders report sections as aligned text (for a terminal), CSV or JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/report_table.h"

namespace xtrace::report {

// "1.23 ms", "850 ns", "2.00 s".
std::string FormatDuration(double ns);

// How text tables are laid out for a terminal.
struct TextLayout {
  // Columns every line should fit: a table's cuttable columns (names) are cut, down to
  // kMinCutWidth, until its rows do; rows still too wide are split into parts that each
  // repeat the key columns (ReportTable::key_columns), so that no column is left out.
  // Titles and notes are wrapped. 0: names whole and one part, however wide the rows.
  size_t width = 0;
};

// Aligned columns, a title line over each table; empty tables are left out.
std::string RenderText(const std::vector<ReportSection>& sections, const TextLayout& layout = {});

// Each table as a block: "# <section label> <table id>", a header line of column keys, rows.
// Durations are integer ns; JSON-only columns are left out. Blocks are separated by a blank
// line.
std::string RenderCsv(const std::vector<ReportSection>& sections);

// {"sections": [{"label": ..., "tables": {"<id>": [{<column key>: value, ...}, ...]}}]}
nlohmann::json SectionsToJson(const std::vector<ReportSection>& sections);

}  // namespace xtrace::report
