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
std::vector<uint32_t> SelectRunningProcesses(const CaptureScope& scope,
                                             const std::set<uint32_t>& followed,
                                             uint32_t self_pid);

}  // namespace xtrace
