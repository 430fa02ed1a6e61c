// How each recorded Level Zero call moves the device timeline (see device_timeline.h): the
// call arrives as the typed view of its function (model/ze_api_views.h), so every argument is
// read by the name the ze_api table gives it, never by its slot.
#include "correlate/device_timeline.h"

#include <algorithm>
#include <string>

#include "correlate/device_timeline_state.h"
#include "correlate/event_sink.h"
#include "model/ze_api_views.h"

namespace xtrace {
namespace {

constexpr uint32_t kPoolKernelTimestampFlag = 1u << 2;  // ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP
// ze_event_counter_based_flags_t DEVICE_TIMESTAMP and HOST_TIMESTAMP (Intel's
// ZEX_COUNTER_BASED_EVENT_FLAG_KERNEL_TIMESTAMP and ..._KERNEL_MAPPED_TIMESTAMP: the same bits).
constexpr uint32_t kCounterBasedTimestampFlags = (1u << 4) | (1u << 5);
constexpr uint32_t kModeSynchronous = 1;                // ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS

// An id the table knows that names an append.
bool IsAppendId(uint16_t fn) {
  const ZeApiInfo* api = FindZeApi(fn);
  return api && IsZeAppend(api->fn);
}

}  // namespace

// One operator() per function the timeline follows; the template takes the rest (appends, and
// calls that do not touch the device timeline). Only successful calls reach it.
class DeviceTimeline::CallHandler {
 public:
  CallHandler(DeviceTimeline& tl, const DecodedZeExecute* execute) : tl_(tl), execute_(execute) {}

  template <uint16_t Fn>
  void operator()(const ZeCall<Fn>& c) {
    if constexpr (IsZeAppend(Fn)) Append(c);
  }

  void operator()(const ZeCall<XT_ZE_DEVICE_GET>& c) {
    const auto devices = c.Elements();
    for (uint32_t i = 0; i < devices.size(); ++i)
      if (devices[i]) tl_.devices_.Learn(c.pid(), devices[i], i);
  }

  void operator()(const ZeCall<XT_ZE_DEVICE_GET_PROPERTIES>& c) {
    const DeviceUuid uuid{c.Get<"uuid_lo">(), c.Get<"uuid_hi">()};
    if (tl_.devices_.LearnUuid(c.pid(), c.Get<"device">(), uuid)) return;
    std::string unmatched = "pid " + std::to_string(c.pid()) + ": " + uuid.Hex();
    auto& list = tl_.stats_.unmatched_devices;
    if (std::find(list.begin(), list.end(), unmatched) == list.end()) list.push_back(unmatched);
  }

  void operator()(const ZeCall<XT_ZE_DEVICE_GET_GLOBAL_TIMESTAMPS>& c) {
    const uint64_t host = c.Get<"host_timestamp">();
    const uint64_t ticks = c.Get<"device_timestamp">();
    // Level Zero's host time is CLOCK_MONOTONIC_RAW; without readings to map it, the middle
    // of the call is within half its duration of the instant.
    const uint64_t mono = tl_.host_clocks_.ready()
                              ? tl_.host_clocks_.RawToMonotonic(host)
                              : c.start_ns() + (c.end_ns() - c.start_ns()) / 2;
    const uint32_t device = tl_.devices_.IndexOf(c.pid(), c.Get<"device">());
    tl_.sink_.OnEvent(ClockSample{device, c.pid(), ticks, host, mono, 0});
    if (device != kUnknownDevice) tl_.OnClockReading(device, ticks, mono);
  }

  void operator()(const ZeCall<XT_ZE_COMMAND_QUEUE_CREATE>& c) {
    const PidHandle queue{c.pid(), c.Get<"command_queue">()};
    if (c.call().learned) {
      // Made before the attach: its engine, asked of the process. Level Zero cannot say a
      // queue's device; the lists it executes say it (Execute).
      QueueState& q = tl_.queues_[queue];
      q.device = kUnknownDevice;
      q.ordinal = c.Get<"ordinal">();
      q.index = c.Get<"index">();
      return;
    }
    tl_.DropEngine(queue, By(c));
    tl_.queues_[queue] = {tl_.devices_.IndexOf(c.pid(), c.Get<"device">()), c.Get<"ordinal">(),
                          c.Get<"index">(), c.Get<"mode">() == kModeSynchronous};
  }

  void operator()(const ZeCall<XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS>& c) {
    tl_.Execute(c.call(), c.Get<"command_queue">(), c.Get<"fence">(), c.Get<"command_list">(),
                execute_);
  }

  void operator()(const ZeCall<XT_ZE_COMMAND_QUEUE_SYNCHRONIZE>& c) {
    tl_.CompleteSubmittedBefore({c.pid(), c.Get<"command_queue">()}, c.start_ns(), By(c));
  }

  // An immediate list is its own engine: its host synchronize is a queue's.
  void operator()(const ZeCall<XT_ZE_COMMAND_LIST_HOST_SYNCHRONIZE>& c) {
    ImmediateOnly(c.pid(), c.Get<"command_list">());
    tl_.CompleteSubmittedBefore({c.pid(), c.Get<"command_list">()}, c.start_ns(), By(c));
  }

  // Regular lists run on an immediate list's engine, as an execution on a queue runs them.
  void operator()(const ZeCall<XT_ZE_COMMAND_LIST_IMMEDIATE_APPEND_COMMAND_LISTS_EXP>& c) {
    ImmediateOnly(c.pid(), c.Get<"command_list">());
    tl_.Execute(c.call(), c.Get<"command_list">(), 0, c.Get<"first_command_list">(), execute_);
  }

  // Graphs: a list's appends from the beginning of a capture to its end are recorded, not run;
  // an instantiation copies them; each replay runs them again.
  void operator()(const ZeCall<XT_ZE_COMMAND_LIST_BEGIN_GRAPH_CAPTURE_EXP>& c) {
    BeginCapture(c.pid(), c.Get<"command_list">(), 0);
  }
  void operator()(const ZeCall<XT_ZE_COMMAND_LIST_BEGIN_CAPTURE_INTO_GRAPH_EXP>& c) {
    BeginCapture(c.pid(), c.Get<"command_list">(), c.Get<"graph">());
  }

  void operator()(const ZeCall<XT_ZE_COMMAND_LIST_END_GRAPH_CAPTURE_EXP>& c) {
    auto it = tl_.lists_.find({c.pid(), c.Get<"command_list">()});
    if (it == tl_.lists_.end() || !it->second.capturing) {
      tl_.EndCaptureBegunBefore(c.pid(), c.Get<"command_list">(), c.Get<"graph">());
      return;
    }
    ListState& list = it->second;
    // Into the caller's graph, else the one the call made (phGraph may be null for the first).
    const uint64_t graph = list.capture_into ? list.capture_into : c.Get<"graph">();
    if (graph) {
      auto& commands = tl_.graphs_[{c.pid(), graph}].commands;
      commands.insert(commands.end(), list.captured.begin(), list.captured.end());
    }
    list.capturing = false;
    list.capture_into = 0;
    list.captured.clear();
  }

  void operator()(const ZeCall<XT_ZE_COMMAND_LIST_INSTANTIATE_GRAPH_EXP>& c) {
    // A graph recorded before the capture leaves its executable graph unknown (no entry).
    auto graph = tl_.graphs_.find({c.pid(), c.Get<"graph">()});
    if (graph == tl_.graphs_.end()) return;
    tl_.executables_[{c.pid(), c.Get<"executable_graph">()}] = {
        graph->second.commands, 0, graph->second.begun_before_capture};
  }

  void operator()(const ZeCall<XT_ZE_COMMAND_LIST_APPEND_GRAPH_EXP>& c) {
    tl_.AppendGraph(c.call(), c.Get<"command_list">(), c.Get<"executable_graph">(),
                    c.Get<"signal_event">());
  }

  void operator()(const ZeCall<XT_ZE_GRAPH_CREATE_EXP>& c) {
    tl_.graphs_[{c.pid(), c.Get<"graph">()}] = {};
  }
  void operator()(const ZeCall<XT_ZE_GRAPH_DESTROY_EXP>& c) {
    tl_.graphs_.erase({c.pid(), c.Get<"graph">()});
  }
  void operator()(const ZeCall<XT_ZE_EXECUTABLE_GRAPH_DESTROY_EXP>& c) {
    tl_.executables_.erase({c.pid(), c.Get<"executable_graph">()});
  }

  void operator()(const ZeCall<XT_ZE_EVENT_COUNTER_BASED_CREATE>& c) { CounterBasedEvent(c); }
  void operator()(const ZeCall<XT_ZE_EX_COUNTER_BASED_EVENT_CREATE2>& c) { CounterBasedEvent(c); }

  void operator()(const ZeCall<XT_ZE_COMMAND_QUEUE_DESTROY>& c) {
    const PidHandle queue{c.pid(), c.Get<"command_queue">()};
    tl_.DropEngine(queue, By(c));
    tl_.queues_.erase(queue);
  }

  void operator()(const ZeCall<XT_ZE_COMMAND_LIST_CREATE>& c) {
    if (c.call().learned) return LearnList(c, /*immediate=*/false);
    ListState list = NewList(c);
    list.immediate = false;
    tl_.lists_[{c.pid(), c.Get<"command_list">()}] = std::move(list);
  }

  void operator()(const ZeCall<XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE>& c) {
    if (c.call().learned) return LearnList(c, /*immediate=*/true);
    ListState list = NewList(c);
    list.immediate = true;
    list.index = c.Get<"index">();
    list.synchronous = c.Get<"mode">() == kModeSynchronous;
    tl_.lists_[{c.pid(), c.Get<"command_list">()}] = std::move(list);
  }

  void operator()(const ZeCall<XT_ZE_COMMAND_LIST_CLOSE>& c) {
    tl_.lists_[{c.pid(), c.Get<"command_list">()}].regular_seen = true;
  }

  void operator()(const ZeCall<XT_ZE_COMMAND_LIST_RESET>& c) {
    // A regular list forgets its commands (executions in flight keep their instances); an
    // immediate list waits for its work first. What an unclassified list held is dropped:
    // nothing says whether it ran.
    const PidHandle list{c.pid(), c.Get<"command_list">()};
    ListState& state = tl_.lists_[list];
    if (state.unclassified()) tl_.stats_.unclassified_dropped += state.commands.size();
    state.commands.clear();
    state.recorded_in_capture = true;
    tl_.CompleteThrough(list, UINT64_MAX, By(c));
  }

  void operator()(const ZeCall<XT_ZE_COMMAND_LIST_DESTROY>& c) {
    const PidHandle list{c.pid(), c.Get<"command_list">()};
    tl_.DropEngine(list, By(c));
    if (auto it = tl_.lists_.find(list); it != tl_.lists_.end() && it->second.unclassified())
      tl_.stats_.unclassified_dropped += it->second.commands.size();
    tl_.lists_.erase(list);
  }

  void operator()(const ZeCall<XT_ZE_EVENT_POOL_CREATE>& c) {
    tl_.pools_[{c.pid(), c.Get<"event_pool">()}] = c.Get<"flags">();
  }

  void operator()(const ZeCall<XT_ZE_EVENT_POOL_DESTROY>& c) {
    tl_.pools_.erase({c.pid(), c.Get<"event_pool">()});
  }

  void operator()(const ZeCall<XT_ZE_EVENT_CREATE>& c) {
    const uint64_t event = c.Get<"event">();
    // A learned event (made before the attach) keeps what it signals: only its pool is news.
    if (!c.call().learned) tl_.ReleaseSignal(c.pid(), event);
    EventState e = c.call().learned ? tl_.events_[{c.pid(), event}] : EventState{};
    if (auto pool = tl_.pools_.find({c.pid(), c.Get<"event_pool">()}); pool != tl_.pools_.end())
      e.timestamps = (pool->second & kPoolKernelTimestampFlag) ? 1 : 0;
    tl_.events_[{c.pid(), event}] = e;
  }

  void operator()(const ZeCall<XT_ZE_EVENT_DESTROY>& c) {
    const uint64_t event = c.Get<"event">();
    tl_.ReleaseSignal(c.pid(), event);
    tl_.events_.erase({c.pid(), event});
  }

  void operator()(const ZeCall<XT_ZE_EVENT_HOST_SIGNAL>& c) {
    tl_.ReleaseSignal(c.pid(), c.Get<"event">());
  }
  void operator()(const ZeCall<XT_ZE_EVENT_HOST_RESET>& c) {
    tl_.ReleaseSignal(c.pid(), c.Get<"event">());
  }

  void operator()(const ZeCall<XT_ZE_EVENT_HOST_SYNCHRONIZE>& c) {
    tl_.CompleteEvent({c.pid(), c.Get<"event">()}, By(c));
  }
  void operator()(const ZeCall<XT_ZE_EVENT_QUERY_STATUS>& c) {
    tl_.CompleteEvent({c.pid(), c.Get<"event">()}, By(c));
  }

  void operator()(const ZeCall<XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP>& c) {
    tl_.ReadTimestamps({c.pid(), c.Get<"event">()}, c.Get<"global_start">(),
                       c.Get<"global_end">(), By(c));
  }

  void operator()(const ZeCall<XT_ZE_EVENT_QUERY_TIMESTAMPS_EXP>& c) {
    // A call that only asks for the count reads no timestamps (both stay 0).
    const uint64_t start = c.Get<"global_start">();
    const uint64_t end = c.Get<"global_end">();
    if (start || end) tl_.ReadTimestamps({c.pid(), c.Get<"event">()}, start, end, By(c));
  }

  void operator()(const ZeCall<XT_ZE_FENCE_CREATE>& c) {
    tl_.fences_[{c.pid(), c.Get<"fence">()}] = {c.Get<"command_queue">(), 0};
  }

  void operator()(const ZeCall<XT_ZE_FENCE_HOST_SYNCHRONIZE>& c) { FenceSeen(c); }
  void operator()(const ZeCall<XT_ZE_FENCE_QUERY_STATUS>& c) { FenceSeen(c); }

  void operator()(const ZeCall<XT_ZE_FENCE_DESTROY>& c) {
    tl_.fences_.erase({c.pid(), c.Get<"fence">()});
  }

 private:
  template <uint16_t Fn>
  static Observer By(const ZeCall<Fn>& c) {
    return {c.tid(), c.end_ns()};
  }

  // zeCommandListCreate and zeCommandListCreateImmediate: what both descriptors say.
  template <uint16_t Fn>
  ListState NewList(const ZeCall<Fn>& c) {
    tl_.DropEngine({c.pid(), c.template Get<"command_list">()}, By(c));
    ListState list;
    list.device = tl_.devices_.IndexOf(c.pid(), c.template Get<"device">());
    list.created_in_capture = true;
    list.engine_known = true;
    list.ordinal = c.template Get<"ordinal">();
    return list;
  }

  // A list made before the attach, as the process's loader described it: its device and
  // engine, and its kind, which classifies it (appends it held wait no longer). What was
  // recorded in it before the attach stays unknown.
  template <uint16_t Fn>
  void LearnList(const ZeCall<Fn>& c, bool immediate) {
    const PidHandle handle{c.pid(), c.template Get<"command_list">()};
    ListState& list = tl_.lists_[handle];
    list.device = tl_.devices_.IndexOf(c.pid(), c.template Get<"device">());
    list.engine_known = true;
    list.ordinal = c.template Get<"ordinal">();
    if constexpr (ZeCall<Fn>::template Has<"index">) list.index = c.template Get<"index">();
    if (!list.unclassified()) return;
    if (immediate) tl_.ClassifyImmediate(handle);
    else list.regular_seen = true;
  }

  // A counter-based event: no pool, its own flags say whether it holds kernel timestamps.
  template <uint16_t Fn>
  void CounterBasedEvent(const ZeCall<Fn>& c) {
    const uint64_t event = c.template Get<"event">();
    tl_.ReleaseSignal(c.pid(), event);
    EventState e;
    e.timestamps = (c.template Get<"flags">() & kCounterBasedTimestampFlags) ? 1 : 0;
    tl_.events_[{c.pid(), event}] = e;
  }

  // A call the specification allows on immediate lists only: a list made before the capture
  // that is still unclassified is one (what it holds was submitted when appended).
  void ImmediateOnly(uint32_t pid, uint64_t list_handle) {
    if (tl_.lists_[{pid, list_handle}].unclassified()) tl_.ClassifyImmediate({pid, list_handle});
  }

  void BeginCapture(uint32_t pid, uint64_t list_handle, uint64_t into) {
    ListState& list = tl_.lists_[{pid, list_handle}];
    list.capturing = true;
    list.capture_into = into;
    list.captured.clear();
  }

  // The fence signalled: what its queue ran up to its last execution is done.
  template <uint16_t Fn>
  void FenceSeen(const ZeCall<Fn>& c) {
    auto f = tl_.fences_.find({c.pid(), c.template Get<"fence">()});
    if (f != tl_.fences_.end() && f->second.last)
      tl_.CompleteThrough({c.pid(), f->second.queue}, f->second.last, By(c));
  }

  template <uint16_t Fn>
  void Append(const ZeCall<Fn>& c) {
    if constexpr (Fn == XT_ZE_APPEND_MEMORY_PREFETCH) {
      return;  // a hint: nothing runs
    } else {
      Template t;
      AppendedCommand& command = t.command;
      if constexpr (Fn == XT_ZE_APPEND_MEMORY_COPY || Fn == XT_ZE_APPEND_MEMORY_COPY_REGION) {
        command.kind = DeviceOpKind::kCopy;
        command.bytes = c.template Get<"size">();
      } else if constexpr (Fn == XT_ZE_APPEND_MEMORY_FILL) {
        command.kind = DeviceOpKind::kFill;
        command.bytes = c.template Get<"size">();
      } else if constexpr (Fn == XT_ZE_APPEND_HOST_FUNCTION || Fn == XT_ZE_EX_APPEND_HOST_FUNCTION) {
        // The host runs it when the list reaches it, and the list waits for it: work on the
        // list's timeline like any other, bounded by its submission and the host seeing it done.
        command.kind = DeviceOpKind::kHostFunction;
      } else if constexpr (Fn == XT_ZE_APPEND_LAUNCH_MULTIPLE_KERNELS_INDIRECT) {
        // Which kernels run, and how many, the device reads from its memory: one operation
        // named after the call stands for them.
        command.kind = DeviceOpKind::kKernel;
      } else {
        t.visible = false;  // barriers, event and timestamp commands
      }
      if (t.visible) command.name = tl_.strings_.Intern(ZeCall<Fn>::kApi.symbol);
      command.signal_event = c.template GetOrZero<"signal_event">();
      command.append_tid = c.tid();
      command.append_ns = c.start_ns();
      t.append_end_ns = c.end_ns();
      tl_.Append(c.pid(), c.template Get<"command_list">(), t);
    }
  }

  DeviceTimeline& tl_;
  const DecodedZeExecute* execute_;
};

void DeviceTimeline::OnCall(const ApiCall& call, const DecodedZeExecute* execute) {
  // A failed call changed nothing.
  if (call.result == 0) VisitZeCall(call, CallHandler(*this, execute));
  // A successful append counts objects itself where it adds one (Append).
  if (call.result != 0 || !IsAppendId(call.fn)) CountObjects();
}

}  // namespace xtrace
