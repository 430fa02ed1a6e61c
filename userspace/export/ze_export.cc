// Level Zero events as Chrome trace events; see ze_export.h.
#include "export/ze_export.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "model/ze_api.h"

namespace xtrace {
namespace {

// Kineto's categories (docs/kineto-json.md): Level Zero calls are the runtime PyTorch's XPU
// profiler names xpu_runtime; device operations by kind.
constexpr std::string_view kRuntimeCategory = "xpu_runtime";
// xtrace's own arrows, from an operation to the host call that saw it complete.
constexpr std::string_view kFlowCategory = "ze.flow";
// Device processes sort after the host processes.
constexpr int64_t kDeviceSortBase = 1'000'000;

std::string_view OpCategory(DeviceOpKind kind) {
  switch (kind) {
    case DeviceOpKind::kKernel:
      return "kernel";
    case DeviceOpKind::kCopy:
      return "gpu_memcpy";
    case DeviceOpKind::kFill:
      return "gpu_memset";
    case DeviceOpKind::kHostFunction:
      return "host_function";
  }
  return "kernel";
}

// Calls that can submit device work: what a DeviceOp's submit_tid/submit_ns can name (the
// append itself on an immediate list, zeCommandQueueExecuteCommandLists otherwise). Kernel
// launches are KernelLaunch events, not ApiCalls.
bool MaySubmit(uint16_t fn) {
  switch (fn) {
    case XT_ZE_APPEND_MEMORY_COPY:
    case XT_ZE_APPEND_MEMORY_COPY_REGION:
    case XT_ZE_APPEND_MEMORY_FILL:
    case XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS:
    case XT_ZE_COMMAND_LIST_IMMEDIATE_APPEND_COMMAND_LISTS_EXP:
    case XT_ZE_APPEND_LAUNCH_MULTIPLE_KERNELS_INDIRECT:
    case XT_ZE_COMMAND_LIST_APPEND_GRAPH_EXP:
    case XT_ZE_APPEND_HOST_FUNCTION:
    case XT_ZE_EX_APPEND_HOST_FUNCTION:
      return true;
    default:
      return false;
  }
}

std::string_view KindName(DeviceOpKind kind) {
  switch (kind) {
    case DeviceOpKind::kKernel:
      return "kernel";
    case DeviceOpKind::kCopy:
      return "copy";
    case DeviceOpKind::kFill:
      return "fill";
    case DeviceOpKind::kHostFunction:
      return "host function";
  }
  return "operation";
}

std::string HexText(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

uint64_t Duration(uint64_t start_ns, uint64_t end_ns) {
  return end_ns >= start_ns ? end_ns - start_ns : 0;
}

// A fitted value, rounded to a whole number for display. The log is read as it is, so a value
// can be anything a double holds (a damaged or hostile log): converting a negative, huge or
// NaN double to an integer is undefined, so those show as 0 or the largest integer instead.
uint64_t RoundForDisplay(double v) {
  if (!(v > 0)) return 0;  // negative, zero or NaN
  if (v >= 0x1p64) return UINT64_MAX;
  return static_cast<uint64_t>(v + 0.5);
}

// Arguments are appended in place: a TraceArg made by its factory and then pushed is built
// on the stack field by field and copied in wide loads, a store-forwarding stall per argument
// that showed at a dozen arguments a device operation.
void AddInt(std::vector<TraceArg>& args, std::string_view key, int64_t v) {
  args.emplace_back(key, TraceArg::Kind::kInt, v, uint64_t{0}, std::string_view());
}
void AddUint(std::vector<TraceArg>& args, std::string_view key, uint64_t v) {
  args.emplace_back(key, TraceArg::Kind::kUint, int64_t{0}, v, std::string_view());
}
void AddHex(std::vector<TraceArg>& args, std::string_view key, uint64_t v) {
  args.emplace_back(key, TraceArg::Kind::kHex, int64_t{0}, v, std::string_view());
}
void AddString(std::vector<TraceArg>& args, std::string_view key, std::string_view v) {
  args.emplace_back(key, TraceArg::Kind::kString, int64_t{0}, uint64_t{0}, v);
}
void AddBool(std::vector<TraceArg>& args, std::string_view key, bool v) {
  args.emplace_back(key, TraceArg::Kind::kBool, int64_t{v}, uint64_t{0}, std::string_view());
}

}  // namespace

void ZeTraceExporter::AddResult(int32_t result) {
  if (result == 0) return;
  AddInt(args_, "result", result);
  const std::string_view name = ZeResultName(result);
  if (!name.empty()) AddString(args_, "result_name", name);
}

void ZeTraceExporter::Write(const KernelCreate& e) {
  args_.clear();
  AddString(args_, "kernel_name", strings_.Get(e.name));
  AddHex(args_, "module", e.module);
  AddHex(args_, "kernel", e.kernel);
  AddResult(e.result);
  if (e.name_truncated) AddBool(args_, "name_truncated", true);
  if (e.learned) {
    // Not a call of the process's: the time xtrace held this thread to ask for the name of a
    // kernel made before the attach. Drawn where it happened, under its own name.
    AddBool(args_, "learned", true);
    out_.Complete("xtrace: kernel made before the attach, named by zeKernelGetName", "xtrace",
                  e.pid, e.tid, e.start_ns, Duration(e.start_ns, e.end_ns), args_);
    return;
  }
  out_.Complete("zeKernelCreate", kRuntimeCategory, e.pid, e.tid, e.start_ns,
                Duration(e.start_ns, e.end_ns), args_);
}

void ZeTraceExporter::Write(const KernelLaunch& e) {
  args_.clear();
  scratch_.clear();
  AddUint(args_, "correlation", correlation_.NoteCall(e.pid, e.tid, e.start_ns));
  if (e.group_count_unreadable) {
    AddString(args_, "group_count", "unreadable");
  } else {
    AddUint(args_, "group_count_x", e.group_count[0]);
    AddUint(args_, "group_count_y", e.group_count[1]);
    AddUint(args_, "group_count_z", e.group_count[2]);
  }
  AddHex(args_, "kernel", e.kernel);
  AddHex(args_, "command_list", e.command_list);
  if (e.signal_event != 0) AddHex(args_, "signal_event", e.signal_event);
  AddUint(args_, "num_wait_events", e.num_wait_events);
  AddResult(e.result);
  if (!e.name_known) AddBool(args_, "name_known", false);
  if (e.launch_kind == 1) AddString(args_, "launch", "cooperative");
  if (e.launch_kind == 2) AddString(args_, "launch", "indirect");
  if (e.launch_kind == XT_LAUNCH_WITH_ARGUMENTS) AddString(args_, "launch", "with arguments");
  if (e.launch_kind == XT_LAUNCH_WITH_PARAMETERS) AddString(args_, "launch", "with parameters");
  const uint64_t dur = Duration(e.start_ns, e.end_ns);
  const std::string_view name = strings_.Get(e.kernel_name);
  if (name.empty()) {
    out_.Complete(scratch_.emplace_back("kernel@" + HexText(e.kernel)), kRuntimeCategory, e.pid,
                  e.tid, e.start_ns, dur, args_);
  } else {
    out_.Complete(RecurringName{e.kernel_name, name}, kRuntimeCategory, e.pid, e.tid, e.start_ns,
                  dur, args_);
  }
}

void ZeTraceExporter::Write(const ApiCall& e) {
  args_.clear();
  scratch_.clear();
  if (MaySubmit(e.fn))
    AddUint(args_, "correlation", correlation_.NoteCall(e.pid, e.tid, e.start_ns));
  const ZeApiInfo* api = FindZeApi(e.fn);
  std::string_view name;
  if (api) {
    name = api->symbol;
    for (int i = 0; i < kApiCallArgs; ++i) {
      const ZeArgInfo& arg = api->args[i];
      if (!arg.name) continue;
      if (arg.hex) {
        AddHex(args_, arg.name, e.arg[i]);
      } else {
        AddUint(args_, arg.name, e.arg[i]);
      }
    }
  } else {
    // Written by a newer xtrace: keep the call visible with what it carries.
    name = scratch_.emplace_back("ze function " + std::to_string(e.fn));
    for (int i = 0; i < kApiCallArgs; ++i)
      AddHex(args_, scratch_.emplace_back("arg" + std::to_string(i)), e.arg[i]);
  }
  AddResult(e.result);
  if (e.args_unreadable) AddBool(args_, "args_unreadable", true);
  if (e.truncated) AddBool(args_, "truncated", true);
  if (e.learned) {
    // Not a call of the process's: the time xtrace held this thread to ask about an object
    // made before the attach. Drawn where it happened, as what it stands for.
    AddBool(args_, "learned", true);
    out_.Complete(scratch_.emplace_back("xtrace: made before the attach, learned as " + std::string(name)),
                  "xtrace", e.pid, e.tid, e.start_ns, Duration(e.start_ns, e.end_ns), args_);
    return;
  }
  out_.Complete(name, kRuntimeCategory, e.pid, e.tid, e.start_ns, Duration(e.start_ns, e.end_ns),
                args_);
}

void ZeTraceExporter::Write(const UnfinishedCall& e) {
  args_.clear();
  scratch_.clear();
  const std::string_view function = strings_.Get(e.function);
  std::string& how = scratch_.emplace_back("its thread (or its process) exited inside the call");
  if (e.capture_ended) {
    how = "still inside the call when the capture stopped";
  } else if (e.signal > 0) {
    const char* abbrev = sigabbrev_np(e.signal);
    how = "its process was killed by " +
          (abbrev ? "SIG" + std::string(abbrev) : "signal " + std::to_string(e.signal)) +
          " inside the call";
  }
  AddString(args_, "unfinished", how);
  out_.Complete(scratch_.emplace_back(std::string(function.empty() ? "call" : function) + " (unfinished)"),
                kRuntimeCategory, e.pid, e.tid, e.start_ns, Duration(e.start_ns, e.end_ns), args_);
}

}  // namespace xtrace

namespace xtrace {

uint32_t DevicePid(uint32_t device) {
  return kDevicePidBase + (device == kUnknownDevice ? kUnknownDeviceSlot : device);
}

void ZeTraceExporter::NameDevice(uint32_t device, std::string_view name) {
  if (!named_devices_.insert(device).second) return;
  std::string title = device == kUnknownDevice ? std::string("GPU (unknown device)")
                                               : "GPU " + std::to_string(device);
  if (!name.empty()) title += ": " + std::string(name);
  out_.ProcessName(DevicePid(device), title);
  out_.ProcessSortIndex(DevicePid(device),
                        kDeviceSortBase + (device == kUnknownDevice ? kUnknownDeviceSlot : device));
}

void ZeTraceExporter::Write(const DeviceInfo& e) { NameDevice(e.device, strings_.Get(e.name)); }

void ZeTraceExporter::Write(const DeviceQueue& e) {
  NameDevice(e.device, {});
  std::string name = (e.immediate ? "immediate list " : "queue ") + HexText(e.handle) +
                     (e.engine_unknown ? std::string(" (engine unknown: made before the attach)")
                                       : " (ordinal " + std::to_string(e.ordinal) + ", index " +
                                             std::to_string(e.index) + ")") +
                     " of pid " + std::to_string(e.pid);
  out_.ThreadName(DevicePid(e.device), e.track, name);
}

void ZeTraceExporter::Write(const DeviceOp& e) {
  args_.clear();
  scratch_.clear();
  // 0: the submitting call is not in the trace (or no longer remembered, launch_correlation.h).
  const uint64_t correlation =
      e.submit_tid ? correlation_.Find(e.pid, e.submit_tid, e.submit_ns) : 0;
  AddUint(args_, "correlation", correlation);
  AddInt(args_, "device", e.device == kUnknownDevice ? -1 : int64_t{e.device});
  // The engine's track number (from 1): Kineto's stream, what analyzers tell device work by.
  AddUint(args_, "stream", e.track);
  AddUint(args_, "id", e.id);
  AddString(args_, "timing", e.measured ? "measured" : "estimated");
  AddString(args_, "kind", KindName(e.kind));
  AddUint(args_, "pid", e.pid);
  AddHex(args_, "command_list", e.command_list);
  if (e.execution) AddUint(args_, "execution", e.execution);
  if (e.kind == DeviceOpKind::kKernel) {
    AddHex(args_, "kernel", e.kernel);
    AddUint(args_, "group_count_x", e.group_count[0]);
    AddUint(args_, "group_count_y", e.group_count[1]);
    AddUint(args_, "group_count_z", e.group_count[2]);
  } else {
    AddUint(args_, "bytes", e.bytes);
  }
  if (e.signal_event) AddHex(args_, "signal_event", e.signal_event);
  if (e.measured) {
    AddUint(args_, "start_ticks", e.start_ticks);
    AddUint(args_, "end_ticks", e.end_ticks);
  }
  if (!e.completion_seen) AddString(args_, "completion", "not seen by the host");
  // The Python line that appended it (Nsight's CallFrom): its innermost frame in user code.
  if (python_ && e.append_tid) {
    const std::string_view line = python_->UserFrameOfCall(e.pid, e.append_tid, e.append_ns);
    if (!line.empty()) AddString(args_, "python", line);
  }
  const uint32_t pid = DevicePid(e.device);
  out_.Complete(strings_.Get(e.name), OpCategory(e.kind), pid, e.track, e.start_ns,
                Duration(e.start_ns, e.end_ns), args_);
  // Arrows: submitting call -> operation -> the host call that waited for it. A flow end
  // binds to the slice around its time, so each end sits inside its slice. The launch arrow's
  // id is the correlation, as Kineto writes it; a call that submitted several operations
  // repeats it, each start followed at once by its end, so a reader that closes a flow at its
  // end draws every arrow.
  if (e.submit_tid) {
    if (correlation != 0) {
      out_.Flow(TraceWriter::FlowPhase::kStart, kLaunchFlow, kLaunchFlow, e.pid, e.submit_tid,
                e.submit_ns, correlation);
      out_.Flow(TraceWriter::FlowPhase::kEnd, kLaunchFlow, kLaunchFlow, pid, e.track, e.start_ns,
                correlation);
    }
  }
  if (e.sync_ns && e.sync_tid && e.completion_seen) {
    const uint64_t flow = FlowIds::kWaitBase + e.id;
    out_.Flow(TraceWriter::FlowPhase::kStart, "wait", kFlowCategory, pid, e.track,
              e.end_ns > e.start_ns ? e.end_ns - 1 : e.start_ns, flow);
    out_.Flow(TraceWriter::FlowPhase::kEnd, "wait", kFlowCategory, e.pid, e.sync_tid,
              e.sync_ns - 1, flow);
  }
}

void ZeTraceExporter::Write(const MemoryUsage& e) {
  if (e.device == kUnknownDevice && e.pid != 0) {
    const std::array series = {TraceArg::Uint("host", e.host_bytes)};
    out_.Counter("host memory (Level Zero)", e.pid, e.time_ns, series);
    return;
  }
  NameDevice(e.device, {});
  const std::array series = {TraceArg::Uint("device", e.device_bytes),
                             TraceArg::Uint("shared", e.shared_bytes)};
  out_.Counter("memory in use", DevicePid(e.device), e.time_ns, series);
}

// Clock readings are facts for re-fitting, not something to look at.
void ZeTraceExporter::Write(const ClockSample&) {}

void ZeTraceExporter::Write(const ClockFit& e) {
  NameDevice(e.device, {});
  args_.clear();
  AddUint(args_, "samples", e.samples);
  AddUint(args_, "residual_rms_ns", RoundForDisplay(e.residual_rms_ns));
  AddUint(args_, "residual_max_ns", RoundForDisplay(e.residual_max_ns));
  AddUint(args_, "fitted_hz", RoundForDisplay(e.hz));
  AddUint(args_, "nominal_hz", e.nominal_hz);
  out_.Instant("clock fit", "clock", DevicePid(e.device), 0, e.time_ns,
               TraceWriter::InstantScope::kProcess, args_);
}

}  // namespace xtrace
