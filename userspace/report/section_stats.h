// What the report aggregates for one section (the whole capture, or one process, thread,
// device, rank or host with --by): per API function, per device operation name, per ITT
// range and per engine. Rows are keyed by name, so memory grows with the number of distinct
// names and engines, never with the number of events.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "model/ze_events.h"
#include "report/duration_stats.h"
#include "report/engine_idle.h"
#include "report/engine_name.h"

namespace xtrace::report {

// Table 1: one API function.
struct HostCallRow {
  DurationStats time;
  uint64_t failed = 0;
  std::map<std::string, uint64_t> failures;  // result name -> calls
  void Merge(const HostCallRow& o);
};

// Tables 2 and 3: one kernel name, or one memory operation (the append function's name).
struct DeviceOpRow {
  DeviceOpKind kind = DeviceOpKind::kKernel;
  DurationStats measured;   // from kernel timestamps
  DurationStats estimated;  // host-side bounds: never mixed with measured time
  uint64_t measured_bytes = 0;
  uint64_t estimated_bytes = 0;
  // Submission latency of measured operations: append start -> submit start -> device start
  // -> device end (estimated operations have no true start).
  DurationStats append_to_submit;
  DurationStats submit_to_start;
  void Merge(const DeviceOpRow& o);
};

// Table 4: one ITT task, region, frame or PyTorch range name in its domain.
struct RangeRow {
  std::string label;  // "domain/name", what gap activity shows
  DurationStats total;
  uint64_t self_ns = 0;    // total minus the time of ranges nested in it on its thread
  uint64_t device_ns = 0;  // measured device time of operations appended inside it
  void Merge(const RangeRow& o);
};

// Table 5: one engine, (pid, device, queue handle).
using EngineKey = std::tuple<uint32_t, uint32_t, uint64_t>;

struct EngineRow {
  explicit EngineRow(size_t top_gaps) : idle(top_gaps) {}
  EngineIdentity identity;  // what it is, for its name
  EngineIdle idle;
};

struct SectionStats {
  std::map<std::string, HostCallRow, std::less<>> host_calls;
  uint64_t thread_time_ns = 0;  // sum over traced threads of first call start..last call end
  std::map<std::string, DeviceOpRow, std::less<>> device_ops;
  std::map<std::pair<std::string, std::string>, RangeRow> ranges;  // (domain, name)
  std::map<EngineKey, EngineRow> engines;

  void Merge(const SectionStats& o);
};

}  // namespace xtrace::report
