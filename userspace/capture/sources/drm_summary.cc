// Summary sentences of the DRM view; see drm_summary.h.
#include "capture/sources/drm_summary.h"

#include <sstream>

namespace xtrace {
namespace {

std::string Plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::string DrmSummary(const DrmCorrelator& drm, const Counters& counters) {
  std::ostringstream s;
  for (const DrmDeviceStats& d : drm.device_stats()) {
    s << "\nxtrace: DRM " << d.device << ": " << Plural(d.submissions, "submission", "submissions");
    if (d.submissions && drm.link_host_calls())
      s << " (" << d.linked_submissions << " issued inside a traced API call)";
    s << ", " << Plural(d.bytes_created, "byte", "bytes") << " created, "
      << Plural(d.waits, "wait", "waits") << "; " << Plural(d.ioctls, "ioctl", "ioctls")
      << " in all.";
  }
  if (drm.fences())
    s << "\nxtrace: " << Plural(drm.fences(), "GPU fence", "GPU fences") << " signaled.";
  if (const uint64_t n = counters[XT_CNT_DRM_UNPAIRED_EXIT])
    s << "\nxtrace: " << Plural(n, "DRM ioctl was", "DRM ioctls were")
      << " already running when the capture began and " << (n == 1 ? "is" : "are") << " not shown.";
  if (const uint64_t n = counters[XT_CNT_DRM_FENCE_UNWATCHED])
    s << "\nxtrace: " << Plural(n, "GPU fence", "GPU fences")
      << " could not be followed (too many in flight).";
  return s.str();
}

}  // namespace xtrace
