// Level Zero correlation glue; see ze_correlator.h.
#include "correlate/ze_correlator.h"

#include "correlate/event_sink.h"

namespace xtrace {

ZeCorrelator::ZeCorrelator(StringTable& strings, EventSink& sink)
    : sink_(sink), timeline_(strings, sink, devices_), memory_(sink, devices_) {}

void ZeCorrelator::OnCall(const ApiCall& call, const DecodedZeExecute* execute) {
  timeline_.OnCall(call, execute);
  memory_.OnCall(call);
}

void ZeCorrelator::OnDevices(const std::vector<DeviceInfo>& devices,
                             std::vector<DeviceUuid> uuids) {
  devices_.set_known_devices(static_cast<uint32_t>(devices.size()));
  devices_.set_known_uuids(std::move(uuids));
  for (const DeviceInfo& d : devices) {
    timeline_.OnDevice(d);
    sink_.OnEvent(d);
  }
}

void ZeCorrelator::OnClockReading(uint32_t device, uint64_t ticks, uint64_t monotonic_raw_ns,
                                  uint64_t monotonic_ns, uint64_t realtime_ns) {
  timeline_.OnHostClocks(monotonic_raw_ns, monotonic_ns);
  timeline_.OnClockReading(device, ticks, monotonic_ns);
  sink_.OnEvent(ClockSample{device, 0, ticks, monotonic_raw_ns, monotonic_ns, realtime_ns});
}

void ZeCorrelator::OnHostClocks(uint64_t monotonic_raw_ns, uint64_t monotonic_ns) {
  timeline_.OnHostClocks(monotonic_raw_ns, monotonic_ns);
}

void ZeCorrelator::AfterClockReadings(uint64_t now_ns) {
  for (const ClockFit& fit : timeline_.Fits(now_ns)) sink_.OnEvent(fit);
  timeline_.EmitCovered();
}

void ZeCorrelator::Finish(uint64_t now_ns) {
  timeline_.Finish();
  for (const ClockFit& fit : timeline_.Fits(now_ns)) sink_.OnEvent(fit);
}

}  // namespace xtrace
