// ITT events in the log; see itt_event_codec.h.
#include "log/itt_event_codec.h"

namespace xtrace::log_codec {
namespace {

// Enumerants map by position (the model and the schema list them in the same order). A value
// beyond what this build knows (a newer writer) reads as the first enumerant.
template <typename To, typename From>
To MapEnum(From value, To last) {
  const auto v = static_cast<unsigned>(value);
  return v <= static_cast<unsigned>(last) ? static_cast<To>(v) : static_cast<To>(0);
}

}  // namespace

void EncodeIttTask(const IttTask& e, uint64_t base_ns, log_schema::Event::IttTask::Builder g) {
  g.setPid(e.pid);
  g.setTid(e.tid);
  g.setStartOffsetNs(e.start_ns - base_ns);
  g.setDurationNs(e.end_ns - e.start_ns);
  g.setDomain(e.domain);
  g.setName(e.name);
  g.setKind(MapEnum(e.kind, log_schema::IttTaskKind::FRAME));
  g.setId(e.id);
  g.setEndTid(e.end_tid);
  g.setUnfinished(e.unfinished);
  g.setBeginMissing(e.begin_missing);
  g.setClosedByOuter(e.closed_by_outer);
  g.setNameTruncated(e.name_truncated);
}

IttTask DecodeIttTask(log_schema::Event::IttTask::Reader g, uint64_t base_ns) {
  IttTask e;
  e.pid = g.getPid();
  e.tid = g.getTid();
  e.start_ns = base_ns + g.getStartOffsetNs();
  e.end_ns = e.start_ns + g.getDurationNs();
  e.domain = g.getDomain();
  e.name = g.getName();
  e.kind = MapEnum(g.getKind(), IttTaskKind::kFrame);
  e.id = g.getId();
  e.end_tid = g.getEndTid();
  e.unfinished = g.getUnfinished();
  e.begin_missing = g.getBeginMissing();
  e.closed_by_outer = g.getClosedByOuter();
  e.name_truncated = g.getNameTruncated();
  return e;
}

void EncodeIttMarker(const IttMarker& e, uint64_t base_ns,
                     log_schema::Event::IttMarker::Builder g) {
  g.setPid(e.pid);
  g.setTid(e.tid);
  g.setStartOffsetNs(e.ts_ns - base_ns);
  g.setDomain(e.domain);
  g.setName(e.name);
  g.setScope(MapEnum(e.scope, log_schema::IttMarkerScope::TASK));
  g.setNameTruncated(e.name_truncated);
}

IttMarker DecodeIttMarker(log_schema::Event::IttMarker::Reader g, uint64_t base_ns) {
  IttMarker e;
  e.pid = g.getPid();
  e.tid = g.getTid();
  e.ts_ns = base_ns + g.getStartOffsetNs();
  e.domain = g.getDomain();
  e.name = g.getName();
  e.scope = MapEnum(g.getScope(), IttMarkerScope::kTask);
  e.name_truncated = g.getNameTruncated();
  return e;
}

void EncodeCollectionChange(const CollectionChange& e, uint64_t base_ns,
                            log_schema::Event::CollectionChange::Builder g) {
  g.setPid(e.pid);
  g.setTid(e.tid);
  g.setStartOffsetNs(e.ts_ns - base_ns);
  g.setState(MapEnum(e.state, log_schema::CollectionState::DETACHED));
  g.setCause(MapEnum(e.cause, log_schema::CollectionCause::START_PAUSED));
}

CollectionChange DecodeCollectionChange(log_schema::Event::CollectionChange::Reader g,
                                        uint64_t base_ns) {
  CollectionChange e;
  e.pid = g.getPid();
  e.tid = g.getTid();
  e.ts_ns = base_ns + g.getStartOffsetNs();
  e.state = MapEnum(g.getState(), CollectionState::kDetached);
  e.cause = MapEnum(g.getCause(), CollectionCause::kStartPaused);
  return e;
}

}  // namespace xtrace::log_codec
