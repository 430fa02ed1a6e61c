// Level Zero event encoding for the log; see ze_event_codec.h.
#include "log/ze_event_codec.h"

namespace xtrace::log_codec {

bool ZeEventStart(const Event& event, uint64_t* start_ns) {
  if (const auto* e = std::get_if<ApiCall>(&event)) {
    *start_ns = e->start_ns;
    return true;
  }
  if (const auto* e = std::get_if<DeviceOp>(&event)) {
    *start_ns = e->start_ns;
    return true;
  }
  if (const auto* e = std::get_if<MemoryUsage>(&event)) {
    *start_ns = e->time_ns;
    return true;
  }
  if (const auto* e = std::get_if<UnfinishedCall>(&event)) {
    *start_ns = e->start_ns;
    return true;
  }
  return false;
}

// Times are offsets from the batch base, wrapping mod 2^64 like the other kinds.
bool EncodeZeEvent(const Event& event, uint64_t base_ns, log_schema::Event::Builder out) {
  if (const auto* e = std::get_if<UnfinishedCall>(&event)) {
    auto g = out.initUnfinishedCall();
    g.setPid(e->pid);
    g.setTid(e->tid);
    g.setStartOffsetNs(e->start_ns - base_ns);
    g.setDurationNs(e->end_ns - e->start_ns);
    g.setFunction(e->function);
    g.setSignal(e->signal);
    g.setCaptureEnded(e->capture_ended);
    return true;
  }
  if (const auto* e = std::get_if<ApiCall>(&event)) {
    auto g = out.initApiCall();
    g.setPid(e->pid);
    g.setTid(e->tid);
    g.setStartOffsetNs(e->start_ns - base_ns);
    g.setDurationNs(e->end_ns - e->start_ns);
    g.setFunction(e->fn);
    g.setResult(e->result);
    g.setArg0(e->arg[0]);
    g.setArg1(e->arg[1]);
    g.setArg2(e->arg[2]);
    g.setArg3(e->arg[3]);
    g.setArg4(e->arg[4]);
    g.setArg5(e->arg[5]);
    g.setArgsUnreadable(e->args_unreadable);
    g.setLearned(e->learned);
    g.setTruncated(e->truncated);
    return true;
  }
  if (const auto* e = std::get_if<DeviceOp>(&event)) {
    auto g = out.initDeviceOp();
    g.setPid(e->pid);
    g.setDevice(e->device);
    g.setQueue(e->queue);
    g.setCommandList(e->command_list);
    g.setId(e->id);
    g.setKind(static_cast<uint8_t>(e->kind));
    g.setName(e->name);
    g.setStartOffsetNs(e->start_ns - base_ns);
    g.setDurationNs(e->end_ns - e->start_ns);
    g.setMeasured(e->measured);
    g.setCompletionUnseen(!e->completion_seen);
    g.setStartTicks(e->start_ticks);
    g.setEndTicks(e->end_ticks);
    g.setAppendTid(e->append_tid);
    g.setAppendOffsetNs(e->append_ns - base_ns);
    g.setSubmitTid(e->submit_tid);
    g.setSubmitOffsetNs(e->submit_ns - base_ns);
    g.setSyncTid(e->sync_tid);
    g.setSyncOffsetNs(e->sync_ns - base_ns);
    g.setHasSync(e->sync_ns != 0);
    g.setExecution(e->execution);
    g.setKernel(e->kernel);
    g.setGroupCountX(e->group_count[0]);
    g.setGroupCountY(e->group_count[1]);
    g.setGroupCountZ(e->group_count[2]);
    g.setBytes(e->bytes);
    g.setSignalEvent(e->signal_event);
    g.setTrack(e->track);
    return true;
  }
  if (const auto* e = std::get_if<DeviceQueue>(&event)) {
    auto g = out.initDeviceQueue();
    g.setPid(e->pid);
    g.setDevice(e->device);
    g.setHandle(e->handle);
    g.setImmediate(e->immediate);
    g.setOrdinal(e->ordinal);
    g.setIndex(e->index);
    g.setTrack(e->track);
    g.setEngineUnknown(e->engine_unknown);
    return true;
  }
  if (const auto* e = std::get_if<DeviceInfo>(&event)) {
    auto g = out.initDeviceInfo();
    g.setDevice(e->device);
    g.setName(e->name);
    g.setTimerHz(e->timer_hz);
    g.setKernelTimestampBits(e->kernel_timestamp_bits);
    auto flags = g.initQueueGroupFlags(static_cast<unsigned>(e->queue_group_flags.size()));
    for (unsigned i = 0; i < flags.size(); ++i) flags.set(i, e->queue_group_flags[i]);
    return true;
  }
  if (const auto* e = std::get_if<ClockSample>(&event)) {
    auto g = out.initClockSample();
    g.setDevice(e->device);
    g.setPid(e->pid);
    g.setDeviceTicks(e->device_ticks);
    g.setMonotonicRawNs(e->monotonic_raw_ns);
    g.setMonotonicNs(e->monotonic_ns);
    g.setRealtimeNs(e->realtime_ns);
    return true;
  }
  if (const auto* e = std::get_if<ClockFit>(&event)) {
    auto g = out.initClockFit();
    g.setDevice(e->device);
    g.setTimeNs(e->time_ns);
    g.setHz(e->hz);
    g.setNominalHz(e->nominal_hz);
    g.setRefTicks(e->ref_ticks);
    g.setRefNs(e->ref_ns);
    g.setResidualRmsNs(e->residual_rms_ns);
    g.setResidualMaxNs(e->residual_max_ns);
    g.setSamples(e->samples);
    return true;
  }
  if (const auto* e = std::get_if<MemoryUsage>(&event)) {
    auto g = out.initMemoryUsage();
    g.setTimeOffsetNs(e->time_ns - base_ns);
    g.setPid(e->pid);
    g.setDevice(e->device);
    g.setDeviceBytes(e->device_bytes);
    g.setSharedBytes(e->shared_bytes);
    g.setHostBytes(e->host_bytes);
    return true;
  }
  return false;
}

bool DecodeZeEvent(log_schema::Event::Reader in, uint64_t base_ns, Event* out) {
  switch (in.which()) {
    case log_schema::Event::UNFINISHED_CALL: {
      auto g = in.getUnfinishedCall();
      UnfinishedCall e;
      e.pid = g.getPid();
      e.tid = g.getTid();
      e.start_ns = base_ns + g.getStartOffsetNs();
      e.end_ns = e.start_ns + g.getDurationNs();
      e.function = g.getFunction();
      e.signal = g.getSignal();
      e.capture_ended = g.getCaptureEnded();
      *out = e;
      return true;
    }
    case log_schema::Event::API_CALL: {
      auto g = in.getApiCall();
      ApiCall e;
      e.pid = g.getPid();
      e.tid = g.getTid();
      e.start_ns = base_ns + g.getStartOffsetNs();
      e.end_ns = e.start_ns + g.getDurationNs();
      e.fn = g.getFunction();
      e.result = g.getResult();
      e.arg[0] = g.getArg0();
      e.arg[1] = g.getArg1();
      e.arg[2] = g.getArg2();
      e.arg[3] = g.getArg3();
      e.arg[4] = g.getArg4();
      e.arg[5] = g.getArg5();
      e.args_unreadable = g.getArgsUnreadable();
      e.learned = g.getLearned();
      e.truncated = g.getTruncated();
      *out = e;
      return true;
    }
    case log_schema::Event::DEVICE_OP: {
      auto g = in.getDeviceOp();
      DeviceOp e;
      e.pid = g.getPid();
      e.device = g.getDevice();
      e.queue = g.getQueue();
      e.command_list = g.getCommandList();
      e.id = g.getId();
      e.kind = static_cast<DeviceOpKind>(g.getKind());
      e.name = g.getName();
      e.start_ns = base_ns + g.getStartOffsetNs();
      e.end_ns = e.start_ns + g.getDurationNs();
      e.measured = g.getMeasured();
      e.completion_seen = !g.getCompletionUnseen();
      e.start_ticks = g.getStartTicks();
      e.end_ticks = g.getEndTicks();
      e.append_tid = g.getAppendTid();
      e.append_ns = base_ns + g.getAppendOffsetNs();
      e.submit_tid = g.getSubmitTid();
      e.submit_ns = base_ns + g.getSubmitOffsetNs();
      e.sync_tid = g.getSyncTid();
      e.sync_ns = g.getHasSync() ? base_ns + g.getSyncOffsetNs() : 0;
      e.execution = g.getExecution();
      e.kernel = g.getKernel();
      e.group_count[0] = g.getGroupCountX();
      e.group_count[1] = g.getGroupCountY();
      e.group_count[2] = g.getGroupCountZ();
      e.bytes = g.getBytes();
      e.signal_event = g.getSignalEvent();
      e.track = g.getTrack();
      *out = e;
      return true;
    }
    case log_schema::Event::DEVICE_QUEUE: {
      auto g = in.getDeviceQueue();
      *out = DeviceQueue{.pid = g.getPid(),
                         .device = g.getDevice(),
                         .handle = g.getHandle(),
                         .immediate = g.getImmediate(),
                         .ordinal = g.getOrdinal(),
                         .index = g.getIndex(),
                         .track = g.getTrack(),
                         .engine_unknown = g.getEngineUnknown()};
      return true;
    }
    case log_schema::Event::DEVICE_INFO: {
      auto g = in.getDeviceInfo();
      *out = DeviceInfo{.device = g.getDevice(),
                        .name = g.getName(),
                        .timer_hz = g.getTimerHz(),
                        .kernel_timestamp_bits = g.getKernelTimestampBits()};
      for (const uint32_t flags : g.getQueueGroupFlags())
        std::get<DeviceInfo>(*out).queue_group_flags.push_back(flags);
      return true;
    }
    case log_schema::Event::CLOCK_SAMPLE: {
      auto g = in.getClockSample();
      *out = ClockSample{.device = g.getDevice(),
                         .pid = g.getPid(),
                         .device_ticks = g.getDeviceTicks(),
                         .monotonic_raw_ns = g.getMonotonicRawNs(),
                         .monotonic_ns = g.getMonotonicNs(),
                         .realtime_ns = g.getRealtimeNs()};
      return true;
    }
    case log_schema::Event::CLOCK_FIT: {
      auto g = in.getClockFit();
      *out = ClockFit{.device = g.getDevice(),
                      .time_ns = g.getTimeNs(),
                      .hz = g.getHz(),
                      .nominal_hz = g.getNominalHz(),
                      .ref_ticks = g.getRefTicks(),
                      .ref_ns = g.getRefNs(),
                      .residual_rms_ns = g.getResidualRmsNs(),
                      .residual_max_ns = g.getResidualMaxNs(),
                      .samples = g.getSamples()};
      return true;
    }
    case log_schema::Event::MEMORY_USAGE: {
      auto g = in.getMemoryUsage();
      *out = MemoryUsage{.time_ns = base_ns + g.getTimeOffsetNs(),
                         .pid = g.getPid(),
                         .device = g.getDevice(),
                         .device_bytes = g.getDeviceBytes(),
                         .shared_bytes = g.getSharedBytes(),
                         .host_bytes = g.getHostBytes()};
      return true;
    }
    default:
      return false;
  }
}

}  // namespace xtrace::log_codec
