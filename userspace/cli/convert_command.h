// `xtrace convert`: turns an event log into Chrome trace JSON for ui.perfetto.dev.
#pragma once

namespace xtrace {

// argv[0] is "convert". Returns the process exit status (see --help).
int RunConvertCommand(int argc, char** argv);

}  // namespace xtrace
