// The device side of a capture, rebuilt from host calls: every kernel and memory operation a
// process appends becomes one DeviceOp per execution, timed by the kernel timestamps the
// process itself read (mapped through a per-device ClockModel) or, where it read none,
// estimated from the host calls that bound it. Follows handle lifetimes (command lists,
// queues, events, fences) and forgets destroyed objects, so memory stays bounded by what the
// traced processes hold alive.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "correlate/clock_model.h"
#include "correlate/pid_handle.h"
#include "correlate/submission_fences.h"
#include "correlate/ze_devices.h"
#include "decode/record_decoder.h"
#include "model/event.h"
#include "model/string_table.h"

namespace xtrace {

class EventSink;

struct TimelineStats {
  uint64_t device_ops = 0;           // DeviceOps emitted
  uint64_t measured = 0;             // of them, timed by kernel timestamps
  uint64_t completion_unseen = 0;    // of them, never seen complete by the host
  uint64_t timestamps_rejected = 0;  // timestamps that contradicted the host-side bounds
  // Appends to lists created before the capture that never showed whether they were
  // immediate or regular (see ListState): not drawn.
  uint64_t unclassified_dropped = 0;
  // Replays (zeCommandListAppendGraphExp) of executable graphs whose recording xtrace did not
  // see (made before the capture began): each is one operation named kUnknownGraphName.
  uint64_t unknown_graph_replays = 0;
  // Replays of graphs whose capture began before xtrace's and ended under its eyes: the
  // commands appended since run as recorded, after one operation named kPartlyKnownGraphName
  // for those appended before.
  uint64_t partly_known_graph_replays = 0;
  // Executions of regular lists recorded before the attach (neither created nor reset since):
  // what they ran is unknown, so they yield no operations.
  uint64_t executions_recorded_before = 0;
  uint64_t live_objects = 0;         // command lists, queues, events, pools, fences held now
  uint64_t peak_live_objects = 0;
  uint64_t pending_ops = 0;          // operations submitted and not yet emitted
  uint64_t peak_pending_ops = 0;
  // Devices of traced processes whose UUID is none of xtrace's: "pid P: <uuid hex>", once
  // each. Their operations have no device clock to place them.
  std::vector<std::string> unmatched_devices;
};

// The name of the one operation that stands for a replay of a graph recorded before the capture.
inline constexpr const char* kUnknownGraphName =
    "zeCommandListAppendGraphExp: graph recorded before the capture (contents unknown)";
// The operation that stands for what a graph whose capture began before xtrace's recorded
// before then, at each of its replays.
inline constexpr const char* kPartlyKnownGraphName =
    "zeCommandListAppendGraphExp: commands recorded before the capture began (unknown)";

class DeviceTimeline {
 public:
  DeviceTimeline(StringTable& strings, EventSink& sink, ZeDeviceTable& devices);
  ~DeviceTimeline();

  // xtrace's own view of a device, and its clock readings (device ticks with the host
  // CLOCK_MONOTONIC of the same instant).
  void OnDevice(const DeviceInfo& device);
  void OnClockReading(uint32_t device, uint64_t ticks, uint64_t monotonic_ns);
  // A CLOCK_MONOTONIC_RAW / CLOCK_MONOTONIC pair (to place the traced processes' own clock
  // readings, which Level Zero gives in RAW).
  void OnHostClocks(uint64_t monotonic_raw_ns, uint64_t monotonic_ns);

  // Host calls, in the order the probes saw them.
  void OnLaunch(const KernelLaunch& launch);
  void OnCall(const ApiCall& call, const DecodedZeExecute* execute);
  // A fence made by a DRM submission ioctl (begun at ioctl_start_ns on pid/tid) signalled:
  // what the host call around that ioctl submitted ended by signaled_ns. Tightens the end of
  // estimated operations only, never loosens it.
  void OnSubmissionFence(uint32_t pid, uint32_t tid, uint64_t ioctl_start_ns,
                         uint64_t signaled_ns);

  // Emits what waited for a clock reading newer than itself, once there is one.
  void EmitCovered();
  // Capture end: emits everything still held.
  void Finish();

  const TimelineStats& stats() const { return stats_; }
  // Clock fit of every device with one, for the log.
  std::vector<ClockFit> Fits(uint64_t now_ns) const;

 private:
  struct Instance;
  // An append as a regular list keeps it, to submit on each execution.
  struct Template {
    AppendedCommand command;
    bool visible = true;  // a kernel or memory operation (barriers and event ops only order)
    uint64_t append_end_ns = 0;  // the append's end (command.append_ns is its start)
    // Run by a graph replay (zeCommandListAppendGraphExp) on a list not yet known to be
    // immediate: the executable graph, the replay's number and its call, for when it is.
    uint64_t graph = 0;
    uint64_t replay = 0;
    uint32_t replay_tid = 0;
    uint64_t replay_ns = 0;
  };
  struct ListState;
  struct QueueState;
  struct EngineState;
  struct EventState;
  struct FenceState;
  struct GraphState;
  // Applies each recorded call, seen through its typed view (device_timeline_calls.cc).
  class CallHandler;
  // The host call that saw work complete: its thread, and its end (work was done by then).
  struct Observer {
    uint32_t tid = 0;
    uint64_t end_ns = 0;
  };

  void Append(uint32_t pid, uint64_t list, const Template& t);
  // zeCommandListEndGraphCaptureExp on a list whose capture began before xtrace's: what was
  // appended to it since (held while the list was unclassified) ran nothing, and goes into
  // `graph` (0: unknown) after the part xtrace never saw.
  void EndCaptureBegunBefore(uint32_t pid, uint64_t list, uint64_t graph);
  // zeCommandQueueExecuteCommandLists: the lists in its own record if there is one, else the
  // first list (the one the ApiCall carries).
  void Execute(const ApiCall& call, uint64_t queue, uint64_t fence, uint64_t first_list,
               const DecodedZeExecute* execute);
  // zeCommandListAppendGraphExp: the executable graph's commands run on the list, after its
  // waits and before its signal event.
  void AppendGraph(const ApiCall& call, uint64_t list, uint64_t executable_graph,
                   uint64_t signal_event);
  void ClassifyImmediate(PidHandle list);
  void ClassifyBySignal(uint32_t pid, uint64_t event);
  uint64_t Submit(uint32_t pid, const Template& t, PidHandle engine, uint32_t device,
                  uint32_t submit_tid, uint64_t submit_ns, uint64_t list, uint64_t execution);
  void NoteSubmittingCall(uint32_t pid, uint32_t tid, uint64_t start_ns, uint64_t end_ns,
                          uint64_t first_id, uint64_t last_id);
  void ApplyFenceBound(const SubmissionFences::Bound& bound);
  void BindSignal(uint32_t pid, uint64_t event, uint64_t id);
  void ReleaseSignal(uint32_t pid, uint64_t event);
  // Everything on `engine` submitted up to instance `last` (UINT64_MAX: all) is complete by
  // `by.end_ns` (the engine runs in order).
  void CompleteThrough(PidHandle engine, uint64_t last, Observer by);
  void CompleteSubmittedBefore(PidHandle engine, uint64_t before_ns, Observer by);
  void CompleteEvent(PidHandle event, Observer by);
  void ReadTimestamps(PidHandle event, uint64_t start, uint64_t end, Observer by);
  void DropEngine(PidHandle engine, Observer by);
  void TryEmit(uint64_t id);
  void Emit(Instance& inst, bool completion_seen);
  void ForceOut(PidHandle engine);
  void CountObjects();

  StringTable& strings_;
  EventSink& sink_;
  ZeDeviceTable& devices_;
  std::map<uint32_t, DeviceInfo> device_info_;
  std::map<uint32_t, std::unique_ptr<ClockModel>> clocks_;
  HostClockMap host_clocks_;
  std::unordered_map<PidHandle, ListState, PidHandleHash> lists_;
  std::unordered_map<PidHandle, QueueState, PidHandleHash> queues_;
  std::unordered_map<PidHandle, EngineState, PidHandleHash> engines_;
  std::unordered_map<PidHandle, uint32_t, PidHandleHash> pools_;  // -> ze_event_pool_flags_t
  std::unordered_map<PidHandle, EventState, PidHandleHash> events_;
  std::unordered_map<PidHandle, FenceState, PidHandleHash> fences_;
  std::unordered_map<PidHandle, GraphState, PidHandleHash> graphs_;       // recorded graphs
  std::unordered_map<PidHandle, GraphState, PidHandleHash> executables_;  // instantiated ones
  // Signal events appended to unclassified lists -> the list.
  std::unordered_map<PidHandle, uint64_t, PidHandleHash> unclassified_signals_;
  std::unordered_map<uint64_t, Instance> live_;  // by id
  std::vector<uint64_t> awaiting_clock_;         // measured, waiting for a newer clock reading
  std::map<uint32_t, uint32_t> next_track_;      // per device
  SubmissionFences submission_fences_;
  uint64_t next_id_ = 1;
  TimelineStats stats_;
};

}  // namespace xtrace
