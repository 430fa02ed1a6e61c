// What the device timeline's unit tests share (correlate/device_timeline_*unittest.cc): one
// process on one simulated device whose clock runs hours ahead of the host's, calls and
// launches made with that process's ids, and a sink that keeps every event.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <variant>
#include <vector>

#include "collecting_sink.h"
#include "correlate/device_timeline.h"
#include "correlate/event_sink.h"

namespace xtrace::device_timeline_testing {

constexpr uint32_t kPid = 100;
constexpr uint32_t kTid = 101;
constexpr uint64_t kHz = 19'200'000;
constexpr uint64_t kDevice = 0xde0;
constexpr uint64_t kContext = 0xc0;
constexpr uint64_t kTicksAtZero = 48ull << 32;  // the device clock: hours of ticks at host 0
constexpr uint32_t kPoolTimestamps = 1u << 2;

inline uint64_t TicksAt(uint64_t ns) { return kTicksAtZero + ns * kHz / 1'000'000'000; }

using Sink = CollectingSink;

inline ApiCall Call(uint16_t fn, uint64_t start_ns, std::initializer_list<uint64_t> args,
             uint32_t tid = kTid, int32_t result = 0) {
  ApiCall c;
  c.pid = kPid;
  c.tid = tid;
  c.fn = fn;
  c.start_ns = start_ns;
  c.end_ns = start_ns + 1'000;
  c.result = result;
  int i = 0;
  for (uint64_t a : args) c.arg[i++] = a;
  return c;
}

inline KernelLaunch Launch(uint64_t list, uint64_t start_ns, uint64_t signal, StringId name) {
  KernelLaunch l;
  l.pid = kPid;
  l.tid = kTid;
  l.start_ns = start_ns;
  l.end_ns = start_ns + 2'000;
  l.command_list = list;
  l.kernel = 0x4e;
  l.signal_event = signal;
  l.group_count[0] = 64;
  l.kernel_name = name;
  l.name_known = true;
  return l;
}

class DeviceTimelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    devices_.set_known_devices(1);
    tl_.OnDevice(DeviceInfo{0, strings_.Intern("sim"), kHz, 32});
    tl_.OnCall(Call(XT_ZE_DEVICE_GET, 0, {0xd1, 1, kDevice}), nullptr);
    ReadClock(1'000'000'000);
  }
  void ReadClock(uint64_t ns) {
    tl_.OnClockReading(0, TicksAt(ns), ns);
    tl_.EmitCovered();
  }
  void On(const ApiCall& c) { tl_.OnCall(c, nullptr); }
  // Events 0xe0.. in a pool with (or without) kernel timestamps.
  void MakeEvents(int n, bool timestamps, uint64_t pool = 0x9001) {
    On(Call(XT_ZE_EVENT_POOL_CREATE, 10, {kContext, timestamps ? kPoolTimestamps : 0u, 8, 1, 0, pool}));
    for (int i = 0; i < n; ++i) On(Call(XT_ZE_EVENT_CREATE, 20, {pool, uint64_t(i), 4, 4, 0, Event(i)}));
  }
  static uint64_t Event(int i) { return 0xe0 + i; }

  StringTable strings_;
  Sink sink_;
  ZeDeviceTable devices_;
  DeviceTimeline tl_{strings_, sink_, devices_};
};

}  // namespace xtrace::device_timeline_testing
