// What part of a capture a command looks at: a time window, processes, ranks and a name
// pattern. `xtrace report` and `xtrace convert` take the same options (cli/selection_options.h
// parses them) and resolve the window against each log's clock anchor.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>

#include "model/event.h"
#include "model/log_header.h"
#include "model/string_table.h"

namespace xtrace {

// One end of a time window as the user gave it: seconds from the capture's start ("12.5",
// "+12.5s", "500ms") or a wall-clock time ("2026-11-23T11:35:12.5Z").
struct TimeBound {
  enum class Kind { kSinceStart, kRealtime };
  Kind kind = Kind::kSinceStart;
  uint64_t ns = 0;  // kSinceStart: ns after the start; kRealtime: CLOCK_REALTIME ns

  // CLOCK_MONOTONIC ns on the clock of the capture that started at `start` (wall-clock times
  // map through the anchor's CLOCK_REALTIME reading).
  uint64_t Resolve(const ClockAnchor& start) const;
};

struct EventSelection {
  std::optional<TimeBound> from;  // events that end at or after it
  std::optional<TimeBound> to;    // events that start before it
  std::set<uint32_t> pids;        // only these processes (empty: all)
  std::set<int32_t> ranks;        // only processes of these ranks (empty: all)
  std::optional<std::regex> name; // only spans and instants whose name matches (searched)
  std::string name_pattern;       // the pattern as typed, for messages
  std::string from_text, to_text; // the window's ends as typed, for messages

  bool has_window() const { return from || to; }
  bool empty() const { return !has_window() && pids.empty() && ranks.empty() && !name; }
};

// [from_ns, to_ns) in CLOCK_MONOTONIC ns of a capture started at `start`; open ends are 0 and
// UINT64_MAX.
struct MonotonicWindow {
  uint64_t from_ns = 0;
  uint64_t to_ns = UINT64_MAX;
};
MonotonicWindow ResolveWindow(const EventSelection& selection, const ClockAnchor& start);

// A traced process a log holds, as a selection that kept nothing lists it: what the user could
// have selected instead.
struct LoggedProcess {
  std::string name;  // its command (after its last exec), else its command line
  int32_t rank = -1;

  static LoggedProcess Of(const ProcessInfo& info, const StringTable& strings);
};

// "pid 42 (python3, rank 0)", "pids 42 (python3), 43 (python3), and 120 more" (the first ten
// by pid), "no traced process".
std::string HeldProcessesText(const std::map<uint32_t, LoggedProcess>& processes);

}  // namespace xtrace
