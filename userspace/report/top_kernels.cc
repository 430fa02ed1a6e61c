// Top kernels for the capture summary (top_kernels.h).
#include "report/top_kernels.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "report/display_name.h"
#include "report/table_writer.h"

namespace xtrace::report {

void TopKernels::Add(const Event& event, const StringTable& strings) {
  const auto* op = std::get_if<DeviceOp>(&event);
  if (!op || op->kind != DeviceOpKind::kKernel) return;
  const std::string_view name = strings.Get(op->name);
  auto it = kernels_.find(name);
  if (it == kernels_.end()) it = kernels_.emplace(std::string(name), DeviceOpRow{}).first;
  const uint64_t duration = op->end_ns > op->start_ns ? op->end_ns - op->start_ns : 0;
  (op->measured ? it->second.measured : it->second.estimated).Add(duration);
}

namespace {
constexpr size_t kNameColumns = 100;
}  // namespace

std::string TopKernels::Format(size_t n) const {
  if (kernels_.empty() || n == 0) return "";
  std::vector<std::pair<const std::string*, const DeviceOpRow*>> rows;
  uint64_t measured_total = 0, estimated_count = 0, estimated_total = 0;
  for (const auto& [name, row] : kernels_) {
    rows.emplace_back(&name, &row);
    measured_total += row.measured.total_ns;
    estimated_count += row.estimated.count;
    estimated_total += row.estimated.total_ns;
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a.second->measured.total_ns != b.second->measured.total_ns) {
      return a.second->measured.total_ns > b.second->measured.total_ns;
    }
    if (a.second->estimated.total_ns != b.second->estimated.total_ns) {
      return a.second->estimated.total_ns > b.second->estimated.total_ns;
    }
    return *a.first < *b.first;
  });
  if (rows.size() > n) rows.resize(n);
  // Template-heavy names run to a thousand characters: a summary line shows them demangled
  // and cut, keeping what tells them apart.
  std::vector<std::string> names;
  for (const auto& [name, row] : rows) names.push_back(DemangledName(*name));
  names = CutNames(names, kNameColumns);
  std::string out = "Top " + std::to_string(rows.size()) + " kernels by device time:\n";
  char line[512];
  for (size_t i = 0; i < rows.size(); ++i) {
    const DeviceOpRow& row = *rows[i].second;
    const uint64_t calls = row.measured.count + row.estimated.count;
    if (row.measured.count == 0) {
      // No run of it had timestamps: its host-side bound, marked as one, not a 0 ns share.
      std::snprintf(line, sizeof(line), "  %6s  %10s  %7llu calls  avg %10s  ", "bound",
                    FormatDuration(double(row.estimated.total_ns)).c_str(),
                    static_cast<unsigned long long>(calls), "-");
    } else {
      const double share = measured_total ? 100.0 * double(row.measured.total_ns) / double(measured_total) : 0;
      std::snprintf(line, sizeof(line), "  %5.1f%%  %10s  %7llu calls  avg %10s  ", share,
                    FormatDuration(double(row.measured.total_ns)).c_str(),
                    static_cast<unsigned long long>(calls), FormatDuration(row.measured.average_ns()).c_str());
    }
    out += line + names[i] + "\n";
  }
  if (estimated_count > 0) {
    std::snprintf(line, sizeof(line),
                  "  (%llu kernel runs had no timestamps: not in these times; their host-side "
                  "bound is %s)\n",
                  static_cast<unsigned long long>(estimated_count),
                  FormatDuration(double(estimated_total)).c_str());
    out += line;
  }
  out += "  'xtrace report LOG' shows every kernel, API call and idle gap.\n";
  return out;
}

}  // namespace xtrace::report
