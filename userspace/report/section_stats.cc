// Merging of section statistics across logs (section_stats.h).
#include "report/section_stats.h"

namespace xtrace::report {

void HostCallRow::Merge(const HostCallRow& o) {
  time.Merge(o.time);
  failed += o.failed;
  for (const auto& [name, n] : o.failures) failures[name] += n;
}

void DeviceOpRow::Merge(const DeviceOpRow& o) {
  kind = o.kind;
  measured.Merge(o.measured);
  estimated.Merge(o.estimated);
  measured_bytes += o.measured_bytes;
  estimated_bytes += o.estimated_bytes;
  append_to_submit.Merge(o.append_to_submit);
  submit_to_start.Merge(o.submit_to_start);
}

void RangeRow::Merge(const RangeRow& o) {
  label = o.label;
  total.Merge(o.total);
  self_ns += o.self_ns;
  device_ns += o.device_ns;
}

void SectionStats::Merge(const SectionStats& o) {
  for (const auto& [name, row] : o.host_calls) host_calls[name].Merge(row);
  thread_time_ns += o.thread_time_ns;
  for (const auto& [name, row] : o.device_ops) device_ops[name].Merge(row);
  for (const auto& [key, row] : o.ranges) ranges[key].Merge(row);
  for (const auto& [key, engine] : o.engines) {
    EngineRow& row = engines.try_emplace(key, engine.idle.top_gaps()).first->second;
    row.identity.Merge(engine.identity);
    row.idle.Merge(engine.idle);
  }
}

}  // namespace xtrace::report
