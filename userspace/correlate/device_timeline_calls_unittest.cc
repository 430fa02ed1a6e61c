// Tests for correlate/device_timeline_calls: every argument the device timeline reads by name
// is the Level Zero parameter (or descriptor field, or output) it means. Each test records a
// call as the generic probe would, from the real Level Zero structs and with parameter p
// holding Param(p), builds its ApiCall and reads it through the view the timeline uses; a
// wrong slot or source in the ze_api table fails here.
#include <gtest/gtest.h>
#include <level_zero/ze_api.h>

#include <cstring>
#include <vector>

#include "correlate/api_call_builder.h"
#include "model/ze_api.h"
#include "model/ze_api_views.h"

namespace xtrace {
namespace {

uint64_t Param(int p) { return 0x1000 + p; }

// A generic-probe record of one call of `fn`.
class Probe {
 public:
  explicit Probe(uint16_t fn) : api_(*FindZeApi(fn)) {
    rec_.hdr.type = XT_REC_ZE_CALL;
    rec_.fn = fn;
    for (int p = 0; p < 6; ++p) rec_.arg[p] = Param(p);
    for (int k = 0; k < api_.stack_count; ++k) rec_.arg[6 + k] = Param(api_.stack_first + k);
  }

  // Parameter p points at `value`: what the table's read of p copies from it.
  template <typename T>
  Probe& Pointee(int p, const T& value) {
    for (int i = 0; i < 2; ++i) {
      const ZeRead& r = api_.reads[i];
      if (r.size == 0 || r.arg != p) continue;
      EXPECT_LE(r.offset + r.size, sizeof(T)) << api_.symbol << " reads past parameter " << p;
      std::memcpy(reinterpret_cast<char*>(rec_.data) + 32 * i,
                  reinterpret_cast<const char*>(&value) + r.offset, r.size);
      return *this;
    }
    ADD_FAILURE() << api_.symbol << " reads nothing through parameter " << p;
    return *this;
  }

  ApiCall Call() const { return BuildApiCall(rec_); }

 private:
  const ZeApiInfo& api_;
  DecodedZeCall rec_{};
};

// The argument the timeline reads as Name in a call of Fn recorded plainly.
template <uint16_t Fn, ZeArgName Name>
uint64_t Named() {
  const ApiCall call = Probe(Fn).Call();
  return ZeCall<Fn>(call).template Get<Name>();
}

TEST(DeviceTimelineCalls, HandlesAreTheParametersMeant) {
  EXPECT_EQ((Named<XT_ZE_DEVICE_GET_GLOBAL_TIMESTAMPS, "device">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_COMMAND_QUEUE_CREATE, "device">()), Param(1));
  EXPECT_EQ((Named<XT_ZE_COMMAND_QUEUE_SYNCHRONIZE, "command_queue">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_COMMAND_QUEUE_DESTROY, "command_queue">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_COMMAND_LIST_CREATE, "device">()), Param(1));
  EXPECT_EQ((Named<XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE, "device">()), Param(1));
  EXPECT_EQ((Named<XT_ZE_COMMAND_LIST_CLOSE, "command_list">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_COMMAND_LIST_RESET, "command_list">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_COMMAND_LIST_DESTROY, "command_list">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_EVENT_POOL_DESTROY, "event_pool">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_EVENT_CREATE, "event_pool">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_EVENT_DESTROY, "event">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_EVENT_HOST_SIGNAL, "event">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_EVENT_HOST_RESET, "event">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_EVENT_HOST_SYNCHRONIZE, "event">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_EVENT_QUERY_STATUS, "event">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP, "event">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_EVENT_QUERY_TIMESTAMPS_EXP, "event">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_FENCE_CREATE, "command_queue">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_FENCE_HOST_SYNCHRONIZE, "fence">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_FENCE_QUERY_STATUS, "fence">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_FENCE_DESTROY, "fence">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_COMMAND_LIST_BEGIN_GRAPH_CAPTURE_EXP, "command_list">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_COMMAND_LIST_BEGIN_CAPTURE_INTO_GRAPH_EXP, "command_list">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_COMMAND_LIST_BEGIN_CAPTURE_INTO_GRAPH_EXP, "graph">()), Param(1));
  EXPECT_EQ((Named<XT_ZE_COMMAND_LIST_END_GRAPH_CAPTURE_EXP, "command_list">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_COMMAND_LIST_INSTANTIATE_GRAPH_EXP, "graph">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_GRAPH_DESTROY_EXP, "graph">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_EXECUTABLE_GRAPH_DESTROY_EXP, "executable_graph">()), Param(0));
}

// Graphs (compute-runtime's zex_graph.h): the handles each call makes are its outputs.
TEST(DeviceTimelineCalls, GraphHandlesAreTheOutputsAndParametersMeant) {
  const uint64_t graph = 0x6000, exec = 0x7000;
  const ApiCall create = Probe(XT_ZE_GRAPH_CREATE_EXP).Pointee(1, graph).Call();
  EXPECT_EQ(ZeCall<XT_ZE_GRAPH_CREATE_EXP>(create).Get<"graph">(), graph);
  const ApiCall end = Probe(XT_ZE_COMMAND_LIST_END_GRAPH_CAPTURE_EXP).Pointee(1, graph).Call();
  EXPECT_EQ(ZeCall<XT_ZE_COMMAND_LIST_END_GRAPH_CAPTURE_EXP>(end).Get<"graph">(), graph);
  const ApiCall inst = Probe(XT_ZE_COMMAND_LIST_INSTANTIATE_GRAPH_EXP).Pointee(1, exec).Call();
  EXPECT_EQ(ZeCall<XT_ZE_COMMAND_LIST_INSTANTIATE_GRAPH_EXP>(inst).Get<"executable_graph">(), exec);
  // zeCommandListAppendGraphExp(hCommandList, hGraph, pNext, hSignalEvent, numWaitEvents,
  // phWaitEvents)
  EXPECT_EQ((Named<XT_ZE_COMMAND_LIST_APPEND_GRAPH_EXP, "command_list">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_COMMAND_LIST_APPEND_GRAPH_EXP, "executable_graph">()), Param(1));
  EXPECT_EQ((Named<XT_ZE_COMMAND_LIST_APPEND_GRAPH_EXP, "signal_event">()), Param(3));
  EXPECT_EQ((Named<XT_ZE_COMMAND_LIST_APPEND_GRAPH_EXP, "num_wait_events">()), Param(4));
}

TEST(DeviceTimelineCalls, AppendsNameTheirListSignalEventAndSize) {
  // zeCommandListAppend*(hCommandList, ...): the list is always the first parameter.
  EXPECT_EQ((Named<XT_ZE_APPEND_MEMORY_COPY, "command_list">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_APPEND_MEMORY_COPY_REGION, "command_list">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_APPEND_MEMORY_FILL, "command_list">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_APPEND_MEMORY_PREFETCH, "command_list">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_APPEND_BARRIER, "command_list">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_APPEND_MEMORY_RANGES_BARRIER, "command_list">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_APPEND_SIGNAL_EVENT, "command_list">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_APPEND_WAIT_ON_EVENTS, "command_list">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_APPEND_EVENT_RESET, "command_list">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_APPEND_WRITE_GLOBAL_TIMESTAMP, "command_list">()), Param(0));
  EXPECT_EQ((Named<XT_ZE_APPEND_QUERY_KERNEL_TIMESTAMPS, "command_list">()), Param(0));
  // hSignalEvent: where each signature puts it (the tenth parameter of a region copy is
  // copied from the stack).
  EXPECT_EQ((Named<XT_ZE_APPEND_MEMORY_COPY, "signal_event">()), Param(4));
  EXPECT_EQ((Named<XT_ZE_APPEND_MEMORY_COPY_REGION, "signal_event">()), Param(9));
  EXPECT_EQ((Named<XT_ZE_APPEND_MEMORY_FILL, "signal_event">()), Param(5));
  EXPECT_EQ((Named<XT_ZE_APPEND_BARRIER, "signal_event">()), Param(1));
  EXPECT_EQ((Named<XT_ZE_APPEND_MEMORY_RANGES_BARRIER, "signal_event">()), Param(4));
  EXPECT_EQ((Named<XT_ZE_APPEND_SIGNAL_EVENT, "signal_event">()), Param(1));
  EXPECT_EQ((Named<XT_ZE_APPEND_WRITE_GLOBAL_TIMESTAMP, "signal_event">()), Param(2));
  EXPECT_EQ((Named<XT_ZE_APPEND_QUERY_KERNEL_TIMESTAMPS, "signal_event">()), Param(5));
  // Bytes moved: size of a copy and of a fill (not the fill's pattern size).
  EXPECT_EQ((Named<XT_ZE_APPEND_MEMORY_COPY, "size">()), Param(3));
  EXPECT_EQ((Named<XT_ZE_APPEND_MEMORY_FILL, "size">()), Param(4));

  ze_copy_region_t region{};
  region.width = 16;
  region.height = 4;
  region.depth = 0;  // a 2D copy
  const ApiCall call = Probe(XT_ZE_APPEND_MEMORY_COPY_REGION).Pointee(2, region).Call();
  EXPECT_EQ(ZeCall<XT_ZE_APPEND_MEMORY_COPY_REGION>(call).Get<"size">(), 64u);
}

TEST(DeviceTimelineCalls, ExecuteNamesQueueFenceAndFirstList) {
  // zeCommandQueueExecuteCommandLists(hCommandQueue, numCommandLists, phCommandLists, hFence)
  const uint64_t lists[2] = {0x11, 0x12};
  DecodedZeExecute rec{};
  rec.queue = Param(0);
  rec.num_lists = 2;
  rec.lists_copied = 2;
  rec.lists = reinterpret_cast<const std::byte*>(lists);
  rec.fence = Param(3);
  const ApiCall call = BuildApiCall(rec);
  const ZeCall<XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS> c(call);
  EXPECT_EQ(c.Get<"command_queue">(), Param(0));
  EXPECT_EQ(c.Get<"fence">(), Param(3));
  EXPECT_EQ(c.Get<"num_command_lists">(), 2u);
  EXPECT_EQ(c.Get<"command_list">(), 0x11u);
}

TEST(DeviceTimelineCalls, DeviceGetNamesTheDevicesWritten) {
  const uint32_t count = 2;
  const uint64_t devices[4] = {0xd1, 0xd2, 0, 0};
  const ApiCall call = Probe(XT_ZE_DEVICE_GET).Pointee(1, count).Pointee(2, devices).Call();
  auto written = ZeCall<XT_ZE_DEVICE_GET>(call).Elements();
  EXPECT_EQ(std::vector<uint64_t>(written.begin(), written.end()),
            (std::vector<uint64_t>{0xd1, 0xd2}));
}

TEST(DeviceTimelineCalls, GlobalTimestampsNameHostAndDeviceTime) {
  const uint64_t host = 5'000'000'000, device = 123'456'789;
  const ApiCall call =
      Probe(XT_ZE_DEVICE_GET_GLOBAL_TIMESTAMPS).Pointee(1, host).Pointee(2, device).Call();
  const ZeCall<XT_ZE_DEVICE_GET_GLOBAL_TIMESTAMPS> c(call);
  EXPECT_EQ(c.Get<"host_timestamp">(), host);
  EXPECT_EQ(c.Get<"device_timestamp">(), device);
}

TEST(DeviceTimelineCalls, QueueAndImmediateListDescriptors) {
  ze_command_queue_desc_t desc{};
  desc.ordinal = 2;
  desc.index = 1;
  desc.flags = 0x5;
  desc.mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
  desc.priority = ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH;
  const uint64_t handle = 0xabc;

  const ApiCall queue = Probe(XT_ZE_COMMAND_QUEUE_CREATE).Pointee(2, desc).Pointee(3, handle).Call();
  const ZeCall<XT_ZE_COMMAND_QUEUE_CREATE> q(queue);
  EXPECT_EQ(q.Get<"ordinal">(), 2u);
  EXPECT_EQ(q.Get<"index">(), 1u);
  EXPECT_EQ(q.Get<"mode">(), uint32_t{ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS});
  EXPECT_EQ(q.Get<"command_queue">(), handle);

  const ApiCall list =
      Probe(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE).Pointee(2, desc).Pointee(3, handle).Call();
  const ZeCall<XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE> l(list);
  EXPECT_EQ(l.Get<"ordinal">(), 2u);
  EXPECT_EQ(l.Get<"index">(), 1u);
  EXPECT_EQ(l.Get<"mode">(), uint32_t{ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS});
  EXPECT_EQ(l.Get<"command_list">(), handle);
}

TEST(DeviceTimelineCalls, RegularListDescriptor) {
  ze_command_list_desc_t desc{};
  desc.commandQueueGroupOrdinal = 3;
  desc.flags = 0x4;
  const uint64_t handle = 0xc1;
  const ApiCall call = Probe(XT_ZE_COMMAND_LIST_CREATE).Pointee(2, desc).Pointee(3, handle).Call();
  const ZeCall<XT_ZE_COMMAND_LIST_CREATE> c(call);
  EXPECT_EQ(c.Get<"ordinal">(), 3u);
  EXPECT_EQ(c.Get<"command_list">(), handle);
}

TEST(DeviceTimelineCalls, EventPoolEventAndFenceCreation) {
  ze_event_pool_desc_t pool_desc{};
  pool_desc.flags = ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP;
  pool_desc.count = 8;
  const uint64_t pool = 0xe0, event = 0xe1, fence = 0xf1;
  const ApiCall p = Probe(XT_ZE_EVENT_POOL_CREATE).Pointee(1, pool_desc).Pointee(4, pool).Call();
  EXPECT_EQ(ZeCall<XT_ZE_EVENT_POOL_CREATE>(p).Get<"flags">(),
            uint32_t{ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP});
  EXPECT_EQ(ZeCall<XT_ZE_EVENT_POOL_CREATE>(p).Get<"event_pool">(), pool);

  ze_event_desc_t event_desc{};
  const ApiCall e = Probe(XT_ZE_EVENT_CREATE).Pointee(1, event_desc).Pointee(2, event).Call();
  EXPECT_EQ(ZeCall<XT_ZE_EVENT_CREATE>(e).Get<"event">(), event);

  const ApiCall f = Probe(XT_ZE_FENCE_CREATE).Pointee(2, fence).Call();
  EXPECT_EQ(ZeCall<XT_ZE_FENCE_CREATE>(f).Get<"fence">(), fence);
}

TEST(DeviceTimelineCalls, TimestampReadsNameTheGlobalInterval) {
  ze_kernel_timestamp_result_t result{};
  result.global.kernelStart = 1000;
  result.global.kernelEnd = 2000;
  result.context.kernelStart = 1100;
  result.context.kernelEnd = 1900;

  const ApiCall k = Probe(XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP).Pointee(1, result).Call();
  EXPECT_EQ(ZeCall<XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP>(k).Get<"global_start">(), 1000u);
  EXPECT_EQ(ZeCall<XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP>(k).Get<"global_end">(), 2000u);

  const uint32_t count = 1;
  const ApiCall x =
      Probe(XT_ZE_EVENT_QUERY_TIMESTAMPS_EXP).Pointee(2, count).Pointee(3, result).Call();
  EXPECT_EQ(ZeCall<XT_ZE_EVENT_QUERY_TIMESTAMPS_EXP>(x).Get<"global_start">(), 1000u);
  EXPECT_EQ(ZeCall<XT_ZE_EVENT_QUERY_TIMESTAMPS_EXP>(x).Get<"global_end">(), 2000u);
}

}  // namespace
}  // namespace xtrace
