// The benchmark's sections, in the order the table shows them. A new capture source adds
// its section here (one factory) and in AllBenchSections (one line).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "bench_context.h"

namespace xtrace::bench {

class BenchSection {
 public:
  virtual ~BenchSection() = default;
  // Short id for --only ("overhead", "untargeted", ...).
  virtual std::string_view id() const = 0;
  // Measures and adds rows to ctx.table. A failure becomes a row that says what failed.
  virtual void Run(BenchContext& ctx) = 0;
};

std::unique_ptr<BenchSection> MakeCallOverheadSection();   // 1: per-call capture overhead
std::unique_ptr<BenchSection> MakeUntargetedSection();     // 2: a process not traced
std::unique_ptr<BenchSection> MakeIttSection();            // 3: ITT ranges
std::unique_ptr<BenchSection> MakeCollectorSection();      // 4: collector throughput, drops, RSS
std::unique_ptr<BenchSection> MakeLogSizeSection();        // 5: bytes per launch in the log
std::unique_ptr<BenchSection> MakeConvertSection();        // 6: log -> Chrome JSON
std::unique_ptr<BenchSection> MakeReportSection();         // 7: log -> report tables
std::unique_ptr<BenchSection> MakeTorchAttachSection();    // 8: attach to a PyTorch training loop
std::unique_ptr<BenchSection> MakeDaemonSection();         // 9: daemon start/stop cycles, leaks
std::unique_ptr<BenchSection> MakePythonFramesSection();   // 10: Python frames per traced call

std::vector<std::unique_ptr<BenchSection>> AllBenchSections();

}  // namespace xtrace::bench
