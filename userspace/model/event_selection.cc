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

LoggedProcess LoggedProcess::Of(const ProcessInfo& info, const StringTable& strings) {
  std::string_view name = strings.Get(info.comm);
  if (name.empty()) name = strings.Get(info.command_line);
  return {std::string(name), info.rank};
}

std::string HeldProcessesText(const std::map<uint32_t, LoggedProcess>& processes) {
  constexpr size_t kListed = 10;  // a system-wide capture holds hundreds
  if (processes.empty()) return "no traced process";
  std::string text = processes.size() == 1 ? "pid " : "pids ";
  size_t listed = 0;
  for (const auto& [pid, process] : processes) {
    if (listed == kListed) {
      text += ", and " + std::to_string(processes.size() - listed) + " more";
      break;
    }
    text += (listed++ ? ", " : "") + std::to_string(pid);
    std::string about = process.name;
    if (process.rank >= 0) about += (about.empty() ? "rank " : ", rank ") + std::to_string(process.rank);
    if (!about.empty()) text += " (" + about + ")";
  }
  return text;
}

}  // namespace xtrace
