// The capture's summary and progress text.
#include "capture/output/capture_report.h"

#include <sys/wait.h>

#include <cstdio>
#include <sstream>

#include "base/human_bytes.h"
#include "model/drop_remedy.h"

namespace xtrace {

std::vector<ProcessCaptureStats> PerProcessStats(
    const RecordTally& tally, const std::map<uint32_t, uint64_t>& drops,
    const std::function<std::string(uint32_t)>& comm_of) {
  std::map<uint32_t, ProcessCaptureStats> by_pid;
  for (const auto& [pid, sources] : tally.records) {
    ProcessCaptureStats& s = by_pid[pid];
    s.pid = pid;
    for (const auto& [source, n] : sources) s.records_by_source.emplace_back(source, n);
  }
  for (const auto& [pid, n] : drops) {
    if (!n) continue;
    by_pid[pid].pid = pid;
    by_pid[pid].dropped = n;
  }
  std::vector<ProcessCaptureStats> out;
  for (auto& [pid, s] : by_pid) {
    s.comm = comm_of(pid);
    out.push_back(std::move(s));
  }
  return out;
}

std::string ProgressLine(double seconds, uint64_t events, uint64_t bytes, uint64_t dropped) {
  char line[160];
  std::snprintf(line, sizeof(line), "xtrace: %.0f s, %llu events, %s written, %llu dropped ",
                seconds, static_cast<unsigned long long>(events), HumanBytes(bytes).c_str(),
                static_cast<unsigned long long>(dropped));
  return line;
}

std::string DropRemedy(uint64_t dropped, uint64_t in_itt_rings, const RingSizes& sizes) {
  const std::string bpf_now = " (now " + HumanBytes(sizes.bpf) + ")";
  const std::string itt_now =
      " (now " + HumanBytes(sizes.itt) + " a thread, for threads that make theirs from then on)";
  return DropRemedyText(dropped, in_itt_rings, {bpf_now, itt_now});
}

std::string DropsLine(uint64_t new_drops, uint64_t dropped, const RingSizes& sizes,
                      uint64_t new_in_itt_rings) {
  return std::to_string(new_drops) + " events dropped in the last second (" +
         std::to_string(dropped) + " in all); " + DropRemedy(new_drops, new_in_itt_rings, sizes);
}

std::string SummaryText(const CaptureReport& r, const SummaryFacts& f) {
  const CorrelatorStats& cs = f.correlator;
  const TimelineStats& ts = f.timeline;
  std::ostringstream s;
  char secs[32];
  std::snprintf(secs, sizeof(secs), "%.2f", f.seconds);
  s << "xtrace: captured " << r.launches << " kernel launches, " << r.kernel_creates
    << " kernel creations and " << cs.api_calls << " other Level Zero calls from " << cs.processes
    << (cs.processes == 1 ? " process" : " processes") << " (" << cs.threads
    << (cs.threads == 1 ? " thread" : " threads") << ") in " << secs << " s; " << r.events
    << " events written to " << f.where << " (" << HumanBytes(r.file_bytes) << ").";
  if (cs.launches_unnamed)
    s << " " << cs.launches_unnamed << " launches of " << cs.kernels_unnamed
      << " kernels created before the capture began are named kernel@0x<handle>.";
  if (cs.failed_calls) s << " " << cs.failed_calls << " calls returned an error code.";
  if (cs.unfinished_calls)
    s << " " << cs.unfinished_calls << (cs.unfinished_calls == 1 ? " call" : " calls")
      << " never returned (the thread or its process exited inside it): shown as unfinished.";
  if (cs.calls_at_stop)
    s << " " << cs.calls_at_stop << (cs.calls_at_stop == 1 ? " call was" : " calls were")
      << " still in progress when the capture stopped: shown as unfinished, to the stop.";
  if (ts.device_ops) {
    s << " Device: " << ts.device_ops << " operations, " << ts.measured
      << " timed by kernel timestamps, " << ts.device_ops - ts.measured << " estimated";
    if (ts.completion_unseen) s << " (" << ts.completion_unseen << " never seen complete)";
    s << ".";
  }
  if (!ts.unmatched_devices.empty()) {
    s << " " << ts.unmatched_devices.size()
      << (ts.unmatched_devices.size() == 1 ? " device" : " devices")
      << " of traced processes matched none of xtrace's own devices by UUID (";
    for (size_t i = 0; i < ts.unmatched_devices.size(); ++i)
      s << (i ? "; " : "") << ts.unmatched_devices[i];
    s << "): xtrace reads no clock of theirs, so their device times are estimated.";
  }
  if (ts.executions_recorded_before)
    s << " " << ts.executions_recorded_before
      << (ts.executions_recorded_before == 1 ? " execution" : " executions")
      << " of command lists recorded before the attach: their contents are unknown, so they show "
         "no device operations.";
  if (ts.unclassified_dropped)
    s << " " << ts.unclassified_dropped
      << " appends to command lists created before the capture were never seen to run.";
  if (ts.unknown_graph_replays)
    s << " " << ts.unknown_graph_replays
      << (ts.unknown_graph_replays == 1 ? " replay" : " replays")
      << " of graphs recorded before the capture began ran commands xtrace never saw: each is "
         "one operation named \"" << kUnknownGraphName << "\", its contents unknown.";
  if (ts.partly_known_graph_replays)
    s << " " << ts.partly_known_graph_replays
      << (ts.partly_known_graph_replays == 1 ? " replay" : " replays")
      << " of graphs whose recording began before the capture ran the commands recorded since, "
         "after one operation named \"" << kPartlyKnownGraphName << "\" for those before.";
  if (ts.timestamps_rejected)
    s << " " << ts.timestamps_rejected
      << " kernel timestamps disagreed with the host's bounds and were not used.";
  if (f.peak_rss_mib)
    s << " Tables: peak " << cs.peak_kernel_handles << " kernels, " << ts.peak_live_objects
      << " live Level Zero objects, " << ts.peak_pending_ops
      << " device operations in flight; collector peak RSS " << *f.peak_rss_mib << " MiB.";
  if (r.dropped)
    s << " " << r.dropped << " events dropped" << BySourceText(f.dropped_by_source) << "; "
      << DropRemedy(r.dropped, f.dropped_in_itt_rings, f.ring_bytes) << ".";
  else
    s << " No events dropped.";
  for (const std::string& note : f.notes) s << " " << note << ".";
  if (r.malformed)
    s << " " << r.malformed << " malformed records skipped (first: " << f.first_malformed << ").";
  if (r.command_exit_status) {
    const int status = *r.command_exit_status;
    if (WIFEXITED(status)) s << " The command exited with status " << WEXITSTATUS(status) << ".";
    else if (WIFSIGNALED(status)) s << " The command was killed by signal " << WTERMSIG(status) << ".";
  }
  s << f.source_sentences;
  s << f.holds_text;
  s << f.source_hold_sentences;
  // After every sentence of the paragraph: a sentence after them would end their last line.
  s << f.source_lines;
  if (!f.kernels_text.empty()) {
    std::string_view kernels = f.kernels_text;
    while (!kernels.empty() && kernels.back() == '\n') kernels.remove_suffix(1);
    s << "\nxtrace: " << kernels;
  }
  if (!r.per_process.empty()) {
    s << "\nxtrace: per process (records by source, dropped):";
    for (const ProcessCaptureStats& p : r.per_process) {
      s << "\n  pid " << p.pid << " (" << (p.comm.empty() ? "?" : p.comm) << "):";
      if (p.records_by_source.empty()) s << " no records,";
      for (const auto& [source, n] : p.records_by_source) s << " " << source << " " << n << ",";
      s << " dropped " << p.dropped;
    }
  }
  return s.str();
}

}  // namespace xtrace
