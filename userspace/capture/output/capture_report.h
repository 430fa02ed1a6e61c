// What a capture says about itself: the report RunCapture returns, the per-process counts of
// the summary, the closing paragraph, and the progress lines printed while it runs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capture/output/log_sink.h"
#include "correlate/correlator.h"
#include "correlate/device_timeline.h"
#include "model/log_header.h"
#include "xtrace/itt_ring.h"

namespace xtrace {

struct CaptureReport {
  uint64_t events = 0;
  uint64_t launches = 0;
  uint64_t kernel_creates = 0;
  uint64_t itt_tasks = 0;     // ITT spans (tasks, regions, frames, PyTorch ranges)
  uint64_t itt_markers = 0;
  uint64_t dropped = 0;
  uint64_t malformed = 0;
  uint64_t file_bytes = 0;
  uint32_t processes_attached = 0;
  uint32_t files_written = 0;
  std::vector<ProcessCaptureStats> per_process;
  std::optional<int> command_exit_status;  // record: how the command ended
  std::string summary_text;                // the paragraph printed at the end
};

// Records by source and ring drops per process, in pid order; `comm_of` names each pid.
std::vector<ProcessCaptureStats> PerProcessStats(const RecordTally& tally,
                                                 const std::map<uint32_t, uint64_t>& drops,
                                                 const std::function<std::string(uint32_t)>& comm_of);

// The status line a terminal shows while capturing (rewritten in place each second).
std::string ProgressLine(double seconds, uint64_t events, uint64_t bytes, uint64_t dropped);

// The sizes a drop's remedy names: the BPF ring's (--buffer-size) and each ITT fast-path
// ring's (--itt-ring-size).
struct RingSizes {
  uint64_t bpf = 0;
  uint64_t itt = XT_ITT_RING_BYTES;
};

// What to do about `dropped` records, `in_itt_rings` of which the programs' own ITT rings lost
// (the BPF ring lost the rest): "raise --buffer-size (now 16.0 MiB)", what fits losses in
// those rings, or both.
std::string DropRemedy(uint64_t dropped, uint64_t in_itt_rings, const RingSizes& sizes);

// Said as soon as records are lost: how many since the last line, and what to do.
std::string DropsLine(uint64_t new_drops, uint64_t dropped, const RingSizes& sizes,
                      uint64_t new_in_itt_rings = 0);

// What the closing paragraph is made of besides the report itself.
struct SummaryFacts {
  double seconds = 0;
  std::string where;  // the file written, or "N files in DIR"
  CorrelatorStats correlator;
  TimelineStats timeline;
  RingSizes ring_bytes;
  uint64_t dropped_in_itt_rings = 0;  // of the report's dropped (XT_CNT_DROPPED_ITT_RINGS)
  std::string first_malformed;
  std::optional<long> peak_rss_mib;  // with --verbose: the table sizes and the collector's RSS
  // The probe sources' parts (ProbeSource::Summary), in the order the sources load: the
  // sentences join the paragraph, the lines follow it.
  std::string source_sentences;
  std::string source_lines;
  std::string holds_text;            // HoldSummary
  std::string source_hold_sentences;  // what the holds the sources served came to
  std::string kernels_text;          // report::TopKernels::Format: the top kernels, or ""
  std::vector<std::pair<std::string, uint64_t>> dropped_by_source;  // ("DRM", 3), ... if any
  std::vector<std::string> notes;  // what the sources could not trace (LogSummary::notes)
};

// The paragraph printed when the capture ends (also CaptureReport::summary_text).
std::string SummaryText(const CaptureReport& report, const SummaryFacts& facts);

}  // namespace xtrace
