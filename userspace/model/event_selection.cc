// Resolving a selection's window against a capture's clock (event_selection.h).
#include "model/event_selection.h"

namespace xtrace {

uint64_t TimeBound::Resolve(const ClockAnchor& start) const {
  if (kind == Kind::kSinceStart) return start.monotonic_ns + ns;
  // Before the capture started: the window opens at the start of the clock.
  if (ns + start.monotonic_ns < start.realtime_ns) return 0;
  return ns - start.realtime_ns + start.monotonic_ns;
}

MonotonicWindow ResolveWindow(const EventSelection& selection, const ClockAnchor& start) {
  MonotonicWindow window;
  if (selection.from) window.from_ns = selection.from->Resolve(start);
  if (selection.to) window.to_ns = selection.to->Resolve(start);
  return window;
}

}  // namespace xtrace
