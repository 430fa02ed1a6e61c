// An event sink for unit tests: keeps every event it is given, in order, and hands out those
// of one kind.
#pragma once

#include <variant>
#include <vector>

#include "correlate/event_sink.h"

namespace xtrace {

class CollectingSink : public EventSink {
 public:
  void OnEvent(const Event& e) override { events.push_back(e); }
  template <typename T>
  std::vector<T> All() const {
    std::vector<T> out;
    for (const auto& e : events)
      if (auto* p = std::get_if<T>(&e)) out.push_back(*p);
    return out;
  }
  std::vector<Event> events;
};

}  // namespace xtrace
