// A report table as data: typed columns and rows of JSON values, so the text, CSV and JSON
// writers (table_writer.h) render the same rows and the JSON keys are the columns' keys.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace xtrace::report {

struct Column {
  enum Kind {
    kText,
    kCount,
    kNs,        // a duration or time in ns: JSON integer, text "1.23 ms"
    kPercent,   // 0..100
    kBytes,
    kRate,      // GB/s
    kJsonOnly,  // nested detail (e.g. failures by result name): JSON only
  };
  std::string key;
  std::string header;
  Kind kind = kText;
  // Names (kernels, functions, ranges): in text, cut to the terminal's width when the table
  // would not fit it (display_name.h); whole in CSV and JSON.
  bool cuttable = false;
  // A cuttable column whose cells are lists ("a 1 ms, b 2 ms"): cut by whole items, the rest
  // counted ("+2 more"), never through an item (CutList).
  bool list = false;
  // A signed change (--diff): text shows an increase with "+", as a decrease has "-"; CSV
  // and JSON keep the plain signed number.
  bool change = false;
};

struct ReportTable {
  std::string id;     // JSON key, e.g. "host_calls"
  std::string title;  // text heading
  std::vector<Column> columns;
  std::vector<std::vector<nlohmann::json>> rows;  // one value per column
  std::string note;   // a line under the text table (e.g. how a figure was made)
  // How many leading columns tell a row apart (a name; a pid and an engine): when a text
  // table is wider than the terminal, it is split into parts that each start with them.
  size_t key_columns = 1;

  // Index of the column with `key`, or -1.
  int ColumnIndex(const std::string& key) const {
    for (size_t i = 0; i < columns.size(); ++i) {
      if (columns[i].key == key) return int(i);
    }
    return -1;
  }
};

// One section of the report: the whole capture, or one value of --by.
struct ReportSection {
  std::string label;  // "" for the whole capture
  std::vector<ReportTable> tables;
};

}  // namespace xtrace::report
