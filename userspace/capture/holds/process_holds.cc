// Releasing held processes and counting what the holds cost them.
#include "capture/holds/process_holds.h"

#include <algorithm>
#include <cstdio>

#include "xtrace/hold.h"

namespace xtrace {
namespace {

std::string Ms(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f ms", ns / 1e6);
  return text;
}

std::string Count(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

Result<std::unique_ptr<ProcessHolds>> ProcessHolds::Start(int held_map_fd, uint64_t bound_ns,
                                                          uint64_t query_wait_ns) {
  HoldGuardian::Options options;
  options.bound_ns = bound_ns;
  options.query_wait_ns = query_wait_ns;
  auto guardian = HoldGuardian::Start(held_map_fd, options);
  if (!guardian.ok()) return guardian.status();
  HoldGuardian* g = guardian->get();
  auto holds = std::make_unique<ProcessHolds>([g](uint32_t pid, uint64_t since_ns, bool at_exec) {
    return g->ReleaseIf(pid, since_ns, at_exec ? XT_HOLD_EXEC : XT_HOLD_LIBRARY);
  });
  holds->guardian_ = std::move(*guardian);
  return holds;
}

void ProcessHolds::Held(uint32_t pid, uint32_t tid, HoldCause cause, uint64_t since_ns) {
  ++(cause == HoldCause::kExec ? stats_.at_exec : stats_.at_library);
  // BPF holds a process once at a time (its entry in `held` must be gone for another), so a
  // pid pending already was released by the guardian and held again: the newer hold counts.
  pending_[pid] = Pending{since_ns, tid, cause};
}

void ProcessHolds::ReleaseAll(uint64_t now_ns) {
  for (const auto& [pid, hold] : pending_) {
    // Only that hold: the bound may have released it and the process be held again since.
    if (!resume_(pid, hold.since_ns, hold.cause == HoldCause::kExec)) continue;
    const uint64_t held_ns = now_ns > hold.since_ns ? now_ns - hold.since_ns : 0;
    if (released_)
      released_(XtraceHold{.pid = pid, .tid = hold.tid, .start_ns = hold.since_ns,
                           .end_ns = hold.since_ns + held_ns, .process_end_ns = hold.since_ns + held_ns,
                           .cause = hold.cause});
    ++stats_.released;
    stats_.total_ns += held_ns;
    stats_.max_ns = std::max(stats_.max_ns, held_ns);
  }
  pending_.clear();
}

HoldStats ProcessHolds::Stats(uint64_t missed, uint64_t parents_continued,
                              uint64_t terminal_jobs) const {
  HoldStats s = stats_;
  s.missed = missed;
  s.parents_continued = parents_continued;
  s.terminal_jobs = terminal_jobs;
  if (guardian_) s.released_by_bound = guardian_->tally().released_by_bound.load();
  return s;
}

std::string ProcessHolds::Summary(const std::array<uint64_t, XT_CNT_MAX>& counters) const {
  return HoldSummary(Stats(counters[XT_CNT_HOLD_MISSED], counters[XT_CNT_PARENT_CONTINUED],
                           counters[XT_CNT_HOLD_TERMINAL_JOB]));
}

HoldCause HoldCauseOf(const xt_record_header& hdr) {
  if (hdr.type == XT_REC_PROCESS_EXEC) return HoldCause::kExec;
  if (hdr.flags & XT_FLAG_TABLE_GETTER) return HoldCause::kTableGetter;
  if (hdr.flags & XT_FLAG_ZE_INIT) return HoldCause::kLevelZeroInit;
  return HoldCause::kLibraryLoad;
}

std::string HoldSummary(const HoldStats& s) {
  std::string text;  // each sentence starts with a space, as the summary joins them
  if (s.taken()) {
    text += " ";
    if (s.at_exec) text += Count(s.at_exec, "process start", "process starts");
    if (s.at_exec && s.at_library) text += " and ";
    if (s.at_library) text += Count(s.at_library, "library load", "library loads");
    text += " held";
    if (s.released)
      text += " " + Ms(s.total_ns / s.released) + " on average (max " + Ms(s.max_ns) + ")";
    text += " until probed";
    if (s.released_by_bound)
      text += "; " + std::to_string(s.released_by_bound) + " released by the bound (--hold-max)";
    text += ".";
    if (s.parents_continued)
      text += " " + Count(s.parents_continued, "parent", "parents") +
              " that stopped with a held child (as nsenter and sudo do) continued with it.";
  }
  if (s.missed)
    text += " " + Count(s.missed, "process was", "processes were") +
            " not held (more than " + std::to_string(XT_MAX_HELD) +
            " held at once, or the stop was refused): their first calls may be missing.";
  if (s.terminal_jobs)
    text += " " + Count(s.terminal_jobs, "hold was", "holds were") +
            " not taken in programs run as jobs of a terminal's shell, which would report the "
            "stop as the job's: their first calls may be missing (--hold-terminal-jobs holds "
            "them).";
  return text;
}

}  // namespace xtrace
