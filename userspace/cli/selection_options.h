// The selection options `xtrace convert` and `xtrace report` share — --from/--to, --pid,
// --rank, --name — parsed in one place into an EventSelection (model/event_selection.h).
#pragma once

#include <string>

#include "base/status.h"
#include "cli/option_table.h"
#include "model/event_selection.h"

namespace xtrace {

// "12.5", "12.5s", "+12.5s", "500ms", "2m" (from the capture's start), or a wall-clock time
// "2026-11-23T11:35:12.5Z", "...+01:00" or without a zone (local time), date and time
// separated by 'T' or a space.
Result<TimeBound> ParseTimeBound(const std::string& option, const std::string& text);

// Each parser adds what `text` says to `selection`; errors are one line naming the option.
Status ParseWindowBound(const std::string& option, const std::string& text, EventSelection& selection);
Status ParsePidList(const std::string& option, const std::string& text, EventSelection& selection);
Status ParseRankList(const std::string& option, const std::string& text, EventSelection& selection);
Status ParseNamePattern(const std::string& option, const std::string& text, EventSelection& selection);

// The window must not be empty when both ends are comparable (both from the start, or both
// wall-clock).
Status CheckWindow(const EventSelection& selection);

// The selection as options, as typed: "--from 12.5 --pid 42,43 --name 'gemm'".
std::string DescribeSelection(const EventSelection& selection);

// Option-table entries (group "SELECTION") for --from, --to, --pid, --rank and --name; the
// help says what `what` (e.g. "events", "rows") each keeps.
OptionTable SelectionOptionTable(EventSelection& selection);

}  // namespace xtrace
