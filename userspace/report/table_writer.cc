// Text, CSV and JSON rendering of report tables (table_writer.h).
#include "report/table_writer.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "base/human_bytes.h"
#include "report/display_name.h"

namespace xtrace::report {
namespace {

std::string Printf(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

// A value in its column's unit ("1.23 ms", "25.0%").
std::string ValueText(const Column& column, const nlohmann::json& v) {
  switch (column.kind) {
    case Column::kNs:
      return FormatDuration(v.get<double>());
    case Column::kPercent:
      return Printf("%.1f%%", v.get<double>());
    case Column::kBytes: {
      return HumanBytes(static_cast<uint64_t>(std::max(0.0, v.get<double>())));
    }
    case Column::kRate:
      return Printf("%.2f", v.get<double>());
    case Column::kCount:
      return v.is_number_float() ? Printf("%.0f", v.get<double>()) : v.dump();
    default:
      return v.is_string() ? v.get<std::string>() : v.dump();
  }
}

std::string TextCell(const Column& column, const nlohmann::json& v) {
  if (v.is_null()) return "-";
  const std::string text = ValueText(column, v);
  // An increase as plainly as a decrease; a change that rounds to nothing without a sign.
  const bool increase = column.change && v.is_number() && v.get<double>() > 0 && text[0] != '0';
  return increase ? "+" + text : text;
}

bool RightAligned(Column::Kind kind) { return kind != Column::kText; }

// `text` as lines of at most `width` columns, broken between words (one line when width is
// 0).
std::string Wrapped(const std::string& text, size_t width) {
  if (width == 0) return text + "\n";
  std::string out, line;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && DisplayWidth(line) + 1 + DisplayWidth(word) > width) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  return out + line + "\n";
}

// A row's width in `columns`: theirs, with two spaces between columns.
size_t RowWidth(const std::vector<size_t>& columns, const std::vector<size_t>& width) {
  return std::accumulate(columns.begin(), columns.end(), 2 * (columns.size() - 1),
                         [&](size_t sum, size_t i) { return sum + width[i]; });
}

// Cuts the cuttable ones of `columns` in `cells` (widest first) until a row of them fits
// `limit`, and updates `width`.
void FitToWidth(const ReportTable& table, const std::vector<size_t>& columns, size_t limit,
                std::vector<std::vector<std::string>>& cells, std::vector<size_t>& width) {
  if (limit == 0 || columns.empty()) return;
  std::vector<size_t> cuttable;
  for (size_t i : columns)
    if (table.columns[i].cuttable) cuttable.push_back(i);
  std::sort(cuttable.begin(), cuttable.end(), [&](size_t a, size_t b) { return width[a] > width[b]; });
  for (size_t i : cuttable) {
    const size_t total = RowWidth(columns, width);
    if (total <= limit) return;
    // A list keeps whole items and counts the rest, so it may go down to its header; a name
    // cut narrower than kMinCutWidth says too little.
    const size_t header = DisplayWidth(table.columns[i].header);
    const size_t floor = table.columns[i].list ? header : std::max(kMinCutWidth, header);
    if (width[i] <= floor) continue;
    const size_t target = std::max(floor, width[i] - std::min(width[i], total - limit));
    std::vector<std::string> column;
    for (const auto& line : cells) column.push_back(line[i]);
    if (table.columns[i].list) {
      for (std::string& cell : column) cell = CutList(cell, target);
    } else {
      column = CutNames(column, target);
    }
    width[i] = DisplayWidth(table.columns[i].header);
    for (size_t r = 0; r < cells.size(); ++r) {
      cells[r][i] = std::move(column[r]);
      width[i] = std::max(width[i], DisplayWidth(cells[r][i]));
    }
  }
}

// The shown columns in parts, each a table of its own that fits `limit`: every part starts
// with the key columns (the first table.key_columns shown: what tells a row from the others),
// the other columns follow in their order, as many as fit and at least one. One part when
// the whole row fits, or without a limit.
std::vector<std::vector<size_t>> Parts(const ReportTable& table, const std::vector<size_t>& shown,
                                       size_t limit, const std::vector<size_t>& width) {
  const size_t keys = std::min(table.key_columns, shown.size());
  if (limit == 0 || keys == shown.size() || RowWidth(shown, width) <= limit) return {shown};
  const std::vector<size_t> key_columns(shown.begin(), shown.begin() + keys);
  std::vector<std::vector<size_t>> parts;
  std::vector<size_t> part = key_columns;
  for (size_t n = keys; n < shown.size(); ++n) {
    std::vector<size_t> wider = part;
    wider.push_back(shown[n]);
    if (part.size() > keys && RowWidth(wider, width) > limit) {
      parts.push_back(std::move(part));
      part = key_columns;
      part.push_back(shown[n]);
    } else {
      part = std::move(wider);
    }
  }
  parts.push_back(std::move(part));
  return parts;
}

std::string CsvCell(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (!v.is_string()) return v.dump();
  const std::string s = v.get<std::string>();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string FormatDuration(double ns) {
  if (ns < 0) return "-" + FormatDuration(-ns);
  if (ns < 1e3) return Printf("%.0f ns", ns);
  if (ns < 1e6) return Printf("%.2f us", ns / 1e3);
  if (ns < 1e9) return Printf("%.2f ms", ns / 1e6);
  return Printf("%.3f s", ns / 1e9);
}

std::string RenderText(const std::vector<ReportSection>& sections, const TextLayout& layout) {
  std::string out;
  for (const ReportSection& section : sections) {
    bool section_started = false;
    for (const ReportTable& table : section.tables) {
      if (table.rows.empty()) continue;
      if (!section_started && !section.label.empty()) {
        out += Wrapped("=== " + section.label + " ===", layout.width) + "\n";
      }
      section_started = true;
      std::vector<size_t> shown;
      for (size_t i = 0; i < table.columns.size(); ++i) {
        if (table.columns[i].kind != Column::kJsonOnly) shown.push_back(i);
      }
      std::vector<std::vector<std::string>> cells;
      std::vector<size_t> width(table.columns.size(), 0);
      for (size_t i : shown) width[i] = DisplayWidth(table.columns[i].header);
      for (const auto& row : table.rows) {
        auto& line = cells.emplace_back(table.columns.size());
        for (size_t i : shown) {
          line[i] = TextCell(table.columns[i], row[i]);
          width[i] = std::max(width[i], DisplayWidth(line[i]));
        }
      }
      // Names are cut first; a row still too wide is split into parts, every column kept.
      FitToWidth(table, shown, layout.width, cells, width);
      const std::vector<std::vector<size_t>> parts = Parts(table, shown, layout.width, width);
      for (const std::vector<size_t>& part : parts) FitToWidth(table, part, layout.width, cells, width);
      for (size_t p = 0; p < parts.size(); ++p) {
        const std::vector<size_t>& part = parts[p];
        if (p) out += "\n";
        out += Wrapped(p ? table.title + " (continued)" : table.title, layout.width);
        auto emit = [&](auto cell_of) {
          std::string line;
          for (size_t n = 0; n < part.size(); ++n) {
            const size_t i = part[n];
            const std::string cell = cell_of(i);
            const std::string pad(width[i] - std::min(width[i], DisplayWidth(cell)), ' ');
            if (n) line += "  ";
            line += RightAligned(table.columns[i].kind) ? pad + cell : cell + (n + 1 < part.size() ? pad : "");
          }
          out += line + "\n";
        };
        emit([&](size_t i) { return table.columns[i].header; });
        for (const auto& line : cells) emit([&](size_t i) { return line[i]; });
      }
      if (!table.note.empty()) out += Wrapped(table.note, layout.width);
      out += "\n";
    }
  }
  return out;
}

std::string RenderCsv(const std::vector<ReportSection>& sections) {
  std::string out;
  for (const ReportSection& section : sections) {
    for (const ReportTable& table : section.tables) {
      if (!out.empty()) out += "\n";
      out += "# " + (section.label.empty() ? std::string() : section.label + " ") + table.id + "\n";
      std::string header;
      for (const Column& c : table.columns) {
        if (c.kind == Column::kJsonOnly) continue;
        header += (header.empty() ? "" : ",") + c.key;
      }
      out += header + "\n";
      for (const auto& row : table.rows) {
        std::string line;
        bool first = true;
        for (size_t i = 0; i < table.columns.size(); ++i) {
          if (table.columns[i].kind == Column::kJsonOnly) continue;
          line += (first ? "" : ",") + CsvCell(row[i]);
          first = false;
        }
        out += line + "\n";
      }
    }
  }
  return out;
}

nlohmann::json SectionsToJson(const std::vector<ReportSection>& sections) {
  nlohmann::json out = nlohmann::json::array();
  for (const ReportSection& section : sections) {
    nlohmann::json tables = nlohmann::json::object();
    for (const ReportTable& table : section.tables) {
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& row : table.rows) {
        nlohmann::json object = nlohmann::json::object();
        for (size_t i = 0; i < table.columns.size(); ++i) object[table.columns[i].key] = row[i];
        rows.push_back(std::move(object));
      }
      tables[table.id] = std::move(rows);
    }
    out.push_back({{"label", section.label}, {"tables", std::move(tables)}});
  }
  return out;
}

}  // namespace xtrace::report
