// Chrome trace events for the Level Zero events of model/ze_events.h: host API calls on the
// threads that made them.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "export/chrome_json_writer.h"
#include "model/event.h"
#include "model/string_table.h"

namespace xtrace {

class ZeTraceExporter {
 public:
  ZeTraceExporter(const StringTable& strings, ChromeJsonWriter& out) : strings_(strings), out_(out) {}

  void Write(const ApiCall& e);

 private:
  const StringTable& strings_;
  ChromeJsonWriter& out_;
  std::vector<TraceArg> args_;       // reused: no allocation per event
  std::deque<std::string> scratch_;  // backing text for args of the event being written
};

}  // namespace xtrace
