// Where correlation delivers the events it makes (the log writer in a capture; a vector in
// tests).
#pragma once

#include "model/event.h"

namespace xtrace {

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void OnEvent(const Event& event) = 0;
  // An ITT task, the bulk of an ITT capture: a sink that can take one as it is (the log's)
  // overrides this, so that no Event is built around each.
  virtual void OnIttTask(const IttTask& task) { OnEvent(task); }
};

}  // namespace xtrace
