// Device timeline reconstruction; see device_timeline.h.
//
// An operation's life: appended (to a regular list: a template; to an immediate list: an
// instance at once) -> submitted (each execution of a regular list makes instances from its
// templates) -> complete (a host call saw it or something after it on the same in-order engine
// finish) -> emitted, once nothing more can be learnt about it: at once if its signal event
// cannot carry timestamps, else when the process reads them, resets or re-signals the event,
// or destroys it. Measured operations also wait for a clock reading taken after them, so their
// mapping is an interpolation.
#include "correlate/device_timeline.h"

#include <algorithm>

#include "correlate/device_timeline_state.h"
#include "correlate/event_sink.h"

namespace xtrace {
namespace {

// Intel GPUs keep 32 bits of kernel timestamps; assumed when xtrace cannot ask the device.
constexpr uint32_t kDefaultKernelTimestampBits = 32;
// Operations one engine may have in flight before the oldest is written out unseen: a process
// that never synchronizes must not grow the collector without bound.
constexpr size_t kMaxPendingPerEngine = 1 << 16;
// Appends an unclassified list may hold; a regular list is closed long before this many
// (SYCL graphs run to thousands), so more means an immediate list that nobody waits on.
constexpr size_t kMaxUnclassifiedAppends = 1 << 16;
// A measured interval may stray this far outside its host-side bounds (clock fit error);
// further means the mapping is wrong (e.g. devices matched wrongly) and it is not trusted.
constexpr uint64_t kTimestampToleranceNs = 100'000;

}  // namespace


DeviceTimeline::DeviceTimeline(StringTable& strings, EventSink& sink, ZeDeviceTable& devices)
    : strings_(strings), sink_(sink), devices_(devices) {}

DeviceTimeline::~DeviceTimeline() = default;

void DeviceTimeline::OnDevice(const DeviceInfo& device) {
  device_info_[device.device] = device;
  auto& model = clocks_[device.device];
  if (!model) model = std::make_unique<ClockModel>(device.timer_hz);
}

void DeviceTimeline::OnClockReading(uint32_t device, uint64_t ticks, uint64_t monotonic_ns) {
  auto& model = clocks_[device];
  if (!model) model = std::make_unique<ClockModel>(0);
  model->AddSample(ticks, monotonic_ns);
}

void DeviceTimeline::OnHostClocks(uint64_t monotonic_raw_ns, uint64_t monotonic_ns) {
  host_clocks_.AddReading(monotonic_raw_ns, monotonic_ns);
}

std::vector<ClockFit> DeviceTimeline::Fits(uint64_t now_ns) const {
  std::vector<ClockFit> fits;
  for (const auto& [device, model] : clocks_)
    if (model->ready()) fits.push_back(model->Fit(device, now_ns));
  return fits;
}

void DeviceTimeline::OnLaunch(const KernelLaunch& l) {
  if (l.result != 0) return;
  Template t;
  AppendedCommand& c = t.command;
  c.kind = DeviceOpKind::kKernel;
  c.name = l.kernel_name;
  c.kernel = l.kernel;
  std::copy(std::begin(l.group_count), std::end(l.group_count), c.group_count);
  c.signal_event = l.signal_event;
  c.append_tid = l.tid;
  c.append_ns = l.start_ns;
  t.append_end_ns = l.end_ns;
  Append(l.pid, l.command_list, t);
}

void DeviceTimeline::Append(uint32_t pid, uint64_t list_handle, const Template& t) {
  ListState& list = lists_[{pid, list_handle}];
  const AppendedCommand& c = t.command;
  if (list.capturing) {
    // Recorded into a graph: it runs at each replay, not now.
    list.captured.push_back(t);
    return;
  }
  if (list.unclassified()) {
    list.commands.push_back(t);
    if (c.signal_event) unclassified_signals_[{pid, c.signal_event}] = list_handle;
    if (list.commands.size() > kMaxUnclassifiedAppends) ClassifyImmediate({pid, list_handle});
    return;
  }
  const bool immediate = list.created_in_capture ? list.immediate : list.immediate_seen;
  if (!immediate) {
    list.commands.push_back(t);
    return;
  }
  const PidHandle engine{pid, list_handle};
  const uint64_t id =
      Submit(pid, t, engine, list.device, c.append_tid, c.append_ns, list_handle, 0);
  NoteSubmittingCall(pid, c.append_tid, c.append_ns, t.append_end_ns, id, id);
  // A synchronous immediate list returns from the append when the work is done.
  if (list.synchronous) CompleteThrough(engine, id, {c.append_tid, t.append_end_ns});
  CountObjects();
}

void DeviceTimeline::EndCaptureBegunBefore(uint32_t pid, uint64_t list_handle, uint64_t graph) {
  ListState& list = lists_[{pid, list_handle}];
  std::vector<Template> appended;
  // Every append seen on the list came after the capture began, so none ran. A list still
  // unclassified holds them all; one that showed itself immediate meanwhile has submitted them
  // already, and they stay drawn as run (its graph then says only what it cannot know).
  if (list.unclassified()) {
    appended.swap(list.commands);
    for (const Template& t : appended) {
      auto s = unclassified_signals_.find({pid, t.command.signal_event});
      if (s != unclassified_signals_.end() && s->second == list_handle) unclassified_signals_.erase(s);
    }
  }
  if (!graph) return;  // captured into a graph of the caller's made before: not known
  GraphState& g = graphs_[{pid, graph}];
  g.begun_before_capture = true;
  g.commands.insert(g.commands.end(), appended.begin(), appended.end());
  CountObjects();
}

void DeviceTimeline::AppendGraph(const ApiCall& call, uint64_t list_handle,
                                 uint64_t executable_graph, uint64_t signal_event) {
  auto graph = executables_.find({call.pid, executable_graph});
  std::vector<Template> replay;
  uint64_t execution = 0;
  if (graph != executables_.end()) {
    if (graph->second.begun_before_capture) {
      // What its capture recorded before xtrace's began: one operation says so, first.
      ++stats_.partly_known_graph_replays;
      Template unknown;
      unknown.command.kind = DeviceOpKind::kKernel;
      unknown.command.name = strings_.Intern(kPartlyKnownGraphName);
      unknown.command.append_tid = call.tid;
      unknown.command.append_ns = call.start_ns;
      unknown.append_end_ns = call.end_ns;
      replay.push_back(unknown);
    }
    replay.insert(replay.end(), graph->second.commands.begin(), graph->second.commands.end());
    execution = ++graph->second.replays;
  } else {
    // Recorded (or instantiated) before the capture: what it runs is not known. One operation
    // says so where it runs, bounded like any other, rather than nothing at all.
    ++stats_.unknown_graph_replays;
    Template unknown;
    unknown.command.kind = DeviceOpKind::kKernel;
    unknown.command.name = strings_.Intern(kUnknownGraphName);
    unknown.command.append_tid = call.tid;
    unknown.command.append_ns = call.start_ns;
    unknown.append_end_ns = call.end_ns;
    replay.push_back(unknown);
  }
  if (signal_event) {
    // The append's own event signals once the whole graph has run.
    Template signal;
    signal.visible = false;
    signal.command.signal_event = signal_event;
    signal.command.append_tid = call.tid;
    signal.command.append_ns = call.start_ns;
    signal.append_end_ns = call.end_ns;
    replay.push_back(signal);
  }
  ListState& list = lists_[{call.pid, list_handle}];
  const bool immediate = list.created_in_capture ? list.immediate : list.immediate_seen;
  if (list.capturing || list.unclassified() || !immediate) {
    // Into a graph being recorded, or a regular list (each of its executions runs the graph):
    // the graph's commands become that list's, as though appended one by one. A list made
    // before the capture keeps them until it shows it is immediate, and then they run as this
    // replay.
    for (Template& t : replay) {
      t.graph = executable_graph;
      t.replay = execution;
      t.replay_tid = call.tid;
      t.replay_ns = call.start_ns;
      Append(call.pid, list_handle, t);
    }
    return;
  }
  // An immediate list runs it now, on its engine, as one submission by this call; each
  // operation keeps the append that recorded it, and is tied to the replay through its
  // submission (the replaying call) and its command list (the executable graph, replay n).
  const PidHandle engine{call.pid, list_handle};
  const uint64_t first_id = next_id_;
  for (const Template& t : replay)
    Submit(call.pid, t, engine, list.device, call.tid, call.start_ns, executable_graph, execution);
  if (next_id_ > first_id)
    NoteSubmittingCall(call.pid, call.tid, call.start_ns, call.end_ns, first_id, next_id_ - 1);
  if (list.synchronous) CompleteThrough(engine, next_id_ - 1, {call.tid, call.end_ns});
  CountObjects();
}

void DeviceTimeline::ClassifyImmediate(PidHandle handle) {
  ListState& list = lists_[handle];
  list.immediate_seen = true;
  std::vector<Template> appended;
  appended.swap(list.commands);
  // They were submitted when appended, as everything on an immediate list is (a graph's, when
  // replayed).
  for (const Template& t : appended) {
    if (t.graph)
      Submit(handle.pid, t, handle, list.device, t.replay_tid, t.replay_ns, t.graph, t.replay);
    else
      Submit(handle.pid, t, handle, list.device, t.command.append_tid, t.command.append_ns,
             handle.handle, 0);
  }
}

// An event seen complete or read: if an unclassified list appended its signaller, that list
// is immediate (a regular list's commands run only once it has been closed and executed).
void DeviceTimeline::ClassifyBySignal(uint32_t pid, uint64_t event) {
  auto it = unclassified_signals_.find({pid, event});
  if (it == unclassified_signals_.end()) return;
  const PidHandle list{pid, it->second};
  unclassified_signals_.erase(it);
  auto l = lists_.find(list);
  if (l != lists_.end() && l->second.unclassified()) ClassifyImmediate(list);
}

void DeviceTimeline::Execute(const ApiCall& call, uint64_t queue, uint64_t fence,
                             uint64_t first_list, const DecodedZeExecute* execute) {
  const PidHandle engine{call.pid, queue};
  auto q = queues_.find(engine);
  const uint32_t n = execute ? execute->lists_copied : (first_list ? 1 : 0);
  const uint64_t first_id = next_id_;
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t handle = execute ? execute->list(i) : first_list;
    ListState& list = lists_[{call.pid, handle}];
    list.regular_seen = true;
    ++list.executions;
    if (!list.created_in_capture && !list.recorded_in_capture) ++stats_.executions_recorded_before;
    // A queue made before the attach has no device Level Zero can tell: its list's stands.
    const uint32_t device =
        q != queues_.end() && q->second.device != kUnknownDevice ? q->second.device : list.device;
    for (const Template& t : list.commands)
      Submit(call.pid, t, engine, device, call.tid, call.start_ns, handle, list.executions);
  }
  if (next_id_ > first_id)
    NoteSubmittingCall(call.pid, call.tid, call.start_ns, call.end_ns, first_id, next_id_ - 1);
  if (fence) {
    FenceState& f = fences_[{call.pid, fence}];
    f.queue = queue;
    f.last = next_id_ - 1;
  }
  if (q != queues_.end() && q->second.synchronous)
    CompleteThrough(engine, next_id_ - 1, {call.tid, call.end_ns});
  CountObjects();
}

uint64_t DeviceTimeline::Submit(uint32_t pid, const Template& t, PidHandle engine, uint32_t device,
                                uint32_t submit_tid, uint64_t submit_ns, uint64_t list,
                                uint64_t execution) {
  auto [eng, added] = engines_.try_emplace(engine);
  if (added) {
    // A new engine (or a handle reused by one): its own track on its device.
    if (device == kUnknownDevice) device = devices_.Fallback();
    eng->second.device = device;
    eng->second.track = ++next_track_[device];
    DeviceQueue info;
    info.pid = pid;
    info.device = device;
    info.handle = engine.handle;
    info.track = eng->second.track;
    // A queue or list made before the attach that its loader could not describe has no
    // engine anyone knows: said so, not drawn as engine 0.0.
    if (auto q = queues_.find(engine); q != queues_.end()) {
      info.ordinal = q->second.ordinal;
      info.index = q->second.index;
    } else if (auto l = lists_.find(engine); l != lists_.end()) {
      info.immediate = true;
      info.ordinal = l->second.ordinal;
      info.index = l->second.index;
      info.engine_unknown = !l->second.engine_known;
    } else {
      info.engine_unknown = true;
    }
    sink_.OnEvent(info);
  }
  const uint64_t id = next_id_++;
  Instance inst;
  inst.engine = engine;
  inst.visible = t.visible;
  DeviceOp& op = inst.op;
  static_cast<AppendedCommand&>(op) = t.command;
  op.pid = pid;
  op.device = eng->second.device;
  op.queue = engine.handle;
  op.track = eng->second.track;
  op.command_list = list;
  op.id = id;
  op.submit_tid = submit_tid;
  op.submit_ns = submit_ns;
  op.execution = execution;
  live_.emplace(id, std::move(inst));
  eng->second.pending.push_back(id);
  if (t.command.signal_event) BindSignal(pid, t.command.signal_event, id);
  stats_.pending_ops = live_.size();
  stats_.peak_pending_ops = std::max(stats_.peak_pending_ops, stats_.pending_ops);
  if (eng->second.pending.size() > kMaxPendingPerEngine) ForceOut(engine);
  return id;
}

void DeviceTimeline::NoteSubmittingCall(uint32_t pid, uint32_t tid, uint64_t start_ns,
                                        uint64_t end_ns, uint64_t first_id, uint64_t last_id) {
  for (const auto& bound :
       submission_fences_.OnSubmittingCall(pid, tid, start_ns, end_ns, first_id, last_id))
    ApplyFenceBound(bound);
}

void DeviceTimeline::OnSubmissionFence(uint32_t pid, uint32_t tid, uint64_t ioctl_start_ns,
                                       uint64_t signaled_ns) {
  if (auto bound = submission_fences_.OnSignal(pid, tid, ioctl_start_ns, signaled_ns))
    ApplyFenceBound(*bound);
}

void DeviceTimeline::ApplyFenceBound(const SubmissionFences::Bound& bound) {
  // Operations already emitted keep the bounds they were written with.
  for (uint64_t id = bound.first_id; id <= bound.last_id; ++id) {
    auto it = live_.find(id);
    if (it == live_.end()) continue;
    uint64_t& signaled = it->second.fence_signaled_ns;
    if (!signaled || bound.signaled_ns < signaled) signaled = bound.signaled_ns;
  }
}

void DeviceTimeline::BindSignal(uint32_t pid, uint64_t event, uint64_t id) {
  EventState& e = events_[{pid, event}];
  const uint64_t previous = e.signaller;
  e.signaller = id;
  live_.at(id).may_get_timestamps = e.timestamps != 0;
  if (previous) {
    // Re-signalled: the previous signaller's timestamps can no longer be read.
    if (auto it = live_.find(previous); it != live_.end()) it->second.may_get_timestamps = false;
    TryEmit(previous);
  }
}

void DeviceTimeline::ReleaseSignal(uint32_t pid, uint64_t event) {
  auto e = events_.find({pid, event});
  if (e == events_.end() || !e->second.signaller) return;
  const uint64_t previous = std::exchange(e->second.signaller, 0);
  if (auto it = live_.find(previous); it != live_.end()) it->second.may_get_timestamps = false;
  TryEmit(previous);
}

void DeviceTimeline::CompleteThrough(PidHandle engine, uint64_t last, Observer by) {
  auto eng = engines_.find(engine);
  if (eng == engines_.end()) return;
  auto& pending = eng->second.pending;
  while (!pending.empty() && pending.front() <= last) {
    const uint64_t id = pending.front();
    pending.pop_front();
    auto it = live_.find(id);
    if (it == live_.end()) continue;
    Instance& inst = it->second;
    inst.complete = true;
    inst.complete_by_ns = by.end_ns;
    inst.op.sync_tid = by.tid;
    inst.op.sync_ns = inst.complete_by_ns;
    TryEmit(id);
  }
}

void DeviceTimeline::CompleteSubmittedBefore(PidHandle engine, uint64_t before_ns, Observer by) {
  auto eng = engines_.find(engine);
  if (eng == engines_.end()) return;
  uint64_t last = 0;
  for (uint64_t id : eng->second.pending) {
    auto it = live_.find(id);
    if (it != live_.end() && it->second.op.submit_ns > before_ns) break;
    last = id;
  }
  if (last) CompleteThrough(engine, last, by);
}

void DeviceTimeline::CompleteEvent(PidHandle event, Observer by) {
  ClassifyBySignal(event.pid, event.handle);
  auto e = events_.find(event);
  if (e == events_.end() || !e->second.signaller) return;
  auto it = live_.find(e->second.signaller);
  if (it == live_.end()) return;
  CompleteThrough(it->second.engine, it->first, by);
}

void DeviceTimeline::ReadTimestamps(PidHandle event, uint64_t start, uint64_t end, Observer by) {
  CompleteEvent(event, by);
  auto e = events_.find(event);
  if (e == events_.end()) return;
  e->second.timestamps = 1;
  auto it = live_.find(e->second.signaller);
  if (it == live_.end()) return;
  Instance& inst = it->second;
  inst.has_timestamps = true;
  inst.ts_start = start;
  inst.ts_end = end;
  inst.ts_read_ns = by.end_ns;
  inst.may_get_timestamps = false;
  TryEmit(it->first);
}

void DeviceTimeline::DropEngine(PidHandle engine, Observer by) {
  CompleteThrough(engine, UINT64_MAX, by);
  engines_.erase(engine);
}

void DeviceTimeline::TryEmit(uint64_t id) {
  auto it = live_.find(id);
  if (it == live_.end()) return;
  Instance& inst = it->second;
  if (!inst.complete || (inst.may_get_timestamps && !inst.has_timestamps)) return;
  if (inst.has_timestamps) {
    auto model = clocks_.find(inst.op.device);
    const bool covered = model != clocks_.end() && model->second->ready() &&
                         model->second->newest_sample_ns() >= inst.complete_by_ns;
    if (!covered) {
      if (!inst.awaiting_clock) {
        inst.awaiting_clock = true;
        awaiting_clock_.push_back(id);
      }
      return;
    }
  }
  Emit(inst, true);
}

void DeviceTimeline::EmitCovered() {
  std::vector<uint64_t> waiting;
  waiting.swap(awaiting_clock_);
  for (uint64_t id : waiting) {
    auto it = live_.find(id);
    if (it == live_.end()) continue;
    it->second.awaiting_clock = false;
    TryEmit(id);
  }
}

void DeviceTimeline::Emit(Instance& inst, bool completion_seen) {
  DeviceOp& op = inst.op;
  // Estimated: it cannot have started before it was submitted, nor ended after the host saw
  // it complete.
  op.start_ns = op.submit_ns;
  // A fence its submission made signalled once the work was done: an earlier end bound.
  uint64_t done_by_ns = inst.complete_by_ns;
  if (inst.fence_signaled_ns) done_by_ns = std::min(done_by_ns, inst.fence_signaled_ns);
  op.end_ns = completion_seen ? std::max(done_by_ns, op.submit_ns) : op.submit_ns;
  op.completion_seen = completion_seen;
  auto model = clocks_.find(op.device);
  if (inst.has_timestamps && model != clocks_.end() && model->second->ready()) {
    const ClockModel& clock = *model->second;
    auto info = device_info_.find(op.device);
    const uint32_t bits = info != device_info_.end() && info->second.kernel_timestamp_bits
                              ? info->second.kernel_timestamp_bits
                              : kDefaultKernelTimestampBits;
    const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    const uint64_t end_ticks = clock.Unwrap(inst.ts_end, bits, inst.ts_read_ns);
    const uint64_t start_ticks = end_ticks - ((inst.ts_end - inst.ts_start) & mask);
    const uint64_t start_ns = clock.TicksToMonotonic(start_ticks);
    const uint64_t end_ns = clock.TicksToMonotonic(end_ticks);
    if (start_ns + kTimestampToleranceNs >= op.start_ns &&
        end_ns <= inst.complete_by_ns + kTimestampToleranceNs && start_ns <= end_ns) {
      op.start_ns = start_ns;
      op.end_ns = end_ns;
      op.start_ticks = start_ticks;
      op.end_ticks = end_ticks;
      op.measured = true;
    } else {
      ++stats_.timestamps_rejected;
    }
  }
  if (inst.visible) {
    sink_.OnEvent(op);
    ++stats_.device_ops;
    if (op.measured) ++stats_.measured;
    if (!completion_seen) ++stats_.completion_unseen;
  }
  live_.erase(op.id);
  stats_.pending_ops = live_.size();
}

void DeviceTimeline::ForceOut(PidHandle engine) {
  auto& pending = engines_.at(engine).pending;
  const uint64_t id = pending.front();
  pending.pop_front();
  if (auto it = live_.find(id); it != live_.end()) Emit(it->second, false);
}

void DeviceTimeline::Finish() {
  for (const auto& [handle, list] : lists_)
    if (list.unclassified()) stats_.unclassified_dropped += list.commands.size();
  // Ids are in submission order: write in that order.
  std::vector<uint64_t> ids;
  ids.reserve(live_.size());
  for (const auto& [id, inst] : live_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (uint64_t id : ids) {
    Instance& inst = live_.at(id);
    Emit(inst, inst.complete);
  }
  awaiting_clock_.clear();
}

void DeviceTimeline::CountObjects() {
  stats_.live_objects = lists_.size() + queues_.size() + engines_.size() + pools_.size() +
                        events_.size() + fences_.size() + graphs_.size() +
                        executables_.size() + devices_.size() +
                        unclassified_signals_.size();
  stats_.peak_live_objects = std::max(stats_.peak_live_objects, stats_.live_objects);
}

}  // namespace xtrace
