// The processes already running when a capture starts that its scope selects: children of
// the given processes (by their parent chain in /proc), and with --system or --comm those
// whose name and cgroup match.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "capture/discovery/capture_scope.h"

namespace xtrace {

// Pids in /proc that `scope` selects, leaving out `followed` (already tracked) and `self_pid`.
// With --user, a child of a followed process that is somebody else's is not selected; it goes
// into `not_the_owners` (when given), to be said: it is one the scope took in. (Another user's
// process found by --system or --comm is not: --user puts it out of the scope.)
std::vector<uint32_t> SelectRunningProcesses(const CaptureScope& scope,
                                             const std::set<uint32_t>& followed,
                                             uint32_t self_pid,
                                             std::vector<uint32_t>* not_the_owners = nullptr);

}  // namespace xtrace
