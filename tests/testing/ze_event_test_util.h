// Field-by-field comparison of the Level Zero events (model/ze_events.h) for log tests.
#pragma once

#include <gtest/gtest.h>

#include "model/event.h"

namespace xtrace::test_util {

inline void ExpectSameZeEvent(const Event& expected, const Event& actual) {
  ASSERT_EQ(expected.index(), actual.index()) << "different event kinds";
  if (const auto* e = std::get_if<ApiCall>(&expected)) {
    const auto& a = std::get<ApiCall>(actual);
    EXPECT_EQ(e->pid, a.pid);
    EXPECT_EQ(e->tid, a.tid);
    EXPECT_EQ(e->start_ns, a.start_ns);
    EXPECT_EQ(e->end_ns, a.end_ns);
    EXPECT_EQ(e->fn, a.fn);
    EXPECT_EQ(e->result, a.result);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(e->arg[i], a.arg[i]) << "arg" << i;
    EXPECT_EQ(e->args_unreadable, a.args_unreadable);
    EXPECT_EQ(e->learned, a.learned);
    EXPECT_EQ(e->truncated, a.truncated);
  } else if (const auto* e = std::get_if<DeviceOp>(&expected)) {
    const auto& a = std::get<DeviceOp>(actual);
    EXPECT_EQ(e->pid, a.pid);
    EXPECT_EQ(e->device, a.device);
    EXPECT_EQ(e->queue, a.queue);
    EXPECT_EQ(e->track, a.track);
    EXPECT_EQ(e->command_list, a.command_list);
    EXPECT_EQ(e->id, a.id);
    EXPECT_EQ(e->kind, a.kind);
    EXPECT_EQ(e->name, a.name);
    EXPECT_EQ(e->start_ns, a.start_ns);
    EXPECT_EQ(e->end_ns, a.end_ns);
    EXPECT_EQ(e->measured, a.measured);
    EXPECT_EQ(e->completion_seen, a.completion_seen);
    EXPECT_EQ(e->start_ticks, a.start_ticks);
    EXPECT_EQ(e->end_ticks, a.end_ticks);
    EXPECT_EQ(e->append_tid, a.append_tid);
    EXPECT_EQ(e->append_ns, a.append_ns);
    EXPECT_EQ(e->submit_tid, a.submit_tid);
    EXPECT_EQ(e->submit_ns, a.submit_ns);
    EXPECT_EQ(e->sync_tid, a.sync_tid);
    EXPECT_EQ(e->sync_ns, a.sync_ns);
    EXPECT_EQ(e->execution, a.execution);
    EXPECT_EQ(e->kernel, a.kernel);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(e->group_count[i], a.group_count[i]);
    EXPECT_EQ(e->bytes, a.bytes);
    EXPECT_EQ(e->signal_event, a.signal_event);
  } else if (const auto* e = std::get_if<DeviceQueue>(&expected)) {
    const auto& a = std::get<DeviceQueue>(actual);
    EXPECT_EQ(e->pid, a.pid);
    EXPECT_EQ(e->device, a.device);
    EXPECT_EQ(e->handle, a.handle);
    EXPECT_EQ(e->immediate, a.immediate);
    EXPECT_EQ(e->ordinal, a.ordinal);
    EXPECT_EQ(e->index, a.index);
    EXPECT_EQ(e->track, a.track);
    EXPECT_EQ(e->engine_unknown, a.engine_unknown);
  } else if (const auto* e = std::get_if<DeviceInfo>(&expected)) {
    const auto& a = std::get<DeviceInfo>(actual);
    EXPECT_EQ(e->device, a.device);
    EXPECT_EQ(e->name, a.name);
    EXPECT_EQ(e->timer_hz, a.timer_hz);
    EXPECT_EQ(e->kernel_timestamp_bits, a.kernel_timestamp_bits);
    EXPECT_EQ(e->queue_group_flags, a.queue_group_flags);
  } else if (const auto* e = std::get_if<ClockSample>(&expected)) {
    const auto& a = std::get<ClockSample>(actual);
    EXPECT_EQ(e->device, a.device);
    EXPECT_EQ(e->pid, a.pid);
    EXPECT_EQ(e->device_ticks, a.device_ticks);
    EXPECT_EQ(e->monotonic_raw_ns, a.monotonic_raw_ns);
    EXPECT_EQ(e->monotonic_ns, a.monotonic_ns);
    EXPECT_EQ(e->realtime_ns, a.realtime_ns);
  } else if (const auto* e = std::get_if<ClockFit>(&expected)) {
    const auto& a = std::get<ClockFit>(actual);
    EXPECT_EQ(e->device, a.device);
    EXPECT_EQ(e->time_ns, a.time_ns);
    EXPECT_EQ(e->hz, a.hz);
    EXPECT_EQ(e->nominal_hz, a.nominal_hz);
    EXPECT_EQ(e->ref_ticks, a.ref_ticks);
    EXPECT_EQ(e->ref_ns, a.ref_ns);
    EXPECT_EQ(e->residual_rms_ns, a.residual_rms_ns);
    EXPECT_EQ(e->residual_max_ns, a.residual_max_ns);
    EXPECT_EQ(e->samples, a.samples);
  } else if (const auto* e = std::get_if<MemoryUsage>(&expected)) {
    const auto& a = std::get<MemoryUsage>(actual);
    EXPECT_EQ(e->time_ns, a.time_ns);
    EXPECT_EQ(e->pid, a.pid);
    EXPECT_EQ(e->device, a.device);
    EXPECT_EQ(e->device_bytes, a.device_bytes);
    EXPECT_EQ(e->shared_bytes, a.shared_bytes);
    EXPECT_EQ(e->host_bytes, a.host_bytes);
  } else if (const auto* e = std::get_if<UnfinishedCall>(&expected)) {
    const auto& a = std::get<UnfinishedCall>(actual);
    EXPECT_EQ(e->pid, a.pid);
    EXPECT_EQ(e->tid, a.tid);
    EXPECT_EQ(e->start_ns, a.start_ns);
    EXPECT_EQ(e->end_ns, a.end_ns);
    EXPECT_EQ(e->function, a.function);
    EXPECT_EQ(e->signal, a.signal);
    EXPECT_EQ(e->capture_ended, a.capture_ended);
  } else {
    ADD_FAILURE() << "ExpectSameZeEvent: event kind " << expected.index() << " not compared";
  }
}

}  // namespace xtrace::test_util
