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

#include "correlate/event_sink.h"
#include "model/ze_api.h"

namespace xtrace {
namespace {

constexpr uint32_t kPoolKernelTimestampFlag = 1u << 2;  // ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP
constexpr uint64_t kModeSynchronous = 1;                // ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS
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

struct DeviceTimeline::Template {
  DeviceOpKind kind = DeviceOpKind::kKernel;
  bool visible = true;  // a kernel or memory operation (barriers and event ops only order)
  StringId name = kEmptyString;
  uint64_t kernel = 0;
  uint32_t group_count[3] = {0, 0, 0};
  uint64_t bytes = 0;
  uint64_t signal_event = 0;
  uint32_t append_tid = 0;
  uint64_t append_ns = 0;      // the append's start
  uint64_t append_end_ns = 0;  // and end
};

struct DeviceTimeline::ListState {
  uint32_t device = kUnknownDevice;
  bool created_in_capture = false;
  bool immediate = false;
  // A list created before the capture began is unclassified until it shows what it is:
  // closed or executed (regular), or work appended to it seen complete (immediate). Until
  // then its appends wait in `commands`.
  bool regular_seen = false;
  bool immediate_seen = false;
  bool unclassified() const { return !created_in_capture && !regular_seen && !immediate_seen; }
  bool synchronous = false;
  uint32_t ordinal = 0;
  uint32_t index = 0;
  std::vector<Template> commands;  // regular lists: what an execution runs
  uint64_t executions = 0;
};

struct DeviceTimeline::QueueState {
  uint32_t device = kUnknownDevice;
  uint32_t ordinal = 0;
  uint32_t index = 0;
  bool synchronous = false;
};

struct DeviceTimeline::EngineState {
  std::deque<uint64_t> pending;  // instance ids not yet complete, in submission order
  uint32_t device = kUnknownDevice;
  uint32_t track = 0;
};

struct DeviceTimeline::EventState {
  int timestamps = -1;     // its pool has kernel timestamps: 1 yes, 0 no, -1 unknown
  uint64_t signaller = 0;  // the instance that signals it next, 0 none
};

struct DeviceTimeline::FenceState {
  uint64_t queue = 0;
  uint64_t last = 0;  // instances up to this id on the queue complete when it signals
};

struct DeviceTimeline::Instance {
  DeviceOp op;
  PidHandle engine;
  bool visible = true;
  bool complete = false;
  uint64_t complete_by_ns = 0;
  uint64_t fence_signaled_ns = 0;  // a fence of its submission signalled then, 0: none seen
  bool may_get_timestamps = false;  // its signal event may still be read
  bool has_timestamps = false;
  uint64_t ts_start = 0, ts_end = 0, ts_read_ns = 0;
  bool awaiting_clock = false;
};

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
  t.kind = DeviceOpKind::kKernel;
  t.name = l.kernel_name;
  t.kernel = l.kernel;
  std::copy(std::begin(l.group_count), std::end(l.group_count), t.group_count);
  t.signal_event = l.signal_event;
  t.append_tid = l.tid;
  t.append_ns = l.start_ns;
  t.append_end_ns = l.end_ns;
  Append(l.pid, l.command_list, t);
}

void DeviceTimeline::OnAppend(const ApiCall& call) {
  Template t;
  t.signal_event = call.arg[1];
  t.append_tid = call.tid;
  t.append_ns = call.start_ns;
  t.append_end_ns = call.end_ns;
  switch (call.fn) {
    case XT_ZE_APPEND_MEMORY_COPY:
    case XT_ZE_APPEND_MEMORY_COPY_REGION:
      t.kind = DeviceOpKind::kCopy;
      t.bytes = call.arg[5];
      break;
    case XT_ZE_APPEND_MEMORY_FILL:
      t.kind = DeviceOpKind::kFill;
      t.bytes = call.arg[5];
      break;
    case XT_ZE_APPEND_MEMORY_PREFETCH:
      return;  // a hint: nothing runs
    default:
      t.visible = false;  // barriers, event and timestamp commands
      break;
  }
  if (t.visible) t.name = strings_.Intern(FindZeApi(call.fn)->symbol);
  Append(call.pid, call.arg[0], t);
}

void DeviceTimeline::Append(uint32_t pid, uint64_t list_handle, Template t) {
  ListState& list = lists_[{pid, list_handle}];
  if (list.unclassified()) {
    list.commands.push_back(t);
    if (t.signal_event) unclassified_signals_[{pid, t.signal_event}] = list_handle;
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
      Submit(pid, t, engine, list.device, t.append_tid, t.append_ns, list_handle, 0);
  NoteSubmittingCall(pid, t.append_tid, t.append_ns, t.append_end_ns, id, id);
  // A synchronous immediate list returns from the append when the work is done.
  if (list.synchronous) {
    ApiCall append;
    append.pid = pid;
    append.tid = t.append_tid;
    append.end_ns = t.append_end_ns;
    CompleteThrough(engine, id, append);
  }
  CountObjects();
}

void DeviceTimeline::ClassifyImmediate(PidHandle handle) {
  ListState& list = lists_[handle];
  list.immediate_seen = true;
  std::vector<Template> appended;
  appended.swap(list.commands);
  // They were submitted when appended, as everything on an immediate list is.
  for (const Template& t : appended)
    Submit(handle.pid, t, handle, list.device, t.append_tid, t.append_ns, handle.handle, 0);
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

void DeviceTimeline::Execute(const ApiCall& call, const DecodedZeExecute* execute) {
  const PidHandle engine{call.pid, call.arg[0]};
  auto q = queues_.find(engine);
  const uint32_t n = execute ? execute->lists_copied : (call.arg[3] ? 1 : 0);
  const uint64_t first_id = next_id_;
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t handle = execute ? execute->list(i) : call.arg[3];
    ListState& list = lists_[{call.pid, handle}];
    list.regular_seen = true;
    ++list.executions;
    const uint32_t device = q != queues_.end() ? q->second.device : list.device;
    for (const Template& t : list.commands)
      Submit(call.pid, t, engine, device, call.tid, call.start_ns, handle, list.executions);
  }
  if (next_id_ > first_id)
    NoteSubmittingCall(call.pid, call.tid, call.start_ns, call.end_ns, first_id, next_id_ - 1);
  if (const uint64_t fence = call.arg[1]) {
    FenceState& f = fences_[{call.pid, fence}];
    f.queue = call.arg[0];
    f.last = next_id_ - 1;
  }
  if (q != queues_.end() && q->second.synchronous) CompleteThrough(engine, next_id_ - 1, call);
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
    if (auto q = queues_.find(engine); q != queues_.end()) {
      info.ordinal = q->second.ordinal;
      info.index = q->second.index;
    } else if (auto l = lists_.find(engine); l != lists_.end()) {
      info.immediate = true;
      info.ordinal = l->second.ordinal;
      info.index = l->second.index;
    }
    sink_.OnEvent(info);
  }
  const uint64_t id = next_id_++;
  Instance inst;
  inst.engine = engine;
  inst.visible = t.visible;
  DeviceOp& op = inst.op;
  op.pid = pid;
  op.device = eng->second.device;
  op.queue = engine.handle;
  op.track = eng->second.track;
  op.command_list = list;
  op.id = id;
  op.kind = t.kind;
  op.name = t.name;
  op.append_tid = t.append_tid;
  op.append_ns = t.append_ns;
  op.submit_tid = submit_tid;
  op.submit_ns = submit_ns;
  op.execution = execution;
  op.kernel = t.kernel;
  std::copy(std::begin(t.group_count), std::end(t.group_count), op.group_count);
  op.bytes = t.bytes;
  op.signal_event = t.signal_event;
  live_.emplace(id, std::move(inst));
  eng->second.pending.push_back(id);
  if (t.signal_event) BindSignal(pid, t.signal_event, id);
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

void DeviceTimeline::CompleteThrough(PidHandle engine, uint64_t last, const ApiCall& call) {
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
    inst.complete_by_ns = call.end_ns;
    inst.op.sync_tid = call.tid;
    inst.op.sync_ns = inst.complete_by_ns;
    TryEmit(id);
  }
}

void DeviceTimeline::CompleteSubmittedBefore(PidHandle engine, uint64_t before_ns,
                                             const ApiCall& call) {
  auto eng = engines_.find(engine);
  if (eng == engines_.end()) return;
  uint64_t last = 0;
  for (uint64_t id : eng->second.pending) {
    auto it = live_.find(id);
    if (it != live_.end() && it->second.op.submit_ns > before_ns) break;
    last = id;
  }
  if (last) CompleteThrough(engine, last, call);
}

void DeviceTimeline::CompleteEvent(const ApiCall& call, uint64_t event) {
  ClassifyBySignal(call.pid, event);
  auto e = events_.find({call.pid, event});
  if (e == events_.end() || !e->second.signaller) return;
  auto it = live_.find(e->second.signaller);
  if (it == live_.end()) return;
  CompleteThrough(it->second.engine, it->first, call);
}

void DeviceTimeline::ReadTimestamps(const ApiCall& call, uint64_t event, uint64_t start,
                                    uint64_t end) {
  CompleteEvent(call, event);
  auto e = events_.find({call.pid, event});
  if (e == events_.end()) return;
  e->second.timestamps = 1;
  auto it = live_.find(e->second.signaller);
  if (it == live_.end()) return;
  Instance& inst = it->second;
  inst.has_timestamps = true;
  inst.ts_start = start;
  inst.ts_end = end;
  inst.ts_read_ns = call.end_ns;
  inst.may_get_timestamps = false;
  TryEmit(it->first);
}

void DeviceTimeline::DropEngine(PidHandle engine, const ApiCall& call) {
  CompleteThrough(engine, UINT64_MAX, call);
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
                        events_.size() + fences_.size() + devices_.size() +
                        unclassified_signals_.size();
  stats_.peak_live_objects = std::max(stats_.peak_live_objects, stats_.live_objects);
}

void DeviceTimeline::OnCall(const ApiCall& call, const DecodedZeExecute* execute) {
  const bool ok = call.result == 0;
  const PidHandle self{call.pid, call.arg[0]};
  const PidHandle created{call.pid, call.arg[5]};
  if (ok && call.fn >= XT_ZE_APPEND_MEMORY_COPY && call.fn <= XT_ZE_APPEND_QUERY_KERNEL_TIMESTAMPS) {
    OnAppend(call);
    return;
  }
  switch (call.fn) {
    case XT_ZE_DEVICE_GET:
      if (ok)
        for (uint32_t i = 0; i < 4 && i < call.arg[1]; ++i)
          if (call.arg[2 + i]) devices_.Learn(call.pid, call.arg[2 + i], i);
      break;
    case XT_ZE_DEVICE_GET_GLOBAL_TIMESTAMPS:
      if (ok) {
        // Level Zero's host time is CLOCK_MONOTONIC_RAW; without readings to map it, the
        // middle of the call is within half its duration of the instant.
        const uint64_t mono = host_clocks_.ready() ? host_clocks_.RawToMonotonic(call.arg[1])
                                                   : call.start_ns + (call.end_ns - call.start_ns) / 2;
        const uint32_t device = devices_.IndexOf(call.pid, call.arg[0]);
        sink_.OnEvent(ClockSample{device, call.pid, call.arg[2], call.arg[1], mono, 0});
        if (device != kUnknownDevice) OnClockReading(device, call.arg[2], mono);
      }
      break;
    case XT_ZE_COMMAND_QUEUE_CREATE:
      if (ok) {
        DropEngine(created, call);
        queues_[created] = {devices_.IndexOf(call.pid, call.arg[1]), uint32_t(call.arg[2]),
                            uint32_t(call.arg[3]), call.arg[4] == kModeSynchronous};
      }
      break;
    case XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS:
      if (ok) Execute(call, execute);
      break;
    case XT_ZE_COMMAND_QUEUE_SYNCHRONIZE:
      if (ok) CompleteSubmittedBefore(self, call.start_ns, call);
      break;
    case XT_ZE_COMMAND_QUEUE_DESTROY:
      if (ok) {
        DropEngine(self, call);
        queues_.erase(self);
      }
      break;
    case XT_ZE_COMMAND_LIST_CREATE:
    case XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE:
      if (ok) {
        DropEngine(created, call);
        ListState list;
        list.device = devices_.IndexOf(call.pid, call.arg[1]);
        list.created_in_capture = true;
        list.immediate = call.fn == XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE;
        list.ordinal = uint32_t(call.arg[2]);
        if (list.immediate) {
          list.index = uint32_t(call.arg[3]);
          list.synchronous = call.arg[4] == kModeSynchronous;
        }
        lists_[created] = std::move(list);
      }
      break;
    case XT_ZE_COMMAND_LIST_CLOSE:
      if (ok) lists_[self].regular_seen = true;
      break;
    case XT_ZE_COMMAND_LIST_RESET:
      if (ok) {
        // A regular list forgets its commands (executions in flight keep their instances);
        // an immediate list waits for its work first. What an unclassified list held is
        // dropped: nothing says whether it ran.
        if (auto it = lists_.find(self); it != lists_.end()) {
          if (it->second.unclassified()) stats_.unclassified_dropped += it->second.commands.size();
          it->second.commands.clear();
        }
        CompleteThrough(self, UINT64_MAX, call);
      }
      break;
    case XT_ZE_COMMAND_LIST_DESTROY:
      if (ok) {
        DropEngine(self, call);
        if (auto it = lists_.find(self); it != lists_.end() && it->second.unclassified())
          stats_.unclassified_dropped += it->second.commands.size();
        lists_.erase(self);
      }
      break;
    case XT_ZE_EVENT_POOL_CREATE:
      if (ok) pools_[created] = uint32_t(call.arg[1]);
      break;
    case XT_ZE_EVENT_POOL_DESTROY:
      if (ok) pools_.erase(self);
      break;
    case XT_ZE_EVENT_CREATE:
      if (ok) {
        ReleaseSignal(call.pid, call.arg[5]);
        EventState e;
        if (auto pool = pools_.find(self); pool != pools_.end())
          e.timestamps = (pool->second & kPoolKernelTimestampFlag) ? 1 : 0;
        events_[created] = e;
      }
      break;
    case XT_ZE_EVENT_DESTROY:
      if (ok) {
        ReleaseSignal(call.pid, call.arg[0]);
        events_.erase(self);
      }
      break;
    case XT_ZE_EVENT_HOST_SIGNAL:
    case XT_ZE_EVENT_HOST_RESET:
      if (ok) ReleaseSignal(call.pid, call.arg[0]);
      break;
    case XT_ZE_EVENT_HOST_SYNCHRONIZE:
    case XT_ZE_EVENT_QUERY_STATUS:
      if (ok) CompleteEvent(call, call.arg[0]);
      break;
    case XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP:
      if (ok) ReadTimestamps(call, call.arg[0], call.arg[1], call.arg[2]);
      break;
    case XT_ZE_EVENT_QUERY_TIMESTAMPS_EXP:
      // A call that only asks for the count reads no timestamps (both stay 0).
      if (ok && (call.arg[3] || call.arg[4])) ReadTimestamps(call, call.arg[0], call.arg[3], call.arg[4]);
      break;
    case XT_ZE_FENCE_CREATE:
      if (ok) fences_[created] = {call.arg[0], 0};
      break;
    case XT_ZE_FENCE_HOST_SYNCHRONIZE:
    case XT_ZE_FENCE_QUERY_STATUS:
      if (ok)
        if (auto f = fences_.find(self); f != fences_.end() && f->second.last)
          CompleteThrough({call.pid, f->second.queue}, f->second.last, call);
      break;
    case XT_ZE_FENCE_DESTROY:
      if (ok) fences_.erase(self);
      break;
    default:
      break;
  }
  CountObjects();
}

}  // namespace xtrace
