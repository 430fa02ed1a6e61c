// BenchTable: formatting, verdicts and aligned printing.
#include "bench_table.h"

#include <algorithm>
#include <cstdarg>

namespace xtrace::bench {

std::string Format(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

std::string Verdict(double measured, double limit, bool lower_is_better, const std::string& unit) {
  const bool met = lower_is_better ? measured <= limit : measured >= limit;
  if (met) return "met";
  const double by = lower_is_better ? measured - limit : limit - measured;
  const double pct = limit != 0 ? 100.0 * by / limit : 0;
  return Format("MISSED by %.3g%s (%.0f%%)", by, unit.c_str(), pct);
}

void BenchTable::Add(BenchRow row) { rows_.push_back(std::move(row)); }

void BenchTable::Print(std::FILE* out) const {
  const char* headers[] = {"section", "metric", "value", "ratio", "raw", "target", "verdict"};
  size_t width[7] = {};
  for (int i = 0; i < 7; ++i) width[i] = std::string(headers[i]).size();
  auto cells = [](const BenchRow& r) {
    return std::vector<const std::string*>{&r.section, &r.metric, &r.value, &r.ratio,
                                           &r.raw,     &r.target, &r.verdict};
  };
  for (const auto& r : rows_) {
    auto c = cells(r);
    for (int i = 0; i < 7; ++i) width[i] = std::max(width[i], c[i]->size());
  }
  auto line = [&](const std::vector<std::string>& c) {
    for (int i = 0; i < 7; ++i) {
      std::fprintf(out, "%-*s%s", i == 6 ? 0 : int(width[i]), c[i].c_str(), i == 6 ? "\n" : "  ");
    }
  };
  line({headers, headers + 7});
  size_t total = 0;
  for (size_t w : width) total += w + 2;
  std::fprintf(out, "%s\n", std::string(total, '-').c_str());
  std::string last_section;
  for (const auto& r : rows_) {
    std::vector<std::string> c;
    for (const std::string* s : cells(r)) c.push_back(*s);
    if (r.section == last_section) c[0] = "";
    last_section = r.section;
    line(c);
  }
}

size_t BenchTable::failures() const {
  size_t n = 0;
  for (const BenchRow& row : rows_) n += row.value == "failed";
  return n;
}

}  // namespace xtrace::bench
