// `xtrace env`: the exact lines that make processes start with xtrace's ITT collector, for a
// shell, a systemd unit and a container spec.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"

namespace xtrace {

enum class EnvFormat { kAll, kShell, kSystemd, kDocker, kKubernetes };

// The text `xtrace env` prints for the collector at `collector` (an absolute path).
std::string EnvText(const std::string& collector, EnvFormat format);

// The collector that belongs to this xtrace: <exe dir>/../lib[/<multiarch>]/libxtrace_itt.so,
// checked to be a collector (it exports the probe site).
Result<std::string> FindCollector();

// argv[0] is "env". Returns the process exit code.
int RunEnvCommand(int argc, char** argv);

}  // namespace xtrace
