// The registry of benchmark sections, in table order.
#include "bench_sections.h"

namespace xtrace::bench {

std::vector<std::unique_ptr<BenchSection>> AllBenchSections() {
  std::vector<std::unique_ptr<BenchSection>> sections;
  sections.push_back(MakeCallOverheadSection());
  sections.push_back(MakeUntargetedSection());
  sections.push_back(MakeIttSection());
  sections.push_back(MakeCollectorSection());
  sections.push_back(MakeLogSizeSection());
  sections.push_back(MakeConvertSection());
  sections.push_back(MakeReportSection());
  sections.push_back(MakeTorchAttachSection());
  sections.push_back(MakeDaemonSection());
  sections.push_back(MakePythonFramesSection());
  return sections;
}

}  // namespace xtrace::bench
