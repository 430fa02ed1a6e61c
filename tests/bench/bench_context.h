// What every benchmark section is given: the options of this run, where the programs under
// test are, a scratch directory, the table to add rows to, and a progress line printer.
#pragma once

#include <cstdint>
#include <string>

#include "bench_table.h"

namespace xtrace::bench {

struct BenchOptions {
  bool quick = false;                // fewer repetitions and smaller sizes (a smoke run)
  int repetitions = 5;               // timed runs per configuration (the minimum is kept)
  double rate_seconds = 5;           // how long each rate of the zero-drop ladder runs
  double sustain_seconds = 0;        // if > 0: also hold 1M events/s this long
  double soak_seconds = 20;          // collector RSS watched over a capture this long
  int daemon_cycles = 20;            // the daemon section's start/stop cycles (--daemon-cycles)
  uint64_t convert_events = 10'000'000;  // events in the large convert and report input
  uint64_t small_events = 1'000'000;     // the small input, whose figures the large one's are held to
  uint64_t baseline_events = 250'000;    // events the DOM baseline converts
  std::string only;                  // run only the sections whose id contains this
  std::string work_dir;              // scratch files; removed at the end unless keep
  bool keep = false;
};

// Programs of this build, set from CMake (compile definitions).
struct BenchPaths {
  std::string xtrace;
  std::string call_loop;
  std::string ze_workload;
  std::string simze;
  std::string dom_baseline;
  std::string itt_overhead;   // tests/workloads: ITT begin/end pairs, timed
  std::string itt_collector;  // libxtrace_itt.so
  std::string torch_loop;     // tests/workloads/torch_train_loop.py
  std::string py_call_loop;   // tests/bench/py_call_loop.py
  std::string workloads_dir;  // tests/workloads (py_call_loop.py imports ze_python_workload)
  std::string dnnl_workload;  // tests/workloads: oneDNN primitives (--tiny-loop: ITT tasks at full rate)
  // "ZE_ENABLE_ALT_DRIVERS=<simze>" for children that use Level Zero.
  std::string simze_env() const { return "ZE_ENABLE_ALT_DRIVERS=" + simze; }
};

struct BenchContext {
  BenchOptions options;
  BenchPaths paths;
  BenchTable table;
  std::string Scratch(const std::string& name) const { return options.work_dir + "/" + name; }
  // One progress line on stderr (the table goes to stdout).
  void Say(const std::string& line) const;
};

}  // namespace xtrace::bench
