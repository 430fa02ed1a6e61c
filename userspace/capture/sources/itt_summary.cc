// Summary sentences for ITT labels and collection control.
#include "capture/sources/itt_summary.h"

#include <sstream>

namespace xtrace {

std::string SummarizeItt(const IttStats& s, uint64_t paused_hits) {
  std::ostringstream out;
  if (s.tasks || s.markers)
    out << " ITT: " << s.tasks << (s.tasks == 1 ? " task" : " tasks") << " and " << s.markers
        << (s.markers == 1 ? " marker." : " markers.");
  const uint64_t unbalanced = s.unfinished + s.ends_without_begin + s.closed_by_outer;
  if (unbalanced) {
    out << " Unbalanced ITT input, kept and flagged in the trace:";
    const char* sep = " ";
    if (s.unfinished) {
      out << sep << s.unfinished << " never ended (cut where the process or its collection ended)";
      sep = ", ";
    }
    if (s.ends_without_begin) {
      out << sep << s.ends_without_begin << " ended without a begin (begun before the capture, a pause, or on another thread)";
      sep = ", ";
    }
    if (s.closed_by_outer) out << sep << s.closed_by_outer << " closed with an enclosing task";
    out << ".";
  }
  if (s.unknown_handles)
    out << " " << s.unknown_handles << " ITT handles arrived without their names (named by address).";
  if (s.too_deep)
    out << " " << s.too_deep << " ITT begins were ignored: too many open at once.";
  if (s.pauses || s.resumes || s.detaches) {
    out << " Collection was paused " << s.pauses << (s.pauses == 1 ? " time" : " times")
        << ", resumed " << s.resumes << (s.resumes == 1 ? " time" : " times");
    if (s.detaches) out << " and detached " << s.detaches << (s.detaches == 1 ? " time" : " times");
    out << "; " << paused_hits << " probe hits were skipped while collection was off.";
  }
  return out.str();
}

}  // namespace xtrace
