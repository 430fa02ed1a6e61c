// The benchmark's one table: every figure with its ratio (measured in the same run, so it
// holds on a shared machine where absolute numbers drift), its raw value, its target and
// whether the target was met — or by how much it was missed.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace xtrace::bench {

struct BenchRow {
  std::string section;  // "1 overhead: launch"
  std::string metric;   // what was measured
  std::string value;    // the headline figure, with its unit
  std::string ratio;    // the same-run ratio it is judged by ("1.21x floor"), or ""
  std::string raw;      // raw figures (ns, counts) for comparison over time
  std::string target;   // "" when the figure has no target
  std::string verdict;  // "met", "MISSED by ...", "n/a: ..." or ""
};

// A target check: "met" or "MISSED by <how much>", from the measured and the allowed value.
// `lower_is_better` for costs and sizes; `unit` is appended to the shortfall.
std::string Verdict(double measured, double limit, bool lower_is_better, const std::string& unit);

// printf into a std::string.
std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

class BenchTable {
 public:
  void Add(BenchRow row);
  // Prints every row as aligned columns (section title once per group).
  void Print(std::FILE* out) const;
  const std::vector<BenchRow>& rows() const { return rows_; }
  // Rows whose measurement failed (value "failed": the reason is in raw).
  size_t failures() const;

 private:
  std::vector<BenchRow> rows_;
};

}  // namespace xtrace::bench
