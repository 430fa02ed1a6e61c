// A log's devices and ranks, read ahead of its conversion (trace_description.h).
#include "export/trace_description.h"

#include "log/log_reader.h"

namespace xtrace {

void TraceDescriptionBuilder::Add(const Event& event, const StringTable& strings) {
  if (const auto* d = std::get_if<DeviceInfo>(&event)) {
    if (d->device == kUnknownDevice) return;
    devices_[d->device] = {d->device, std::string(strings.Get(d->name)), d->timer_hz,
                           d->kernel_timestamp_bits};
  } else if (const auto* p = std::get_if<ProcessInfo>(&event)) {
    if (p->rank >= 0) ranks_.insert(p->rank);
    if (p->world_size > 0) world_sizes_.insert(p->world_size);
  }
}

TraceDescription TraceDescriptionBuilder::Build() const {
  TraceDescription d;
  for (const auto& [id, device] : devices_) d.devices.push_back(device);
  d.ranks.assign(ranks_.begin(), ranks_.end());
  if (world_sizes_.size() == 1) d.world_size = *world_sizes_.begin();
  return d;
}

TraceDescription DescribeLog(const std::string& path, bool salvage) {
  TraceDescriptionBuilder builder;
  // Devices and ranks are identities, never spans: a window that no span reaches into (it
  // ends before it begins) has the reader leave every batch's spans undecoded, which is most
  // of a log.
  Result<LogReader> reader = LogReader::Open(
      path, LogReaderOptions{.salvage = salvage,
                             .window = LogReaderOptions::Window{.from_ns = UINT64_MAX, .to_ns = 0}});
  if (!reader.ok()) return builder.Build();
  while (true) {
    Result<const Event*> next = reader->NextEvent();
    if (!next.ok() || !*next) break;
    builder.Add(**next, reader->strings());
  }
  return builder.Build();
}

}  // namespace xtrace
