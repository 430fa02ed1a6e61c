// xtrace's entry point: dispatches to a subcommand. Everything else lives in libraries.
#include <cstdio>
#include <cstring>
#include <string>

#include "base/version.h"
#include "cli/capture_command.h"
#include "cli/convert_command.h"
#include "cli/daemon_command.h"
#include "cli/env_command.h"
#include "cli/report_command.h"

namespace {

constexpr const char* kHelp = R"(xtrace — trace Intel GPU (Level Zero) workloads and their ITT labels from outside the process,
with eBPF

Usage: xtrace COMMAND [options]

Commands:
  attach    trace running processes:           sudo xtrace attach --pid 4242 -o run.capnp
  record    launch a command and trace it:     sudo xtrace record -o run.capnp -- ./app
            or the whole machine:              sudo xtrace record --system -o node.capnp
  convert   event log -> Chrome trace JSON:    xtrace convert run.capnp -o run.json
  report    tables: calls, kernels, idle GPU:  xtrace report run.capnp
  env       lines that load the ITT collector:  xtrace env --shell
  daemon    capture on request, rotated files: sudo xtrace daemon --output-dir /var/lib/xtrace
  ctl       control a running daemon:          sudo xtrace ctl start --system
  version   print the version

'xtrace COMMAND --help' describes each command. Open the JSON in https://ui.perfetto.dev
(or chrome://tracing).
)";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help") ||
      !std::strcmp(argv[1], "help")) {
    std::fputs(kHelp, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  if (cmd == "attach" || cmd == "record") return xtrace::RunCaptureCommand(argc - 1, argv + 1);
  if (cmd == "convert") return xtrace::RunConvertCommand(argc - 1, argv + 1);
  if (cmd == "report") return xtrace::RunReportCommand(argc - 1, argv + 1);
  if (cmd == "env") return xtrace::RunEnvCommand(argc - 1, argv + 1);
  if (cmd == "daemon") return xtrace::RunDaemonCommand(argc - 1, argv + 1);
  if (cmd == "ctl") return xtrace::RunCtlCommand(argc - 1, argv + 1);
  if (cmd == "version" || cmd == "--version") {
    std::printf("xtrace %s\n", xtrace::kXtraceVersion);
    return 0;
  }
  std::fprintf(stderr, "xtrace: unknown command '%s'\nTry 'xtrace --help'.\n", cmd.c_str());
  return 2;
}
