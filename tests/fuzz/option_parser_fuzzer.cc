// Fuzzes the capture command line: the input is argv, arguments separated by NUL bytes, fed
// to the option parsers the way a command's loop feeds them, and every argument also to the
// number parsers (durations, sizes, pids) directly. An option either parses, is not the
// parser's, or yields an error message; nothing else may happen.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/capture_options.h"

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
  argv.push_back(nullptr);
  const int argc = static_cast<int>(args.size());

  xtrace::CaptureOptions options;
  for (int i = 0; i < argc; ++i) {
    std::string error;
    auto match = xtrace::ParseTargetOption(argc, argv.data(), i, options, &error);
    if (match == xtrace::OptionMatch::kNotMine)
      match = xtrace::ParseTuningOption(argc, argv.data(), i, options, &error);
    if (match == xtrace::OptionMatch::kError && error.empty()) __builtin_trap();  // unexplained
    if (i >= argc) __builtin_trap();  // a parser stepped past the last argument
  }
  for (const std::string& a : args) {
    (void)xtrace::ParseDuration("--duration", a);
    (void)xtrace::ParseSize("--buffer-size", a);
    (void)xtrace::ParsePid("--pid", a);
  }
  return 0;
}
