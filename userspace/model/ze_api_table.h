// The table of Level Zero calls xtrace records, in enum xt_ze_fn order: for each function
// its symbol, what the generic probe copies and the name, format and source of each of the
// event's six arguments. It is constexpr so that the typed views of model/ze_api_views.h read
// an argument's slot from it at compile time; everything else reads it through ze_api.h.
// Struct offsets are those of level_zero/ze_api.h on x86-64 (checked by ze_api_unittest.cc).
#pragma once

#include <iterator>

#include "model/ze_api.h"

namespace xtrace {
namespace ze_api_table {

constexpr ZeArgSource Arg(uint8_t i) { return {ZeArgSource::kArg, i}; }
constexpr ZeArgSource D32(uint8_t i) { return {ZeArgSource::kData32, i}; }
constexpr ZeArgSource D64(uint8_t i) { return {ZeArgSource::kData64, i}; }
constexpr ZeArgSource RegionBytes() { return {ZeArgSource::kRegionBytes, 0}; }

constexpr ZeArgInfo Hex(const char* name, ZeArgSource s) { return {name, true, s}; }
constexpr ZeArgInfo Num(const char* name, ZeArgSource s) { return {name, false, s}; }
constexpr ZeArgInfo None() { return {}; }

// A descriptor field read at return, and an output written by a successful call.
constexpr ZeRead In(uint8_t arg, uint8_t size, uint8_t offset) { return {arg, size, offset, false}; }
constexpr ZeRead Out(uint8_t arg, uint8_t size) { return {arg, size, 0, true}; }

// Descriptor offsets (x86-64): every *_desc_t starts with stype (4, padded to 8) and pNext (8).
constexpr uint8_t kDescBody = 16;
// ze_command_queue_desc_t: ordinal, index, flags, mode, priority (5 x uint32) from kDescBody.
constexpr uint8_t kQueueDescBytes = 20;
// ze_device_properties_t: the 16-byte uuid follows 80 bytes of numbers after kDescBody.
constexpr uint8_t kDevicePropertiesUuid = 96;

// Correlation reads arguments by name (model/ze_api_views.h), never by position. Positions
// are still part of the log format, which stores an ApiCall's six arguments in order: an
// argument never moves to another slot, a new one takes a free slot. By habit arg 0 is the
// object a call acts on and a create's new handle is arg 5.
inline constexpr ZeApiInfo kZeApiTable[] = {
    {.fn = XT_ZE_INIT, .symbol = "zeInit", .args = {Hex("flags", Arg(0))}},
    {.fn = XT_ZE_DRIVER_GET,
     .symbol = "zeDriverGet",
     .reads = {Out(0, 4), Out(1, 16)},
     .args = {Num("count", D32(0)), Hex("driver0", D64(4)), Hex("driver1", D64(5))},
     .array_count = 0,
     .array_first = 1},
    {.fn = XT_ZE_DEVICE_GET,
     .symbol = "zeDeviceGet",
     .reads = {Out(1, 4), Out(2, 32)},
     .args = {Hex("driver", Arg(0)), Num("count", D32(0)), Hex("device0", D64(4)),
              Hex("device1", D64(5)), Hex("device2", D64(6)), Hex("device3", D64(7))},
     .array_count = 1,
     .array_first = 2},
    {.fn = XT_ZE_DEVICE_GET_GLOBAL_TIMESTAMPS,
     .symbol = "zeDeviceGetGlobalTimestamps",
     .reads = {Out(1, 8), Out(2, 8)},
     .args = {Hex("device", Arg(0)), Num("host_timestamp", D64(0)),
              Num("device_timestamp", D64(4))}},
    {.fn = XT_ZE_CONTEXT_CREATE,
     .symbol = "zeContextCreate",
     .reads = {{}, Out(2, 8)},
     .args = {Hex("driver", Arg(0)), None(), None(), None(), None(), Hex("context", D64(4))}},
    {.fn = XT_ZE_CONTEXT_DESTROY, .symbol = "zeContextDestroy", .args = {Hex("context", Arg(0))}},
    {.fn = XT_ZE_MEM_ALLOC_DEVICE,
     .symbol = "zeMemAllocDevice",
     .reads = {{}, Out(5, 8)},
     .args = {Hex("context", Arg(0)), Hex("device", Arg(4)), Num("size", Arg(2)),
              Num("alignment", Arg(3)), None(), Hex("ptr", D64(4))}},
    {.fn = XT_ZE_MEM_ALLOC_HOST,
     .symbol = "zeMemAllocHost",
     .reads = {{}, Out(4, 8)},
     .args = {Hex("context", Arg(0)), None(), Num("size", Arg(2)), Num("alignment", Arg(3)),
              None(), Hex("ptr", D64(4))}},
    {.fn = XT_ZE_MEM_ALLOC_SHARED,
     .symbol = "zeMemAllocShared",
     .stack_first = 6,
     .stack_count = 1,  // pptr, the seventh parameter
     .reads = {{}, Out(6, 8)},
     .args = {Hex("context", Arg(0)), Hex("device", Arg(5)), Num("size", Arg(3)),
              Num("alignment", Arg(4)), None(), Hex("ptr", D64(4))}},
    {.fn = XT_ZE_MEM_FREE,
     .symbol = "zeMemFree",
     .args = {Hex("context", Arg(0)), Hex("ptr", Arg(1))}},
    {.fn = XT_ZE_MODULE_CREATE,
     .symbol = "zeModuleCreate",
     // ze_module_desc_t: format (uint32, padded) at 16, inputSize at 24.
     .reads = {In(2, 16, kDescBody), Out(3, 8)},
     .args = {Hex("context", Arg(0)), Hex("device", Arg(1)), Num("format", D32(0)),
              Num("input_size", D64(1)), None(), Hex("module", D64(4))}},
    {.fn = XT_ZE_MODULE_DESTROY, .symbol = "zeModuleDestroy", .args = {Hex("module", Arg(0))}},
    {.fn = XT_ZE_KERNEL_DESTROY, .symbol = "zeKernelDestroy", .args = {Hex("kernel", Arg(0))}},
    {.fn = XT_ZE_COMMAND_QUEUE_CREATE,
     .symbol = "zeCommandQueueCreate",
     .reads = {In(2, kQueueDescBytes, kDescBody), Out(3, 8)},
     .args = {Hex("context", Arg(0)), Hex("device", Arg(1)), Num("ordinal", D32(0)),
              Num("index", D32(1)), Num("mode", D32(3)), Hex("command_queue", D64(4))}},
    {.fn = XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS,
     .symbol = "zeCommandQueueExecuteCommandLists",
     .args = {Hex("command_queue", Arg(0)), Hex("fence", Arg(3)), Num("num_command_lists", Arg(1)),
              Hex("command_list", Arg(2))},  // the first list (the record holds them all)
     .dedicated_return = true},
    {.fn = XT_ZE_COMMAND_QUEUE_SYNCHRONIZE,
     .symbol = "zeCommandQueueSynchronize",
     .args = {Hex("command_queue", Arg(0)), Num("timeout", Arg(1))}},
    {.fn = XT_ZE_COMMAND_QUEUE_DESTROY,
     .symbol = "zeCommandQueueDestroy",
     .args = {Hex("command_queue", Arg(0))}},
    {.fn = XT_ZE_COMMAND_LIST_CREATE,
     .symbol = "zeCommandListCreate",
     // ze_command_list_desc_t: commandQueueGroupOrdinal, flags.
     .reads = {In(2, 8, kDescBody), Out(3, 8)},
     .args = {Hex("context", Arg(0)), Hex("device", Arg(1)), Num("ordinal", D32(0)),
              Hex("flags", D32(1)), None(), Hex("command_list", D64(4))}},
    {.fn = XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE,
     .symbol = "zeCommandListCreateImmediate",
     .reads = {In(2, kQueueDescBytes, kDescBody), Out(3, 8)},
     .args = {Hex("context", Arg(0)), Hex("device", Arg(1)), Num("ordinal", D32(0)),
              Num("index", D32(1)), Num("mode", D32(3)), Hex("command_list", D64(4))}},
    {.fn = XT_ZE_COMMAND_LIST_CLOSE,
     .symbol = "zeCommandListClose",
     .args = {Hex("command_list", Arg(0))}},
    {.fn = XT_ZE_COMMAND_LIST_RESET,
     .symbol = "zeCommandListReset",
     .args = {Hex("command_list", Arg(0))}},
    {.fn = XT_ZE_COMMAND_LIST_DESTROY,
     .symbol = "zeCommandListDestroy",
     .args = {Hex("command_list", Arg(0))}},
    {.fn = XT_ZE_APPEND_MEMORY_COPY,
     .symbol = "zeCommandListAppendMemoryCopy",
     .args = {Hex("command_list", Arg(0)), Hex("signal_event", Arg(4)),
              Num("num_wait_events", Arg(5)), Hex("dst", Arg(1)), Hex("src", Arg(2)),
              Num("size", Arg(3))}},
    {.fn = XT_ZE_APPEND_MEMORY_COPY_REGION,
     .symbol = "zeCommandListAppendMemoryCopyRegion",
     .stack_first = 9,  // hSignalEvent, numWaitEvents: the 10th and 11th parameters
     .stack_count = 2,
     .reads = {In(2, 24, 0)},  // dstRegion: originX/Y/Z, width, height, depth
     .args = {Hex("command_list", Arg(0)), Hex("signal_event", Arg(6)),
              Num("num_wait_events", Arg(7)), Hex("dst", Arg(1)), Hex("src", Arg(5)),
              Num("size", RegionBytes())}},
    {.fn = XT_ZE_APPEND_MEMORY_FILL,
     .symbol = "zeCommandListAppendMemoryFill",
     .stack_first = 6,  // numWaitEvents, the 7th parameter
     .stack_count = 1,
     .args = {Hex("command_list", Arg(0)), Hex("signal_event", Arg(5)),
              Num("num_wait_events", Arg(6)), Hex("ptr", Arg(1)), Num("pattern_size", Arg(3)),
              Num("size", Arg(4))}},
    {.fn = XT_ZE_APPEND_MEMORY_PREFETCH,
     .symbol = "zeCommandListAppendMemoryPrefetch",
     .args = {Hex("command_list", Arg(0)), None(), None(), Hex("ptr", Arg(1)),
              Num("size", Arg(2))}},
    {.fn = XT_ZE_APPEND_BARRIER,
     .symbol = "zeCommandListAppendBarrier",
     .args = {Hex("command_list", Arg(0)), Hex("signal_event", Arg(1)),
              Num("num_wait_events", Arg(2))}},
    {.fn = XT_ZE_APPEND_MEMORY_RANGES_BARRIER,
     .symbol = "zeCommandListAppendMemoryRangesBarrier",
     .args = {Hex("command_list", Arg(0)), Hex("signal_event", Arg(4)),
              Num("num_wait_events", Arg(5)), Num("num_ranges", Arg(1))}},
    {.fn = XT_ZE_APPEND_SIGNAL_EVENT,
     .symbol = "zeCommandListAppendSignalEvent",
     .args = {Hex("command_list", Arg(0)), Hex("signal_event", Arg(1))}},
    {.fn = XT_ZE_APPEND_WAIT_ON_EVENTS,
     .symbol = "zeCommandListAppendWaitOnEvents",
     .args = {Hex("command_list", Arg(0)), None(), Num("num_wait_events", Arg(1))}},
    {.fn = XT_ZE_APPEND_EVENT_RESET,
     .symbol = "zeCommandListAppendEventReset",
     .args = {Hex("command_list", Arg(0)), None(), None(), Hex("event", Arg(1))}},
    {.fn = XT_ZE_APPEND_WRITE_GLOBAL_TIMESTAMP,
     .symbol = "zeCommandListAppendWriteGlobalTimestamp",
     .args = {Hex("command_list", Arg(0)), Hex("signal_event", Arg(2)),
              Num("num_wait_events", Arg(3)), Hex("dst", Arg(1))}},
    {.fn = XT_ZE_APPEND_QUERY_KERNEL_TIMESTAMPS,
     .symbol = "zeCommandListAppendQueryKernelTimestamps",
     .stack_first = 6,  // numWaitEvents, the 7th parameter
     .stack_count = 1,
     .args = {Hex("command_list", Arg(0)), Hex("signal_event", Arg(5)),
              Num("num_wait_events", Arg(6)), Num("num_events", Arg(1)), Hex("dst", Arg(3))}},
    {.fn = XT_ZE_EVENT_POOL_CREATE,
     .symbol = "zeEventPoolCreate",
     .reads = {In(1, 8, kDescBody), Out(4, 8)},  // ze_event_pool_desc_t: flags, count
     .args = {Hex("context", Arg(0)), Hex("flags", D32(0)), Num("count", D32(1)),
              Num("num_devices", Arg(2)), None(), Hex("event_pool", D64(4))}},
    {.fn = XT_ZE_EVENT_POOL_DESTROY,
     .symbol = "zeEventPoolDestroy",
     .args = {Hex("event_pool", Arg(0))}},
    {.fn = XT_ZE_EVENT_CREATE,
     .symbol = "zeEventCreate",
     .reads = {In(1, 12, kDescBody), Out(2, 8)},  // ze_event_desc_t: index, signal, wait
     .args = {Hex("event_pool", Arg(0)), Num("index", D32(0)), Hex("signal_scope", D32(1)),
              Hex("wait_scope", D32(2)), None(), Hex("event", D64(4))}},
    {.fn = XT_ZE_EVENT_DESTROY, .symbol = "zeEventDestroy", .args = {Hex("event", Arg(0))}},
    {.fn = XT_ZE_EVENT_HOST_SIGNAL, .symbol = "zeEventHostSignal", .args = {Hex("event", Arg(0))}},
    {.fn = XT_ZE_EVENT_HOST_SYNCHRONIZE,
     .symbol = "zeEventHostSynchronize",
     .args = {Hex("event", Arg(0)), Num("timeout", Arg(1))}},
    {.fn = XT_ZE_EVENT_QUERY_STATUS, .symbol = "zeEventQueryStatus", .args = {Hex("event", Arg(0))}},
    {.fn = XT_ZE_EVENT_HOST_RESET, .symbol = "zeEventHostReset", .args = {Hex("event", Arg(0))}},
    {.fn = XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP,
     .symbol = "zeEventQueryKernelTimestamp",
     .reads = {Out(1, 32)},  // ze_kernel_timestamp_result_t: global {start, end}, context {..}
     .args = {Hex("event", Arg(0)), Num("global_start", D64(0)), Num("global_end", D64(1)),
              Num("context_start", D64(2)), Num("context_end", D64(3))}},
    {.fn = XT_ZE_EVENT_QUERY_TIMESTAMPS_EXP,
     .symbol = "zeEventQueryTimestampsExp",
     .reads = {Out(2, 4), Out(3, 32)},  // *pCount, then the first result
     .args = {Hex("event", Arg(0)), Hex("device", Arg(1)), Num("count", D32(0)),
              Num("global_start", D64(4)), Num("global_end", D64(5))}},
    {.fn = XT_ZE_FENCE_CREATE,
     .symbol = "zeFenceCreate",
     .reads = {{}, Out(2, 8)},
     .args = {Hex("command_queue", Arg(0)), None(), None(), None(), None(), Hex("fence", D64(4))}},
    {.fn = XT_ZE_FENCE_DESTROY, .symbol = "zeFenceDestroy", .args = {Hex("fence", Arg(0))}},
    {.fn = XT_ZE_FENCE_HOST_SYNCHRONIZE,
     .symbol = "zeFenceHostSynchronize",
     .args = {Hex("fence", Arg(0)), Num("timeout", Arg(1))}},
    {.fn = XT_ZE_FENCE_QUERY_STATUS, .symbol = "zeFenceQueryStatus", .args = {Hex("fence", Arg(0))}},
    {.fn = XT_ZE_FENCE_RESET, .symbol = "zeFenceReset", .args = {Hex("fence", Arg(0))}},
    {.fn = XT_ZE_DEVICE_GET_PROPERTIES,
     .symbol = "zeDeviceGetProperties",
     // ze_device_properties_t.uuid: what tells a process's device handle which device it is.
     .reads = {{1, 16, kDevicePropertiesUuid, true}},
     .args = {Hex("device", Arg(0)), Hex("uuid_lo", D64(0)), Hex("uuid_hi", D64(1))}},
    // Level Zero 1.6 and later (bookworm's loader 1.8.12 has none of them, trixie's 1.20.6
    // all but the counter-based event creation).
    {.fn = XT_ZE_COMMAND_LIST_HOST_SYNCHRONIZE,
     .symbol = "zeCommandListHostSynchronize",
     .args = {Hex("command_list", Arg(0)), Num("timeout", Arg(1))}},
    {.fn = XT_ZE_INIT_DRIVERS,
     .symbol = "zeInitDrivers",
     .reads = {Out(0, 4), Out(1, 16)},
     .args = {Num("count", D32(0)), Hex("driver0", D64(4)), Hex("driver1", D64(5))},
     .array_count = 0,
     .array_first = 1},
    {.fn = XT_ZE_COMMAND_LIST_IMMEDIATE_APPEND_COMMAND_LISTS_EXP,
     .symbol = "zeCommandListImmediateAppendCommandListsExp",
     .args = {Hex("command_list", Arg(0)), Hex("signal_event", Arg(3)),
              Num("num_wait_events", Arg(4)), Num("num_command_lists", Arg(1)),
              Hex("first_command_list", Arg(2))},  // the record holds them all
     .dedicated_return = true},
    {.fn = XT_ZE_EVENT_COUNTER_BASED_CREATE,
     .symbol = "zeEventCounterBasedCreate",
     // ze_event_counter_based_desc_t: flags, signal, wait.
     .reads = {In(2, 12, kDescBody), Out(3, 8)},
     .args = {Hex("context", Arg(0)), Hex("device", Arg(1)), Hex("flags", D32(0)),
              Hex("signal_scope", D32(1)), Hex("wait_scope", D32(2)), Hex("event", D64(4))},
     .also_in_driver = true},
    {.fn = XT_ZE_EX_COUNTER_BASED_EVENT_CREATE2,
     .symbol = "zexCounterBasedEventCreate2",
     // zex_counter_based_event_desc_t: the same layout and flag bits as the core one.
     .reads = {In(2, 12, kDescBody), Out(3, 8)},
     .args = {Hex("context", Arg(0)), Hex("device", Arg(1)), Hex("flags", D32(0)),
              Hex("signal_scope", D32(1)), Hex("wait_scope", D32(2)), Hex("event", D64(4))},
     .driver_only = true},
    {.fn = XT_ZE_APPEND_LAUNCH_MULTIPLE_KERNELS_INDIRECT,
     .symbol = "zeCommandListAppendLaunchMultipleKernelsIndirect",
     .stack_first = 6,  // numWaitEvents, the 7th parameter
     .stack_count = 1,
     .args = {Hex("command_list", Arg(0)), Hex("signal_event", Arg(5)),
              Num("num_wait_events", Arg(6)), Num("max_kernels", Arg(1)), Hex("kernels", Arg(2))}},
    // Intel's record-and-replay graphs (compute-runtime's driver_experimental/zex_graph.h):
    // appends to a list between Begin...Capture and EndGraphCaptureExp are recorded into a
    // graph instead of running; an instantiated (executable) graph runs them again at each
    // zeCommandListAppendGraphExp.
    {.fn = XT_ZE_GRAPH_CREATE_EXP,
     .symbol = "zeGraphCreateExp",  // (hContext, phGraph, pNext)
     .reads = {{}, Out(1, 8)},
     .args = {Hex("context", Arg(0)), None(), None(), None(), None(), Hex("graph", D64(4))},
     .driver_only = true},
    {.fn = XT_ZE_COMMAND_LIST_BEGIN_GRAPH_CAPTURE_EXP,
     .symbol = "zeCommandListBeginGraphCaptureExp",  // (hCommandList, pNext)
     .args = {Hex("command_list", Arg(0))},
     .driver_only = true},
    {.fn = XT_ZE_COMMAND_LIST_BEGIN_CAPTURE_INTO_GRAPH_EXP,
     .symbol = "zeCommandListBeginCaptureIntoGraphExp",  // (hCommandList, hGraph, pNext)
     .args = {Hex("command_list", Arg(0)), Hex("graph", Arg(1))},
     .driver_only = true},
    {.fn = XT_ZE_COMMAND_LIST_END_GRAPH_CAPTURE_EXP,
     .symbol = "zeCommandListEndGraphCaptureExp",  // (hCommandList, phGraph, pNext)
     // phGraph may be null after a capture into a graph the caller made: 0 then.
     .reads = {{}, Out(1, 8)},
     .args = {Hex("command_list", Arg(0)), None(), None(), None(), None(), Hex("graph", D64(4))},
     .driver_only = true},
    {.fn = XT_ZE_COMMAND_LIST_INSTANTIATE_GRAPH_EXP,
     .symbol = "zeCommandListInstantiateGraphExp",  // (hGraph, phExecutableGraph, pNext)
     .reads = {{}, Out(1, 8)},
     .args = {Hex("graph", Arg(0)), None(), None(), None(), None(),
              Hex("executable_graph", D64(4))},
     .driver_only = true},
    {.fn = XT_ZE_COMMAND_LIST_APPEND_GRAPH_EXP,
     // (hCommandList, hGraph, pNext, hSignalEvent, numWaitEvents, phWaitEvents)
     .symbol = "zeCommandListAppendGraphExp",
     .args = {Hex("command_list", Arg(0)), Hex("signal_event", Arg(3)),
              Num("num_wait_events", Arg(4)), Hex("executable_graph", Arg(1))},
     .driver_only = true},
    {.fn = XT_ZE_GRAPH_DESTROY_EXP,
     .symbol = "zeGraphDestroyExp",
     .args = {Hex("graph", Arg(0))},
     .driver_only = true},
    {.fn = XT_ZE_EXECUTABLE_GRAPH_DESTROY_EXP,
     .symbol = "zeExecutableGraphDestroyExp",
     .args = {Hex("executable_graph", Arg(0))},
     .driver_only = true},
    // (hCommandList, pHostFunction, pUserData, pNext, hSignalEvent, numWaitEvents,
    // phWaitEvents): the host runs pHostFunction(pUserData) when the list reaches it
    // (compute-runtime's zex_cmdlist.h; handed out by the driver).
    {.fn = XT_ZE_APPEND_HOST_FUNCTION,
     .symbol = "zeCommandListAppendHostFunction",
     .args = {Hex("command_list", Arg(0)), Hex("signal_event", Arg(4)),
              Num("num_wait_events", Arg(5)), Hex("host_function", Arg(1)),
              Hex("user_data", Arg(2))},
     .driver_only = true},
    // The same, by the name Intel's driver hands it out under too (compute-runtime's
    // driver_experimental/zex_cmdlist.h; older drivers have this name only).
    {.fn = XT_ZE_EX_APPEND_HOST_FUNCTION,
     .symbol = "zexCommandListAppendHostFunction",
     .args = {Hex("command_list", Arg(0)), Hex("signal_event", Arg(4)),
              Num("num_wait_events", Arg(5)), Hex("host_function", Arg(1)),
              Hex("user_data", Arg(2))},
     .driver_only = true},
};

static_assert(std::size(kZeApiTable) == XT_ZE_FN_COUNT - 1, "one entry per enum xt_ze_fn value");

constexpr bool InFnOrder() {
  for (size_t i = 0; i < std::size(kZeApiTable); ++i)
    if (kZeApiTable[i].fn != i + 1) return false;
  return true;
}
static_assert(InFnOrder(), "kZeApiTable is indexed by fn - 1");

}  // namespace ze_api_table

using ze_api_table::kZeApiTable;

}  // namespace xtrace
