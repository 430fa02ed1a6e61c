// The kernel-driver part of the capture summary: one sentence per DRM device (submissions,
// bytes created, waits) and what the DRM probes could not see.
#pragma once

#include <string>

#include "capture/bpf/capture_maps.h"
#include "correlate/drm_correlator.h"

namespace xtrace {

// Empty when no DRM ioctl was captured and nothing was missed; otherwise sentences, each on
// a line of its own starting "xtrace: ", to follow the summary paragraph.
std::string DrmSummary(const DrmCorrelator& drm, const Counters& counters);

}  // namespace xtrace
