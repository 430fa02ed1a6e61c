// What the device timeline keeps per object (command lists, queues, engines, events, fences)
// and per device operation in flight; shared by device_timeline.cc (operations) and
// device_timeline_calls.cc (the calls that change them).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "correlate/device_timeline.h"

namespace xtrace {

struct DeviceTimeline::ListState {
  uint32_t device = kUnknownDevice;
  bool created_in_capture = false;
  // Its ordinal and index are known: created in the capture, or learned from the process.
  bool engine_known = false;
  bool immediate = false;
  // A list created before the capture began is unclassified until it shows what it is:
  // closed or executed (regular), or work appended to it seen complete (immediate). Until
  // then its appends wait in `commands`.
  bool regular_seen = false;
  bool immediate_seen = false;
  bool unclassified() const { return !created_in_capture && !regular_seen && !immediate_seen; }
  bool synchronous = false;
  // Reset during the capture: what it holds was recorded under our eyes (as for a list
  // created during the capture). An execution of a list with neither runs what it held at
  // the attach, which nobody knows.
  bool recorded_in_capture = false;
  uint32_t ordinal = 0;
  uint32_t index = 0;
  std::vector<Template> commands;  // regular lists: what an execution runs
  uint64_t executions = 0;
  // Between zeCommandListBegin...CaptureExp and zeCommandListEndGraphCaptureExp its appends
  // run nothing: they are recorded into a graph (`into`, when the caller made it), kept here
  // until the capture ends.
  bool capturing = false;
  uint64_t capture_into = 0;
  std::vector<Template> captured;
};

// A graph's commands as its capture recorded them; an executable graph's, as instantiated.
struct DeviceTimeline::GraphState {
  std::vector<Template> commands;
  uint64_t replays = 0;  // executable graphs: zeCommandListAppendGraphExp calls so far
  // Its capture began before xtrace's did: it also runs, before `commands`, what was appended
  // until then, which xtrace never saw.
  bool begun_before_capture = false;
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

}  // namespace xtrace
