// tbb_workload: runs TBB algorithms (Debian's libtbb) — parallel_for then parallel_reduce,
// a given number of times each, from the main thread — so tests can check the ITT tasks TBB
// itself emits ("tbb" domain). Checks its own results, so the work is really done.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <cstdio>
#include <functional>
#include <string_view>
#include <vector>

#include "workload_cli.h"
#include "ze_result.h"

namespace xtrace::workloads {
namespace {

constexpr const char kHelp[] = R"(usage: tbb_workload [--iterations N]

N times (default 3, 1..10000): tbb::parallel_for doubling 2^20 doubles, then
tbb::parallel_reduce summing them. Output: "parallel_for=N parallel_reduce=N" (exit 1 if a
sum is wrong).
)";

int Main(int argc, char** argv) {
  set_program_name("tbb_workload");
  std::uint64_t iterations = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kHelp, stdout);
      return 0;
    }
    if (arg == "--iterations") {
      iterations = parse_count(arg, option_value(argc, argv, i), 1, 10'000);
    } else {
      usage_error("unknown argument \"" + std::string(arg) + "\"");
    }
  }
  constexpr size_t kSize = 1 << 20;
  std::vector<double> values(kSize, 1.0);
  for (std::uint64_t i = 0; i < iterations; ++i) {
    std::fill(values.begin(), values.end(), 1.0);
    tbb::parallel_for(tbb::blocked_range<size_t>(0, kSize), [&](const tbb::blocked_range<size_t>& r) {
      for (size_t k = r.begin(); k != r.end(); ++k) values[k] *= 2.0;
    });
    const double sum = tbb::parallel_reduce(
        tbb::blocked_range<size_t>(0, kSize), 0.0,
        [&](const tbb::blocked_range<size_t>& r, double acc) {
          for (size_t k = r.begin(); k != r.end(); ++k) acc += values[k];
          return acc;
        },
        std::plus<double>());
    if (sum != 2.0 * kSize) {
      std::fprintf(stderr, "tbb_workload: sum %f, expected %f\n", sum, 2.0 * kSize);
      return 1;
    }
  }
  const auto n = static_cast<unsigned long long>(iterations);
  std::printf("parallel_for=%llu parallel_reduce=%llu\n", n, n);
  return 0;
}

}  // namespace
}  // namespace xtrace::workloads

int main(int argc, char** argv) { return xtrace::workloads::Main(argc, argv); }
