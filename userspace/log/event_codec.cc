// Model <-> Cap'n Proto translation for the event log; see event_codec.h.
#include "log/event_codec.h"

#include <algorithm>

#include "log/drm_event_codec.h"
#include "log/itt_event_codec.h"
#include "log/log_format.h"
#include "log/python_event_codec.h"
#include "log/ze_event_codec.h"

namespace xtrace::log_codec {

static_assert(kLogFormatVersion == log_schema::FORMAT_VERSION,
              "log_format.h and xtrace_log.capnp disagree on the format version");
// HoldCause is stored as its number: the model's and the schema's must agree.
static_assert(static_cast<uint16_t>(log_schema::HoldCause::ATTACH_QUERIES) == static_cast<uint16_t>(HoldCause::kAttachQueries) &&
              static_cast<uint16_t>(log_schema::HoldCause::EXEC) == static_cast<uint16_t>(HoldCause::kExec) &&
              static_cast<uint16_t>(log_schema::HoldCause::LIBRARY_LOAD) == static_cast<uint16_t>(HoldCause::kLibraryLoad) &&
              static_cast<uint16_t>(log_schema::HoldCause::TABLE_GETTER) == static_cast<uint16_t>(HoldCause::kTableGetter) &&
              static_cast<uint16_t>(log_schema::HoldCause::LEVEL_ZERO_INIT) == static_cast<uint16_t>(HoldCause::kLevelZeroInit),
              "model/event.h and xtrace_log.capnp disagree on HoldCause");

namespace {

// Calls f(start_ns) for events that carry a time.
template <typename F>
void WithStart(const Event& event, F&& f) {
  if (const auto* e = std::get_if<KernelLaunch>(&event)) f(e->start_ns);
  if (const auto* e = std::get_if<KernelCreate>(&event)) f(e->start_ns);
  if (const auto* e = std::get_if<IttTask>(&event)) f(e->start_ns);
  if (const auto* e = std::get_if<IttMarker>(&event)) f(e->ts_ns);
  if (const auto* e = std::get_if<CollectionChange>(&event)) f(e->ts_ns);
  if (const auto* e = std::get_if<DrmIoctl>(&event)) f(e->start_ns);
  if (const auto* e = std::get_if<DrmFenceSignal>(&event)) f(e->created_ns);
  if (const auto* e = std::get_if<ProcessInfo>(&event); e && e->exec_ns) f(e->exec_ns);
  if (const auto* e = std::get_if<RecordsDropped>(&event)) f(e->start_ns);
  if (const auto* e = std::get_if<PythonStack>(&event)) f(e->start_ns);
  if (const auto* e = std::get_if<XtraceHold>(&event)) f(e->start_ns);
  if (uint64_t t; ZeEventStart(event, &t)) f(t);
}

void EncodeClock(const ClockAnchor& clock, log_schema::ClockAnchor::Builder out) {
  out.setMonotonicNs(clock.monotonic_ns);
  out.setMonotonicRawNs(clock.monotonic_raw_ns);
  out.setRealtimeNs(clock.realtime_ns);
}

ClockAnchor DecodeClock(log_schema::ClockAnchor::Reader in) {
  return ClockAnchor{.monotonic_ns = in.getMonotonicNs(),
                     .monotonic_raw_ns = in.getMonotonicRawNs(),
                     .realtime_ns = in.getRealtimeNs()};
}

std::string ToString(capnp::Text::Reader text) { return std::string(text.begin(), text.size()); }

// A handle stored by ref (format 2) or inline (format 1, or a ref of 0); false for a ref
// beyond the table.
bool ResolveHandle(uint32_t ref, uint64_t inline_value, std::span<const uint64_t> handles,
                   uint64_t* out) {
  if (ref == 0) {
    *out = inline_value;
    return true;
  }
  if (ref > handles.size()) return false;
  *out = handles[ref - 1];
  return true;
}

}  // namespace

uint32_t HandleTable::Ref(uint64_t handle) {
  if (handle == 0) return 0;
  if (auto it = refs_.find(handle); it != refs_.end()) return it->second;
  if (handles_.size() >= kMaxRef) return 0;
  handles_.push_back(handle);
  refs_.emplace(handle, static_cast<uint32_t>(handles_.size()));
  return static_cast<uint32_t>(handles_.size());
}

uint64_t BatchBaseNs(std::span<const Event> events, uint64_t others_earliest) {
  uint64_t base = others_earliest;
  for (const Event& event : events) WithStart(event, [&](uint64_t t) { base = std::min(base, t); });
  return base == kNoTime ? 0 : base;
}

uint64_t BatchEndNs(std::span<const Event> events, uint64_t others_latest) {
  uint64_t end = others_latest;
  auto span = [&](uint64_t start_ns, uint64_t end_ns) { end = std::max({end, start_ns, end_ns}); };
  for (const Event& event : events) {
    if (const auto* e = std::get_if<KernelLaunch>(&event)) span(e->start_ns, e->end_ns);
    if (const auto* e = std::get_if<KernelCreate>(&event)) span(e->start_ns, e->end_ns);
    if (const auto* e = std::get_if<IttTask>(&event)) span(e->start_ns, e->end_ns);
    if (const auto* e = std::get_if<IttMarker>(&event)) span(e->ts_ns, e->ts_ns);
    if (const auto* e = std::get_if<DrmIoctl>(&event)) span(e->start_ns, e->end_ns);
    if (const auto* e = std::get_if<DrmFenceSignal>(&event)) span(e->created_ns, e->signaled_ns);
    if (const auto* e = std::get_if<ApiCall>(&event)) span(e->start_ns, e->end_ns);
    if (const auto* e = std::get_if<DeviceOp>(&event)) span(e->start_ns, e->end_ns);
    if (const auto* e = std::get_if<PythonStack>(&event)) span(e->start_ns, e->end_ns);
    if (const auto* e = std::get_if<XtraceHold>(&event)) span(e->start_ns, e->end_ns);
  }
  return end;
}

bool IsWindowedEvent(const Event& event) {
  return std::holds_alternative<KernelLaunch>(event) ||
         std::holds_alternative<KernelCreate>(event) || std::holds_alternative<IttTask>(event) ||
         std::holds_alternative<IttMarker>(event) || std::holds_alternative<DrmIoctl>(event) ||
         std::holds_alternative<DrmFenceSignal>(event) || std::holds_alternative<ApiCall>(event) ||
         std::holds_alternative<DeviceOp>(event) || std::holds_alternative<PythonStack>(event) ||
         std::holds_alternative<XtraceHold>(event);
}

bool IsWindowedKind(log_schema::Event::Which kind) {
  using E = log_schema::Event;
  switch (kind) {
    case E::KERNEL_LAUNCH:
    case E::KERNEL_CREATE:
    case E::ITT_TASK:
    case E::ITT_MARKER:
    case E::DRM_IOCTL:
    case E::DRM_FENCE_SIGNAL:
    case E::API_CALL:
    case E::DEVICE_OP:
    case E::PYTHON_STACK:
    case E::XTRACE_HOLD:
      return true;
    default:
      return false;
  }
}

// Offsets and durations use wrapping (mod 2^64) arithmetic so every input round-trips,
// including an end before its start.
void EncodeEvent(const Event& event, uint64_t base_ns, HandleTable& handles,
                 log_schema::Event::Builder out) {
  if (const auto* e = std::get_if<KernelLaunch>(&event)) {
    auto g = out.initKernelLaunch();
    g.setPid(e->pid);
    g.setTid(e->tid);
    g.setStartOffsetNs(e->start_ns - base_ns);
    g.setDurationNs(e->end_ns - e->start_ns);
    // A handle without a ref (a batch with more distinct handles than refs reach) stays
    // inline, as format 1 stored it.
    auto by_ref = [&](uint64_t handle, auto set_ref, auto set_inline) {
      if (const uint32_t ref = handles.Ref(handle)) set_ref(static_cast<uint16_t>(ref));
      else set_inline(handle);
    };
    by_ref(e->kernel, [&](uint16_t r) { g.setKernelRef(r); }, [&](uint64_t h) { g.setKernel(h); });
    by_ref(e->command_list, [&](uint16_t r) { g.setCommandListRef(r); },
           [&](uint64_t h) { g.setCommandList(h); });
    by_ref(e->signal_event, [&](uint16_t r) { g.setSignalEventRef(r); },
           [&](uint64_t h) { g.setSignalEvent(h); });
    g.setGroupCountX(e->group_count[0]);
    g.setGroupCountY(e->group_count[1]);
    g.setGroupCountZ(e->group_count[2]);
    g.setKernelName(e->kernel_name);
    g.setNumWaitEvents(e->num_wait_events);
    g.setResult(e->result);
    g.setNameKnown(e->name_known);
    g.setGroupCountUnreadable(e->group_count_unreadable);
    g.setLaunchKind(e->launch_kind);
  } else if (const auto* e = std::get_if<KernelCreate>(&event)) {
    auto g = out.initKernelCreate();
    g.setPid(e->pid);
    g.setTid(e->tid);
    g.setStartOffsetNs(e->start_ns - base_ns);
    g.setDurationNs(e->end_ns - e->start_ns);
    g.setModule(e->module);
    g.setKernel(e->kernel);
    g.setName(e->name);
    g.setResult(e->result);
    g.setNameTruncated(e->name_truncated);
    g.setLearned(e->learned);
  } else if (const auto* e = std::get_if<ProcessInfo>(&event)) {
    auto g = out.initProcessInfo();
    g.setPid(e->pid);
    g.setNsPid(e->ns_pid);
    g.setComm(e->comm);
    g.setCommandLine(e->command_line);
    g.setCgroup(e->cgroup);
    g.setContainerId(e->container_id);
    g.setRank(e->rank);
    g.setWorldSize(e->world_size);
    if (e->exec_ns) {
      g.setExec(true);
      g.setExecOffsetNs(e->exec_ns - base_ns);
    }
  } else if (const auto* e = std::get_if<ThreadInfo>(&event)) {
    auto g = out.initThreadInfo();
    g.setPid(e->pid);
    g.setTid(e->tid);
    g.setName(e->name);
  } else if (const auto* e = std::get_if<IttTask>(&event)) {
    EncodeIttTask(*e, base_ns, out.initIttTask());
  } else if (const auto* e = std::get_if<IttMarker>(&event)) {
    EncodeIttMarker(*e, base_ns, out.initIttMarker());
  } else if (const auto* e = std::get_if<CollectionChange>(&event)) {
    EncodeCollectionChange(*e, base_ns, out.initCollectionChange());
  } else if (const auto* e = std::get_if<DrmFile>(&event)) {
    EncodeDrmFile(*e, out);
  } else if (const auto* e = std::get_if<DrmIoctl>(&event)) {
    EncodeDrmIoctl(*e, base_ns, out);
  } else if (const auto* e = std::get_if<DrmFenceSignal>(&event)) {
    EncodeDrmFenceSignal(*e, base_ns, out);
  } else if (const auto* e = std::get_if<RecordsDropped>(&event)) {
    auto g = out.initRecordsDropped();
    g.setStartOffsetNs(e->start_ns - base_ns);
    g.setDurationNs(e->end_ns - e->start_ns);
    g.setLevelZero(e->level_zero);
    g.setItt(e->itt);
    g.setDrm(e->drm);
    g.setOther(e->other);
    g.setIttRings(e->itt_rings);
  } else if (const auto* e = std::get_if<PythonStack>(&event)) {
    EncodePythonStack(*e, base_ns, out.initPythonStack());
  } else if (const auto* e = std::get_if<XtraceHold>(&event)) {
    auto g = out.initXtraceHold();
    g.setPid(e->pid);
    g.setTid(e->tid);
    g.setStartOffsetNs(e->start_ns - base_ns);
    g.setDurationNs(e->end_ns - e->start_ns);
    g.setProcessDurationNs(e->process_end_ns - e->start_ns);
    g.setCause(static_cast<log_schema::HoldCause>(e->cause));
    g.setLearned(e->learned);
    g.setFailed(e->failed);
  } else {
    EncodeZeEvent(event, base_ns, out);
  }
}

DecodeResult DecodeEvent(log_schema::Event::Reader in, uint64_t base_ns,
                         std::span<const uint64_t> handles, Event* out) {
  switch (in.which()) {
    case log_schema::Event::KERNEL_LAUNCH: {
      auto g = in.getKernelLaunch();
      KernelLaunch e;
      e.pid = g.getPid();
      e.tid = g.getTid();
      e.start_ns = base_ns + g.getStartOffsetNs();
      e.end_ns = e.start_ns + g.getDurationNs();
      if (!ResolveHandle(g.getCommandListRef(), g.getCommandList(), handles, &e.command_list) ||
          !ResolveHandle(g.getKernelRef(), g.getKernel(), handles, &e.kernel) ||
          !ResolveHandle(g.getSignalEventRef(), g.getSignalEvent(), handles, &e.signal_event))
        return DecodeResult::kBadHandleRef;
      e.group_count[0] = g.getGroupCountX();
      e.group_count[1] = g.getGroupCountY();
      e.group_count[2] = g.getGroupCountZ();
      e.num_wait_events = g.getNumWaitEvents();
      e.result = g.getResult();
      e.kernel_name = g.getKernelName();
      e.name_known = g.getNameKnown();
      e.group_count_unreadable = g.getGroupCountUnreadable();
      e.launch_kind = g.getLaunchKind();
      *out = e;
      return DecodeResult::kEvent;
    }
    case log_schema::Event::KERNEL_CREATE: {
      auto g = in.getKernelCreate();
      KernelCreate e;
      e.pid = g.getPid();
      e.tid = g.getTid();
      e.start_ns = base_ns + g.getStartOffsetNs();
      e.end_ns = e.start_ns + g.getDurationNs();
      e.module = g.getModule();
      e.kernel = g.getKernel();
      e.name = g.getName();
      e.result = g.getResult();
      e.name_truncated = g.getNameTruncated();
      e.learned = g.getLearned();
      *out = e;
      return DecodeResult::kEvent;
    }
    case log_schema::Event::PROCESS_INFO: {
      auto g = in.getProcessInfo();
      *out = ProcessInfo{.pid = g.getPid(),
                         .ns_pid = g.getNsPid(),
                         .comm = g.getComm(),
                         .command_line = g.getCommandLine(),
                         .cgroup = g.getCgroup(),
                         .container_id = g.getContainerId(),
                         .rank = g.getRank(),
                         .world_size = g.getWorldSize(),
                         .exec_ns = g.getExec() ? base_ns + g.getExecOffsetNs() : 0};
      return DecodeResult::kEvent;
    }
    case log_schema::Event::THREAD_INFO: {
      auto g = in.getThreadInfo();
      *out = ThreadInfo{.pid = g.getPid(), .tid = g.getTid(), .name = g.getName()};
      return DecodeResult::kEvent;
    }
    case log_schema::Event::ITT_TASK:
      *out = DecodeIttTask(in.getIttTask(), base_ns);
      return DecodeResult::kEvent;
    case log_schema::Event::ITT_MARKER:
      *out = DecodeIttMarker(in.getIttMarker(), base_ns);
      return DecodeResult::kEvent;
    case log_schema::Event::COLLECTION_CHANGE:
      *out = DecodeCollectionChange(in.getCollectionChange(), base_ns);
      return DecodeResult::kEvent;
    case log_schema::Event::RECORDS_DROPPED: {
      auto g = in.getRecordsDropped();
      RecordsDropped e;
      e.start_ns = base_ns + g.getStartOffsetNs();
      e.end_ns = e.start_ns + g.getDurationNs();
      e.level_zero = g.getLevelZero();
      e.itt = g.getItt();
      e.drm = g.getDrm();
      e.other = g.getOther();
      e.itt_rings = g.getIttRings();
      *out = e;
      return DecodeResult::kEvent;
    }
    case log_schema::Event::DRM_FILE:
    case log_schema::Event::DRM_IOCTL:
    case log_schema::Event::DRM_FENCE_SIGNAL:
      return DecodeDrmEvent(in, base_ns, out) ? DecodeResult::kEvent : DecodeResult::kUnknownKind;
    case log_schema::Event::PYTHON_STACK:
      *out = DecodePythonStack(in.getPythonStack(), base_ns);
      return DecodeResult::kEvent;
    case log_schema::Event::XTRACE_HOLD: {
      auto g = in.getXtraceHold();
      XtraceHold e;
      e.pid = g.getPid();
      e.tid = g.getTid();
      e.start_ns = base_ns + g.getStartOffsetNs();
      e.end_ns = e.start_ns + g.getDurationNs();
      // Never past the hold's end, whatever the log says.
      e.process_end_ns = e.start_ns + std::min(g.getProcessDurationNs(), g.getDurationNs());
      const auto cause = static_cast<uint16_t>(g.getCause());
      e.cause = cause <= static_cast<uint16_t>(HoldCause::kLevelZeroInit) ? static_cast<HoldCause>(cause)
                                                                          : HoldCause::kUnknown;
      e.learned = g.getLearned();
      e.failed = g.getFailed();
      *out = e;
      return DecodeResult::kEvent;
    }
    default:
      return DecodeZeEvent(in, base_ns, out) ? DecodeResult::kEvent : DecodeResult::kUnknownKind;
  }
}

void EncodeHeader(const LogHeader& header, log_schema::Header::Builder out) {
  out.setMagic(log_schema::LOG_MAGIC);
  out.setFormatVersion(header.format_version);
  out.setXtraceVersion(header.xtrace_version);
  out.setHost(header.host);
  out.setKernelRelease(header.kernel_release);
  out.setBootId(header.boot_id);
  out.setCommandLine(header.command_line);
  EncodeClock(header.start_clock, out.initStartClock());
}

LogHeader DecodeHeader(log_schema::Header::Reader in) {
  LogHeader header;
  header.format_version = in.getFormatVersion();
  header.xtrace_version = ToString(in.getXtraceVersion());
  header.host = ToString(in.getHost());
  header.kernel_release = ToString(in.getKernelRelease());
  header.boot_id = ToString(in.getBootId());
  header.command_line = ToString(in.getCommandLine());
  header.start_clock = DecodeClock(in.getStartClock());
  return header;
}

void EncodeSummary(const LogSummary& summary, log_schema::Summary::Builder out) {
  EncodeClock(summary.end_clock, out.initEndClock());
  out.setEvents(summary.events);
  out.setDropped(summary.dropped);
  out.setProcesses(summary.processes);
  auto stats = out.initProcessStats(static_cast<unsigned>(summary.process_stats.size()));
  for (unsigned i = 0; i < stats.size(); ++i) {
    const ProcessCaptureStats& p = summary.process_stats[i];
    auto s = stats[i];
    s.setPid(p.pid);
    s.setComm(p.comm);
    s.setDropped(p.dropped);
    auto by_source = s.initEventsBySource(static_cast<unsigned>(p.records_by_source.size()));
    unsigned j = 0;
    for (const auto& [source, records] : p.records_by_source) {
      by_source[j].setSource(source);
      by_source[j].setRecords(records);
      ++j;
    }
  }
  auto dropped = out.initDroppedBySource(static_cast<unsigned>(summary.dropped_by_source.size()));
  for (unsigned i = 0; i < dropped.size(); ++i) {
    dropped[i].setSource(summary.dropped_by_source[i].first);
    dropped[i].setRecords(summary.dropped_by_source[i].second);
  }
  auto notes = out.initNotes(static_cast<unsigned>(summary.notes.size()));
  for (unsigned i = 0; i < notes.size(); ++i) notes.set(i, summary.notes[i]);
}

LogSummary DecodeSummary(log_schema::Summary::Reader in) {
  LogSummary summary;
  summary.end_clock = DecodeClock(in.getEndClock());
  summary.events = in.getEvents();
  summary.dropped = in.getDropped();
  summary.processes = in.getProcesses();
  for (auto s : in.getProcessStats()) {
    ProcessCaptureStats p;
    p.pid = s.getPid();
    p.comm = ToString(s.getComm());
    p.dropped = s.getDropped();
    for (auto c : s.getEventsBySource())
      p.records_by_source.emplace_back(ToString(c.getSource()), c.getRecords());
    summary.process_stats.push_back(std::move(p));
  }
  for (auto c : in.getDroppedBySource())
    summary.dropped_by_source.emplace_back(ToString(c.getSource()), c.getRecords());
  for (auto note : in.getNotes()) summary.notes.push_back(ToString(note));
  return summary;
}

}  // namespace xtrace::log_codec
