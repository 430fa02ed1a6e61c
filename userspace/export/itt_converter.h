// Chrome JSON for the ITT events: tasks as complete events on their thread (so they nest
// around the Level Zero calls they enclose), id-paired spans as async spans on tracks of
// their own, markers and collection changes as instant events. Tasks, spans and markers are in
// Kineto's category for user ranges, user_annotation, with the ITT domain as the "domain"
// argument (docs/kineto-json.md).
#pragma once

#include <cstdint>
#include <vector>

#include "export/trace_writer.h"
#include "model/itt_event.h"
#include "model/string_table.h"

namespace xtrace {

class IttEventWriter {
 public:
  IttEventWriter(const StringTable& strings, TraceWriter& out) : strings_(strings), out_(out) {}

  void Write(const IttTask& e);
  void Write(const IttMarker& e);
  void Write(const CollectionChange& e);

 private:
  // Starts args_ with the domain, when it has a name.
  void BeginArgs(StringId domain);

  const StringTable& strings_;
  TraceWriter& out_;
  std::vector<TraceArg> args_;  // reused: no allocation per event
  uint64_t next_async_id_ = 1;
};

}  // namespace xtrace
