// The TraceDescription of a log (export/trace_writer.h): its devices and the ranks its
// processes recorded. A writer needs them before the first event, and the log says them as it
// goes, so the converter reads the log once ahead of the conversion, keeping only these facts.
#pragma once

#include <map>
#include <set>
#include <string>

#include "export/trace_writer.h"
#include "model/event.h"
#include "model/string_table.h"

namespace xtrace {

class TraceDescriptionBuilder {
 public:
  // Takes what `event` says about the trace as a whole; `strings` resolves its names.
  void Add(const Event& event, const StringTable& strings);
  TraceDescription Build() const;

 private:
  std::map<uint32_t, TraceDescription::Device> devices_;
  std::set<int32_t> ranks_;
  std::set<int32_t> world_sizes_;
};

// Reads the log at `path` to its end (or to damage, with `salvage`) for its description.
// Returns what was read; an unreadable log describes nothing (the conversion reports why).
TraceDescription DescribeLog(const std::string& path, bool salvage);

}  // namespace xtrace
