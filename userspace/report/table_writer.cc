// Text, CSV and JSON rendering of report tables (table_writer.h).
#include "report/table_writer.h"

#include <algorithm>
#include <cstdio>

namespace xtrace::report {
namespace {

std::string Printf(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

std::string TextCell(const Column& column, const nlohmann::json& v) {
  if (v.is_null()) return "-";
  switch (column.kind) {
    case Column::kNs:
      return FormatDuration(v.get<double>());
    case Column::kPercent:
      return Printf("%.1f%%", v.get<double>());
    case Column::kBytes: {
      const double b = v.get<double>();
      if (b < 1024) return Printf("%.0f B", b);
      if (b < 1024 * 1024) return Printf("%.1f KiB", b / 1024);
      if (b < 1024.0 * 1024 * 1024) return Printf("%.1f MiB", b / (1024 * 1024));
      return Printf("%.2f GiB", b / (1024.0 * 1024 * 1024));
    }
    case Column::kRate:
      return Printf("%.2f", v.get<double>());
    case Column::kCount:
      return v.is_number_float() ? Printf("%.0f", v.get<double>()) : v.dump();
    default:
      return v.is_string() ? v.get<std::string>() : v.dump();
  }
}

bool RightAligned(Column::Kind kind) { return kind != Column::kText; }

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

std::string RenderText(const std::vector<ReportSection>& sections) {
  std::string out;
  for (const ReportSection& section : sections) {
    bool section_started = false;
    for (const ReportTable& table : section.tables) {
      if (table.rows.empty()) continue;
      if (!section_started && !section.label.empty()) {
        out += "=== " + section.label + " ===\n\n";
      }
      section_started = true;
      std::vector<size_t> shown;
      for (size_t i = 0; i < table.columns.size(); ++i) {
        if (table.columns[i].kind != Column::kJsonOnly) shown.push_back(i);
      }
      std::vector<std::vector<std::string>> cells;
      std::vector<size_t> width(table.columns.size(), 0);
      for (size_t i : shown) width[i] = table.columns[i].header.size();
      for (const auto& row : table.rows) {
        auto& line = cells.emplace_back(table.columns.size());
        for (size_t i : shown) {
          line[i] = TextCell(table.columns[i], row[i]);
          width[i] = std::max(width[i], line[i].size());
        }
      }
      out += table.title + "\n";
      auto emit = [&](auto cell_of) {
        std::string line;
        for (size_t n = 0; n < shown.size(); ++n) {
          const size_t i = shown[n];
          const std::string cell = cell_of(i);
          const std::string pad(width[i] - std::min(width[i], cell.size()), ' ');
          if (n) line += "  ";
          line += RightAligned(table.columns[i].kind) ? pad + cell : cell + (n + 1 < shown.size() ? pad : "");
        }
        out += line + "\n";
      };
      emit([&](size_t i) { return table.columns[i].header; });
      for (const auto& line : cells) emit([&](size_t i) { return line[i]; });
      if (!table.note.empty()) out += table.note + "\n";
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
