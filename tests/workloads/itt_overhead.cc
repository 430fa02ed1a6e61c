// itt_overhead: what an ITT task begin/end pair costs a program, measured the way a real
// client calls (guarded calls through the API list, see itt_client.h). Run it without
// INTEL_LIBITTNOTIFY64 (no collector: the guards skip the calls), with it pointing at
// libxtrace_itt.so and no capture (the collector's calls reach the probe site's NOP), and
// under `xtrace record` (the fast path's ring, or the uprobe where the fast path is refused).
// Prints ns per pair; asserts nothing.
//
// Modes:
//   --pairs N            best of five runs of N pairs in a row
//   --burst N --gap-ms M runs of N pairs separated by M ms of sleep, for --pairs in all; the
//                        best run. Short runs are rarely preempted on a shared machine, and the
//                        gaps let a capture drain its rings, so every pair is recorded
//   --rate R --seconds S R pairs per second, paced each millisecond, for S seconds: prints the
//                        rate achieved (a capture then says whether it dropped any). A
//                        millisecond that ends late is not made up for by running flat out
//                        (a program's steady rate, not a backlog at 20x that rate): the rate
//                        printed is then below R, and the late milliseconds are counted
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "itt_client.h"
#include "workload_cli.h"
#include "ze_result.h"

namespace xtrace::workloads {
namespace {

namespace itt = xtrace::itt_client;

uint64_t Now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

void SleepUntil(uint64_t ns) {
  timespec ts{static_cast<time_t>(ns / 1'000'000'000ull), static_cast<long>(ns % 1'000'000'000ull)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

// `n` pairs in a row; ns per pair.
double Run(itt::Domain* domain, itt::StringHandle* name, uint64_t n) {
  const uint64_t start = Now();
  for (std::uint64_t i = 0; i < n; ++i) {
    itt::TaskBegin(domain, name);
    // Stands for the labelled work: the guards are evaluated afresh every time, as in a
    // real program, instead of being hoisted out of an empty loop.
    asm volatile("" ::: "memory");
    itt::TaskEnd(domain);
  }
  return double(Now() - start) / double(n);
}

int Main(int argc, char** argv) {
  set_program_name("itt_overhead");
  std::uint64_t pairs = 10'000'000, burst = 0, gap_ms = 0, rate = 0, seconds = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--pairs") {
      pairs = parse_count(arg, option_value(argc, argv, i), 1, 1'000'000'000);
    } else if (arg == "--burst") {
      burst = parse_count(arg, option_value(argc, argv, i), 1, 100'000'000);
    } else if (arg == "--gap-ms") {
      gap_ms = parse_count(arg, option_value(argc, argv, i), 0, 10'000);
    } else if (arg == "--rate") {
      rate = parse_count(arg, option_value(argc, argv, i), 1000, 100'000'000);
    } else if (arg == "--seconds") {
      seconds = parse_count(arg, option_value(argc, argv, i), 1, 3600);
    } else {
      usage_error(
          "usage: itt_overhead [--pairs N] [--burst N --gap-ms M] [--rate R --seconds S] "
          "(default 10000000 pairs, best of 5)");
    }
  }
  const std::string& why = itt::Initialize();
  const char* what = why.empty() ? "collector loaded" : "no collector";
  itt::Domain* domain = itt::DomainCreate("xt.overhead");
  itt::StringHandle* name = itt::StringHandleCreate("xt.pair");
  if (rate) {
    const uint64_t per_ms = rate / 1000, start = Now();
    uint64_t done = 0, late = 0, due = start;
    for (uint64_t ms = 1; ms <= (seconds ? seconds : 1) * 1000; ++ms) {
      for (uint64_t i = 0; i < per_ms; ++i) {
        itt::TaskBegin(domain, name);
        asm volatile("" ::: "memory");
        itt::TaskEnd(domain);
      }
      done += per_ms;
      due += 1'000'000;
      const uint64_t now = Now();
      if (now > due + 1'000'000) {
        ++late;
        due = now;  // from here on, not catching up
      }
      SleepUntil(due);
    }
    // Its own CPU time too: run under `xtrace record`, the capture's is the rest.
    timespec cpu{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
    std::printf("itt_overhead: %.0f pairs per second (%s, %llu pairs, cpu %.3f s, %llu ms late)\n",
                double(done) * 1e9 / double(Now() - start), what,
                static_cast<unsigned long long>(done), double(cpu.tv_sec) + double(cpu.tv_nsec) * 1e-9,
                static_cast<unsigned long long>(late));
    return 0;
  }
  double best = 1e30;
  if (burst) {
    for (uint64_t done = 0; done < pairs; done += burst) {
      best = std::min(best, Run(domain, name, burst));
      if (gap_ms) SleepUntil(Now() + gap_ms * 1'000'000);
    }
    std::printf("itt_overhead: %.2f ns per task begin/end pair (%s, %llu pairs, best burst of %llu)\n",
                best, what, static_cast<unsigned long long>(pairs),
                static_cast<unsigned long long>(burst));
    return 0;
  }
  // Best of five runs: the machine is shared, and the minimum is the cost itself.
  for (int run = 0; run < 5; ++run) best = std::min(best, Run(domain, name, pairs));
  std::printf("itt_overhead: %.2f ns per task begin/end pair (%s, %llu pairs, best of 5)\n", best,
              what, static_cast<unsigned long long>(pairs));
  return 0;
}

}  // namespace
}  // namespace xtrace::workloads

int main(int argc, char** argv) { return xtrace::workloads::Main(argc, argv); }
