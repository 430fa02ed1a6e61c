// The few lines a capture's end-of-run summary adds: the top kernels by measured device time.
// Fed the same events as the log sink, one at a time; keeps one row per distinct name.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "model/event.h"
#include "model/event_tap.h"
#include "model/string_table.h"
#include "report/section_stats.h"

namespace xtrace::report {

class TopKernels final : public EventTap {
 public:
  // `rows`: how many kernels Summary() lists.
  explicit TopKernels(size_t rows = 5) : rows_(rows) {}

  // Counts a DeviceOp of kind kernel; other events are ignored.
  void Add(const Event& event, const StringTable& strings) override;
  // A task is no kernel.
  void AddIttTask(const IttTask&, const StringTable&) override {}
  // Format(rows): the capture summary's lines.
  std::string Summary() const override { return Format(rows_); }

  // "Top N kernels by device time:" then one line per kernel (share of the measured kernel
  // time, total, calls, average, name) and, when some had no timestamps, a line saying how
  // many and their estimated bound. "" when no kernel ran.
  std::string Format(size_t n) const;

 private:
  size_t rows_;
  std::map<std::string, DeviceOpRow, std::less<>> kernels_;
};

}  // namespace xtrace::report
