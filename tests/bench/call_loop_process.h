// ze_call_loop (the benchmark's launch-bound target) run as a child process on the simulated
// GPU, driven line by line: "run N calls, how long did they take?".
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "bench_context.h"
#include "child_process.h"

namespace xtrace::bench {

struct PaceResult {
  uint64_t calls = 0;
  double seconds = 0;
  double worst_late_ms = 0;  // the generator's worst lag behind its schedule
  double rate() const { return seconds > 0 ? double(calls) / seconds : 0; }
};

class CallLoopProcess {
 public:
  // `name`, if given, becomes the process's name (what --comm selects).
  static Result<std::unique_ptr<CallLoopProcess>> Start(const BenchContext& ctx,
                                                        const std::string& name = "");

  int pid() const { return child_.pid(); }
  // The loader as this process maps it, openable from here (for attaching probes).
  const std::string& loader_path() const { return loader_path_; }

  // Runs `n` calls of `call` ("launch", "copy", "sync", "ioctl", "syscall"); the time per
  // call in ns, as CPU time of the calling thread (kernel time, so traps and BPF programs,
  // included; time other processes had the CPU excluded: the machine is shared).
  Result<double> NsPerCall(const std::string& call, uint64_t n);

  // Starts paced launching (pace R S T) without waiting; FinishPace waits for its result.
  bool StartPace(double rate, double seconds, unsigned threads);
  Result<PaceResult> FinishPace(double seconds);

 private:
  CallLoopProcess(const BenchContext& ctx, const std::string& name);
  ChildProcess child_;
  std::string loader_path_;
};

}  // namespace xtrace::bench
