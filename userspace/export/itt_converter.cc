// ITT events -> Chrome trace events; see itt_converter.h.
#include "export/itt_converter.h"

namespace xtrace {
namespace {

// Kineto's category for ranges a program labels itself (record_function, ITT in PyTorch).
constexpr std::string_view kIttCategory = "user_annotation";
// xtrace's own collection events.
constexpr std::string_view kXtraceCategory = "xtrace";

std::string_view KindName(IttTaskKind kind) {
  switch (kind) {
    case IttTaskKind::kTask: return "task";
    case IttTaskKind::kOverlappedTask: return "overlapped_task";
    case IttTaskKind::kRegion: return "region";
    case IttTaskKind::kFrame: return "frame";
  }
  return "task";
}

TraceWriter::InstantScope InstantScopeOf(IttMarkerScope scope) {
  switch (scope) {
    case IttMarkerScope::kGlobal: return TraceWriter::InstantScope::kGlobal;
    case IttMarkerScope::kProcess: return TraceWriter::InstantScope::kProcess;
    default: return TraceWriter::InstantScope::kThread;
  }
}

}  // namespace

void IttEventWriter::BeginArgs(StringId domain) {
  args_.clear();
  const std::string_view name = strings_.Get(domain);
  if (!name.empty()) args_.push_back(TraceArg::String("domain", name));
}

void IttEventWriter::Write(const IttTask& e) {
  BeginArgs(e.domain);
  if (e.begin_missing) {
    // Nothing to draw as a span: mark where the unmatched end happened.
    args_.push_back(TraceArg::String("kind", KindName(e.kind)));
    if (e.kind != IttTaskKind::kTask) args_.push_back(TraceArg::Hex("itt_id", e.id));
    out_.Instant("end without begin", kIttCategory, e.pid, e.tid, e.start_ns,
                 TraceWriter::InstantScope::kThread, args_);
    return;
  }
  if (e.unfinished) args_.push_back(TraceArg::Bool("unfinished", true));
  if (e.closed_by_outer) args_.push_back(TraceArg::Bool("closed_by_outer", true));
  if (e.name_truncated) args_.push_back(TraceArg::Bool("name_truncated", true));
  std::string_view name = strings_.Get(e.name);
  const uint64_t dur = e.end_ns - e.start_ns;
  if (e.kind == IttTaskKind::kTask) {
    out_.Complete(name, kIttCategory, e.pid, e.tid, e.start_ns, dur, args_);
    return;
  }
  args_.push_back(TraceArg::String("kind", KindName(e.kind)));
  args_.push_back(TraceArg::Hex("itt_id", e.id));
  if (e.end_tid != e.tid) args_.push_back(TraceArg::Uint("end_tid", e.end_tid));
  if (name.empty()) name = KindName(e.kind);
  out_.AsyncSpan(name, kIttCategory, e.pid, e.tid, next_async_id_++, e.start_ns, dur, args_);
}

void IttEventWriter::Write(const IttMarker& e) {
  BeginArgs(e.domain);
  if (e.name_truncated) args_.push_back(TraceArg::Bool("name_truncated", true));
  out_.Instant(strings_.Get(e.name), kIttCategory, e.pid, e.tid, e.ts_ns, InstantScopeOf(e.scope),
               args_);
}

void IttEventWriter::Write(const CollectionChange& e) {
  std::string_view name = "collection resumed";
  if (e.state == CollectionState::kPaused) name = "collection paused";
  if (e.state == CollectionState::kDetached) name = "collection detached";
  args_.clear();
  args_.push_back(TraceArg::String(
      "cause", e.cause == CollectionCause::kStartPaused ? "--start-paused"
               : e.state == CollectionState::kPaused    ? "__itt_pause"
               : e.state == CollectionState::kDetached  ? "__itt_detach"
                                                        : "__itt_resume"));
  out_.Instant(name, kXtraceCategory, e.pid, e.tid, e.ts_ns,
               TraceWriter::InstantScope::kProcess, args_);
}

}  // namespace xtrace
