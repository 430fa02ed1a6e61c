// Device clock readings for the correlator; see device_clocks.h.
#include "capture/sources/device_clocks.h"

#include <cstring>
#include <utility>
#include <vector>

#include "base/monotonic_clock.h"
#include "base/read_file.h"
#include "capture/sources/own_level_zero_trial.h"
#include "correlate/ze_correlator.h"
#include "model/string_table.h"

namespace xtrace {

std::unique_ptr<DeviceClocks> DeviceClocks::Open(
    ZeCorrelator& ze, StringTable& strings, std::span<const std::string_view> driver_function_names,
    DriverFunctions& driver_functions, const std::function<void(const std::string&)>& say,
    const std::function<void(const std::string&)>& note) {
  // A driver that crashes or hangs in its start-up would take xtrace with it: tried first.
  // Its failure is why the log has no devices: a note, so the log (and `xtrace report`) says
  // it too.
  if (const std::optional<std::string> failure = OwnLevelZeroTrialFailure()) {
    say(*failure);
    if (note) note(*failure);
    return nullptr;
  }
  auto sampler = DeviceClockSampler::Open();
  if (!sampler.ok()) {
    say("no device clock readings (" + sampler.status().message() +
        "): device times are estimated unless the traced processes read their clocks");
    return nullptr;
  }
  std::unique_ptr<DeviceClocks> clocks(new DeviceClocks(ze, std::move(*sampler)));
  const DeviceClockSampler& sampler_ref = *clocks->sampler_;
  if (const auto self_maps = ReadWholeFile("/proc/self/maps"))
    for (const auto& [name, address] : sampler_ref.ExtensionFunctions(driver_function_names))
      driver_functions.Add(*self_maps, name, address);
  std::vector<DeviceInfo> devices;
  std::vector<DeviceUuid> uuids;
  for (const SampledDevice& d : sampler_ref.devices()) {
    devices.push_back(DeviceInfo{static_cast<uint32_t>(devices.size()), strings.Intern(d.name),
                                 d.timer_hz, d.kernel_timestamp_bits, d.queue_group_flags});
    DeviceUuid& uuid = uuids.emplace_back();
    std::memcpy(&uuid.lo, d.uuid, 8);
    std::memcpy(&uuid.hi, d.uuid + 8, 8);
  }
  ze.OnDevices(devices, std::move(uuids));
  clocks->Read(MonotonicNs());
  return clocks;
}

void DeviceClocks::Read(uint64_t now_ns) {
  for (const DeviceClockReading& r : sampler_->Read())
    ze_.OnClockReading(r.device, r.ticks, r.monotonic_raw_ns, r.monotonic_ns, r.realtime_ns);
  ze_.AfterClockReadings(MonotonicNs());
  last_reading_ns_ = now_ns;
}

}  // namespace xtrace
