// `xtrace report`: summary tables (host calls, device operations, submission latency,
// ranges, GPU utilization and idle causes) from one or many event logs.
#pragma once

namespace xtrace {

// argv[0] is "report". Returns the process exit status (see --help).
int RunReportCommand(int argc, char** argv);

}  // namespace xtrace
