// What a capture feeds, besides its log, with every event it writes: a tap that has a few
// lines of its own for the capture's summary at the end (report::TopKernels, the top kernels).
// The capture knows only this interface, so it depends on nothing of the report.
#pragma once

#include <string>

#include "model/event.h"
#include "model/string_table.h"

namespace xtrace {

class EventTap {
 public:
  virtual ~EventTap() = default;
  // Every event as the log gets it, in order; `strings` resolves its names.
  virtual void Add(const Event& event, const StringTable& strings) = 0;
  // An ITT task, the bulk of an ITT capture, as it is: a tap that counts none overrides this
  // with nothing, so that no Event is built around each.
  virtual void AddIttTask(const IttTask& task, const StringTable& strings) { Add(task, strings); }
  // Lines for the end of the capture's summary, or "".
  virtual std::string Summary() const = 0;
};

}  // namespace xtrace
