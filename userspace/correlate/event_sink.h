// Where correlation delivers the events it makes (the log writer in a capture; a vector in
// tests).
#pragma once

#include "model/event.h"

namespace xtrace {

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void OnEvent(const Event& event) = 0;
};

}  // namespace xtrace
