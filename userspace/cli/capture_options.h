// The options of every command that starts a capture (attach, record, daemon and ctl start):
// which processes (TARGET, see capture/discovery/capture_scope.h for how they combine), which sources,
// when to stop, and the advanced knobs. One table, so that these commands cannot drift apart;
// every CaptureOptions field it sets travels to the daemon (daemon/xtrace_control.capnp).
#pragma once

#include <vector>

#include "capture/capture_options.h"
#include "cli/option_table.h"

namespace xtrace {

// The capture options, applying to `options`.
OptionTable CaptureOptionTable(CaptureOptions& options);

// -o and -q: the file attach and record write, and their own stderr. Not for the daemon,
// which chooses its output files and its stderr once, for every capture.
OptionTable LocalOutputOptionTable(CaptureOptions& options);

// The --help sections of the capture options, in order, with their notes.
std::vector<HelpGroup> CaptureHelpGroups();

// True when some TARGET option was given.
bool HasTarget(const CaptureOptions& options);

}  // namespace xtrace
