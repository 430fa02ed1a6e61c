// Trace events for the Level Zero events (model/event.h kernel events, model/ze_events.h):
// host API calls on the threads that made them (category xpu_runtime); one process per device
// (named by index and device name) with a track per engine, its kernels and memory operations
// (kernel, gpu_memcpy, gpu_memset) as complete events marked measured or estimated, with
// integer device, stream and correlation as PyTorch's profiler writes them; flow arrows from
// the submitting call to the operation (ac2g, id = correlation) and from the operation to the
// host call that waited for it; counters of memory in use. docs/kineto-json.md says why.
#pragma once

#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <vector>

#include "export/launch_correlation.h"
#include "export/python_slices.h"
#include "export/trace_writer.h"
#include "model/event.h"
#include "model/string_table.h"

namespace xtrace {

// Kineto's flow from a runtime call to the device work it launched (name and category); its id
// is the correlation.
inline constexpr std::string_view kLaunchFlow = "ac2g";

// Device D's process in the trace (export/trace_layout.h).
uint32_t DevicePid(uint32_t device);

class ZeTraceExporter {
 public:
  ZeTraceExporter(const StringTable& strings, TraceWriter& out) : strings_(strings), out_(out) {}

  void Write(const KernelCreate& e);
  void Write(const KernelLaunch& e);
  void Write(const ApiCall& e);
  // A call its thread never returned from: a slice to the thread's exit, named as unfinished.
  void Write(const UnfinishedCall& e);
  void Write(const DeviceInfo& e);
  void Write(const DeviceQueue& e);
  void Write(const DeviceOp& e);
  void Write(const MemoryUsage& e);
  void Write(const ClockSample& e);
  void Write(const ClockFit& e);
  // Where device operations find the Python line of the call that launched them.
  void set_python(const PythonSliceWriter* python) { python_ = python; }

 private:
  void NameDevice(uint32_t device, std::string_view name);
 public:
  void StartCorrelationIdsAt(uint64_t first) { correlation_.StartIdsAt(first); }

 private:
  // A non-success ze_result_t, as a number and by name.
  void AddResult(int32_t result);

  const StringTable& strings_;
  TraceWriter& out_;
  std::set<uint32_t> named_devices_;
  LaunchCorrelation correlation_;
  const PythonSliceWriter* python_ = nullptr;
  std::vector<TraceArg> args_;       // reused: no allocation per event
  std::deque<std::string> scratch_;  // backing text for args of the event being written
};

}  // namespace xtrace
