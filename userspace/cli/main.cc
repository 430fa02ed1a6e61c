// xtrace's entry point: dispatches to a subcommand. Everything else lives in libraries.
// Adding a command is one entry in kCommands (its options are a table of their own, see
// cli/option_table.h).
#include <cstdio>
#include <cstring>
#include <string>

#include "base/version.h"
#include "capture/sources/own_level_zero_trial.h"
#include "cli/capture_command.h"
#include "cli/convert_command.h"
#include "cli/daemon_command.h"
#include "cli/env_command.h"
#include "cli/report_command.h"
#include "cli/slurm_command.h"

namespace {

int RunVersion(int, char**) {
  std::printf("xtrace %s\n", xtrace::kXtraceVersion);
  return 0;
}

struct Command {
  const char* name;
  const char* summary;  // what it does, for `xtrace --help`
  const char* example;  // "" for none
  int (*run)(int argc, char** argv);  // argv[0] is the command's name
};

constexpr Command kCommands[] = {
    {"attach", "trace running processes:", "sudo xtrace attach --pid 4242 -o run.capnp",
     xtrace::RunCaptureCommand},
    {"record", "launch a command and trace it:", "sudo xtrace record -o run.capnp -- ./app",
     xtrace::RunCaptureCommand},
    {"convert", "event log -> Chrome trace JSON:", "xtrace convert run.capnp -o run.json",
     xtrace::RunConvertCommand},
    {"report", "tables: calls, kernels, idle GPU:", "xtrace report run.capnp",
     xtrace::RunReportCommand},
    {"env", "lines that load the ITT collector:", "xtrace env --shell", xtrace::RunEnvCommand},
    {"daemon", "capture on request, rotated files:", "sudo xtrace daemon --output-dir /var/lib/xtrace",
     xtrace::RunDaemonCommand},
    {"ctl", "control a running daemon:", "sudo xtrace ctl start --system", xtrace::RunCtlCommand},
    {"slurm", "every rank of a Slurm job, as its user:", "xtrace slurm 4242 -d 10s -o trace",
     xtrace::RunSlurmCommand},
    {"version", "print the version", "", RunVersion},
};

std::string Help() {
  std::string help =
      "xtrace — trace Intel GPU (Level Zero) workloads and their ITT labels from outside the "
      "process,\nwith eBPF\n\nUsage: xtrace COMMAND [options]\n\nCommands:\n";
  for (const Command& c : kCommands) {
    char line[160];
    std::snprintf(line, sizeof(line), "  %-9s %-35s %s", c.name, c.summary, c.example);
    std::string text = line;
    text.erase(text.find_last_not_of(' ') + 1);
    help += text + "\n";
  }
  return help +
         "\n'xtrace COMMAND --help' describes each command. Open the JSON in "
         "https://ui.perfetto.dev\n(or chrome://tracing).\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help") ||
      !std::strcmp(argv[1], "help")) {
    std::fputs(Help().c_str(), argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string name = argv[1] == std::string("--version") ? "version" : argv[1];
  // Not a user's command: the child a capture tries its own Level Zero in.
  if (name == xtrace::kOwnLevelZeroTrialCommand) return xtrace::RunOwnLevelZeroTrial();
  for (const Command& c : kCommands)
    if (name == c.name) return c.run(argc - 1, argv + 1);
  std::fprintf(stderr, "xtrace: unknown command '%s'\nTry 'xtrace --help'.\n", argv[1]);
  return 2;
}
