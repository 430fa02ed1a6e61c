// Tests for correlate/device_memory: running totals per device and per process, frees,
// addresses handed out again, and frees of what was allocated before the capture.
#include "correlate/device_memory.h"

#include <gtest/gtest.h>

#include <vector>

#include "correlate/event_sink.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

class Sink : public EventSink {
 public:
  void OnEvent(const Event& e) override {
    if (auto* u = std::get_if<MemoryUsage>(&e)) usage.push_back(*u);
  }
  std::vector<MemoryUsage> usage;
};

ApiCall Alloc(uint16_t fn, uint32_t pid, uint64_t device, uint64_t size, uint64_t ptr) {
  ApiCall c;
  c.pid = pid;
  c.fn = fn;
  c.end_ns = 1000 + ptr;
  c.arg[1] = device;
  c.arg[2] = size;
  c.arg[5] = ptr;
  return c;
}

ApiCall Free(uint32_t pid, uint64_t ptr) {
  ApiCall c;
  c.pid = pid;
  c.fn = XT_ZE_MEM_FREE;
  c.end_ns = 5000 + ptr;
  c.arg[1] = ptr;
  return c;
}

TEST(DeviceMemory, TotalsPerDeviceAcrossProcessesAndHostPerProcess) {
  Sink sink;
  ZeDeviceTable devices;
  devices.Learn(1, 0xd0, 0);
  devices.Learn(1, 0xd1, 1);
  devices.Learn(2, 0xe0, 1);  // another process's handle for device 1
  DeviceMemoryTracker m(sink, devices);
  m.OnCall(Alloc(XT_ZE_MEM_ALLOC_DEVICE, 1, 0xd1, 1000, 0x10));
  m.OnCall(Alloc(XT_ZE_MEM_ALLOC_DEVICE, 2, 0xe0, 500, 0x10));  // same address, other process
  m.OnCall(Alloc(XT_ZE_MEM_ALLOC_SHARED, 2, 0xe0, 64, 0x20));
  m.OnCall(Alloc(XT_ZE_MEM_ALLOC_DEVICE, 1, 0xd0, 7, 0x30));
  m.OnCall(Alloc(XT_ZE_MEM_ALLOC_HOST, 1, 0, 300, 0x40));
  ASSERT_EQ(sink.usage.size(), 5u);
  EXPECT_EQ(sink.usage[1].device, 1u);
  EXPECT_EQ(sink.usage[1].device_bytes, 1500u);
  EXPECT_EQ(sink.usage[2].shared_bytes, 64u);
  EXPECT_EQ(sink.usage[3].device, 0u);
  EXPECT_EQ(sink.usage[3].device_bytes, 7u);
  EXPECT_EQ(sink.usage[4].device, kUnknownDevice);
  EXPECT_EQ(sink.usage[4].pid, 1u);
  EXPECT_EQ(sink.usage[4].host_bytes, 300u);
  EXPECT_EQ(m.live_allocations(), 5u);

  m.OnCall(Free(1, 0x10));
  EXPECT_EQ(sink.usage.back().device, 1u);
  EXPECT_EQ(sink.usage.back().device_bytes, 500u);
  EXPECT_EQ(sink.usage.back().time_ns, 5000u + 0x10);
  m.OnCall(Free(1, 0x999));  // allocated before the capture began
  EXPECT_EQ(sink.usage.size(), 6u);
  EXPECT_EQ(m.unknown_frees(), 1u);
  ApiCall failed = Alloc(XT_ZE_MEM_ALLOC_DEVICE, 1, 0xd0, 1 << 30, 0);
  failed.result = 0x70000003;  // out of device memory
  m.OnCall(failed);
  EXPECT_EQ(sink.usage.size(), 6u);
  EXPECT_EQ(m.live_allocations(), 4u);
}

TEST(DeviceMemory, AnAddressHandedOutAgainReplacesTheOldAllocation) {
  Sink sink;
  ZeDeviceTable devices;
  devices.set_known_devices(1);
  DeviceMemoryTracker m(sink, devices);
  m.OnCall(Alloc(XT_ZE_MEM_ALLOC_DEVICE, 1, 0xd0, 100, 0x10));
  // Its zeMemFree was missed (say, it failed to probe): the new allocation replaces it.
  m.OnCall(Alloc(XT_ZE_MEM_ALLOC_DEVICE, 1, 0xd0, 40, 0x10));
  EXPECT_EQ(sink.usage.back().device_bytes, 40u);
  EXPECT_EQ(m.live_allocations(), 1u);
}

}  // namespace
}  // namespace xtrace
