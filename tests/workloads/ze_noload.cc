// ze_noload: a process that never loads Level Zero (not linked to it, never dlopens it), for
// tests of how the tracer treats a target without libze_loader.so.1.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string_view>

#include "control_signals.h"
#include "workload_cli.h"
#include "ze_result.h"

namespace {

constexpr const char kHelp[] = R"(usage: ze_noload [--seconds S]

Prints "ready <pid>" and then sleeps until SIGTERM, SIGINT or SIGUSR1 arrives, or until
S seconds (decimal, > 0) have passed if --seconds is given; then prints "exit" and exits 0.
It never loads Level Zero.

Example:
  build/bin/ze_noload --seconds 5
)";

}  // namespace

int main(int argc, char** argv) {
  using namespace xtrace::workloads;
  block_control_signals();
  set_program_name(argv[0]);
  std::optional<double> seconds;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kHelp, stdout);
      return 0;
    } else if (arg == "--seconds") {
      seconds = parse_seconds(arg, option_value(argc, argv, i), 7 * 24 * 3600.0);
    } else {
      usage_error("unknown argument \"" + std::string(arg) + "\"");
    }
  }
  std::printf("ready %d\n", static_cast<int>(::getpid()));
  std::fflush(stdout);
  std::optional<std::chrono::nanoseconds> timeout;
  if (seconds)
    timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(*seconds));
  // Any control signal ends the wait: this program has no rounds to run.
  wait_control_signal(timeout);
  std::puts("exit");
  std::fflush(stdout);
  return 0;
}
