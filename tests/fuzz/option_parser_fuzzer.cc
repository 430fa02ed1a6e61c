// Fuzzes the capture command line: the input is argv, arguments separated by NUL bytes, parsed
// by the capture option table the way attach parses it (both ways positionals may sit), and
// every argument also fed to the number parsers (durations, sizes, pids) directly. A command
// line either parses or yields a one-line error naming what was wrong; nothing else may happen.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/capture_options.h"
#include "cli/option_table.h"

namespace {

// More arguments than any real command line needs; keeps each run short.
constexpr size_t kMaxArgs = 64;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args(1);
  for (size_t i = 0; i < size && args.size() <= kMaxArgs; ++i) {
    if (data[i] == 0) args.emplace_back();
    else args.back().push_back(static_cast<char>(data[i]));
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());

  for (const auto positionals : {xtrace::Positionals::kAnywhere, xtrace::Positionals::kEndOptions}) {
    xtrace::CaptureOptions options;
    const xtrace::OptionTable table = xtrace::Concat(xtrace::CaptureOptionTable(options),
                                                     xtrace::LocalOutputOptionTable(options));
    auto parsed = xtrace::ParseCommandLine(table, std::span<char* const>(argv), positionals);
    if (!parsed.ok()) {
      const std::string error = parsed.status().message();
      if (error.empty()) __builtin_trap();  // refused without saying why
      continue;
    }
  }
  for (const std::string& a : args) {
    (void)xtrace::ParseDuration("--duration", a);
    (void)xtrace::ParseSize("--buffer-size", a);
    (void)xtrace::ParsePid("--pid", a);
  }
  return 0;
}
