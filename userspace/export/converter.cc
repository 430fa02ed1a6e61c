// Converter: maps each model event to Chrome trace events; see converter.h.
#include "export/converter.h"

#include <unistd.h>

#include <array>
#include <charconv>
#include <deque>
#include <string_view>
#include <variant>
#include <vector>

#include "export/chrome_json_writer.h"
#include "export/device_lanes.h"
#include "export/driver_track_writer.h"
#include "export/itt_converter.h"
#include "export/perfetto_writer.h"
#include "export/ze_export.h"
#include "log/log_reader.h"
#include "model/ze_api.h"

namespace xtrace {
namespace {

// Progress is reported this often (in events): cheap, and often enough for a smooth display.
constexpr uint64_t kProgressEveryEvents = 1 << 16;

constexpr std::string_view kZeCategory = "ze";
static_assert(kDevicePidBase >= kFirstSyntheticPid, "devices are drawn as track trees of their own");

std::string Hex(uint64_t v) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), v, 16);
  return "0x" + std::string(digits, end);
}

uint64_t Duration(uint64_t start_ns, uint64_t end_ns) {
  return end_ns >= start_ns ? end_ns - start_ns : 0;
}

// Writes the trace events for one log event.
class EventConverter {
 public:
  EventConverter(const StringTable& strings, TraceWriter& out)
      : strings_(strings),
        out_(out),
        itt_(strings, out),
        driver_(strings, out),
        ze_(strings, out) {}

  void operator()(const IttTask& e) { itt_.Write(e); }
  void operator()(const IttMarker& e) { itt_.Write(e); }
  void operator()(const CollectionChange& e) { itt_.Write(e); }

  void operator()(const ProcessInfo& e) {
    // Viewers show the pid next to the name already; the namespace pid is the one people
    // see inside a container, so it is worth saying when it differs.
    std::string name(strings_.Get(e.comm));
    if (name.empty()) name = strings_.Get(e.command_line);
    if (name.empty()) return;
    if (e.ns_pid != 0 && e.ns_pid != e.pid) {
      name += " (pid " + std::to_string(e.ns_pid) + " in its namespace)";
    }
    args_.clear();
    const std::pair<const char*, StringId> labels[] = {
        {"command_line", e.command_line}, {"cgroup", e.cgroup}, {"container_id", e.container_id}};
    for (const auto& [key, id] : labels)
      if (!strings_.Get(id).empty()) args_.push_back(TraceArg::String(key, strings_.Get(id)));
    out_.ProcessName(e.pid, name, args_);
  }

  void operator()(const ThreadInfo& e) {
    const std::string_view name = strings_.Get(e.name);
    if (!name.empty()) out_.ThreadName(e.pid, e.tid, name);
  }

  void operator()(const KernelCreate& e) {
    args_.clear();
    args_.push_back(TraceArg::String("kernel_name", strings_.Get(e.name)));
    args_.push_back(TraceArg::Hex("module", e.module));
    args_.push_back(TraceArg::Hex("kernel", e.kernel));
    AddResult(e.result);
    if (e.name_truncated) args_.push_back(TraceArg::Bool("name_truncated", true));
    out_.Complete("zeKernelCreate", kZeCategory, e.pid, e.tid, e.start_ns,
                  Duration(e.start_ns, e.end_ns), args_);
  }

  void operator()(const KernelLaunch& e) {
    args_.clear();
    if (e.group_count_unreadable) {
      args_.push_back(TraceArg::String("group_count", "unreadable"));
    } else {
      args_.push_back(TraceArg::Uint("group_count_x", e.group_count[0]));
      args_.push_back(TraceArg::Uint("group_count_y", e.group_count[1]));
      args_.push_back(TraceArg::Uint("group_count_z", e.group_count[2]));
    }
    args_.push_back(TraceArg::Hex("kernel", e.kernel));
    args_.push_back(TraceArg::Hex("command_list", e.command_list));
    if (e.signal_event != 0) args_.push_back(TraceArg::Hex("signal_event", e.signal_event));
    args_.push_back(TraceArg::Uint("num_wait_events", e.num_wait_events));
    AddResult(e.result);
    if (!e.name_known) args_.push_back(TraceArg::Bool("name_known", false));
    if (e.launch_kind == 1) args_.push_back(TraceArg::String("launch", "cooperative"));
    if (e.launch_kind == 2) args_.push_back(TraceArg::String("launch", "indirect"));
    const uint64_t dur = Duration(e.start_ns, e.end_ns);
    if (strings_.Get(e.kernel_name).empty()) {
      out_.Complete("kernel@" + Hex(e.kernel), kZeCategory, e.pid, e.tid, e.start_ns, dur, args_);
    } else {
      out_.Complete(RecurringName{e.kernel_name, strings_.Get(e.kernel_name)}, kZeCategory, e.pid,
                    e.tid, e.start_ns, dur, args_);
    }
  }

  void operator()(const DrmFile& e) { driver_.Write(e); }
  void operator()(const DrmIoctl& e) { driver_.Write(e); }
  void operator()(const DrmFenceSignal& e) { driver_.Write(e); }
  void operator()(const ApiCall& e) { ze_.Write(e); }
  void operator()(const DeviceInfo& e) { ze_.Write(e); }
  void operator()(const DeviceQueue& e) { ze_.Write(e); }
  void operator()(const DeviceOp& e) { ze_.Write(e); }
  void operator()(const MemoryUsage& e) { ze_.Write(e); }
  void operator()(const ClockSample& e) { ze_.Write(e); }
  void operator()(const ClockFit& e) { ze_.Write(e); }

  // Where the capture lost records: an instant on the trace-wide track at the start of the
  // window they were lost in, with how many of each source.
  void operator()(const RecordsDropped& e) {
    args_.clear();
    args_.push_back(TraceArg::Uint("dropped", e.total()));
    const std::pair<std::string_view, uint64_t> sources[] = {
        {"level_zero", e.level_zero}, {"itt", e.itt}, {"drm", e.drm}, {"other", e.other}};
    for (const auto& [key, n] : sources)
      if (n) args_.push_back(TraceArg::Uint(key, n));
    args_.push_back(TraceArg::Uint("window_ns", Duration(e.start_ns, e.end_ns)));
    args_.push_back(TraceArg::String("remedy", "raise --buffer-size"));
    out_.Instant("records dropped", "xtrace", 0, 0, e.start_ns, TraceWriter::InstantScope::kGlobal,
                 args_);
  }

 private:
  // A non-success ze_result_t, as a number and by name.
  void AddResult(int32_t result) {
    if (result == 0) return;
    args_.push_back(TraceArg::Int("result", result));
    const std::string_view name = ZeResultName(result);
    if (!name.empty()) args_.push_back(TraceArg::String("result_name", name));
  }

  const StringTable& strings_;
  TraceWriter& out_;
  std::vector<TraceArg> args_;       // reused: no allocation per event
  IttEventWriter itt_;
  DriverTrackWriter driver_;
  ZeTraceExporter ze_;
};

// "otherData": what the log says about the capture. Values are strings, as the format's
// consumers expect (and 64-bit clock values would not survive a double).
Status FinishWithOtherData(TraceWriter& out, const LogReader& reader) {
  const LogHeader& h = reader.header();
  std::deque<std::string> owned;  // backing store for numbers as strings (stable addresses)
  auto number = [&](uint64_t v) -> std::string_view {
    return owned.emplace_back(std::to_string(v));
  };
  std::vector<TraceArg> data = {
      TraceArg::String("producer", "xtrace"),
      TraceArg::String("xtrace_version", h.xtrace_version),
      TraceArg::String("log_format_version", number(h.format_version)),
      TraceArg::String("host", h.host),
      TraceArg::String("kernel_release", h.kernel_release),
      TraceArg::String("boot_id", h.boot_id),
      TraceArg::String("command_line", h.command_line),
      TraceArg::String("clock", "CLOCK_MONOTONIC"),
      TraceArg::String("start_monotonic_ns", number(h.start_clock.monotonic_ns)),
      TraceArg::String("start_monotonic_raw_ns", number(h.start_clock.monotonic_raw_ns)),
      TraceArg::String("start_realtime_ns", number(h.start_clock.realtime_ns)),
      TraceArg::String("capture_complete", reader.complete() ? "true" : "false"),
  };
  if (const auto& s = reader.summary()) {
    data.push_back(TraceArg::String("end_monotonic_ns", number(s->end_clock.monotonic_ns)));
    data.push_back(TraceArg::String("end_realtime_ns", number(s->end_clock.realtime_ns)));
    data.push_back(TraceArg::String("events", number(s->events)));
    data.push_back(TraceArg::String("dropped_records", number(s->dropped)));
    data.push_back(TraceArg::String("processes", number(s->processes)));
  }
  if (!reader.damage().ok()) data.push_back(TraceArg::String("damage", reader.damage().message()));
  return out.Finish(data);
}

Status Convert(LogReader& reader, TraceWriter& out, const ConvertOptions& options,
               ConvertStats* stats) {
  out.Clocks(reader.header().start_clock);
  DeviceLaneWriter drawable(out);
  EventConverter converter(reader.strings(), drawable);
  Event event;
  while (true) {
    Result<bool> next = reader.Next(&event);
    if (!next.ok()) {
      stats->damage = next.status().message();
      return next.status();
    }
    if (!*next) break;
    std::visit(converter, event);
    if (options.progress && reader.events_read() % kProgressEveryEvents == 0) {
      options.progress(reader.bytes_read(), reader.file_size());
    }
  }
  if (Status st = FinishWithOtherData(out, reader); !st.ok()) return st;
  if (options.progress) options.progress(reader.bytes_read(), reader.file_size());
  return Status::Ok();
}

Result<std::unique_ptr<TraceWriter>> CreateWriter(TraceFormat format, const std::string& path) {
  Result<OutputFile> out = OutputFile::Create(path);
  if (!out.ok()) return out.status();
  std::unique_ptr<TraceWriter> writer;
  if (format == TraceFormat::kPerfetto) {
    writer = std::make_unique<PerfettoWriter>(std::move(*out));
  } else {
    writer = std::make_unique<ChromeJsonWriter>(std::move(*out));
  }
  return writer;
}

}  // namespace

TraceFormat FormatForPath(const std::string& path) {
  for (std::string_view suffix : {".pftrace", ".perfetto-trace", ".pb"}) {
    if (path.ends_with(suffix)) return TraceFormat::kPerfetto;
  }
  return TraceFormat::kChromeJson;
}

Status ConvertLog(const std::string& in_path, const std::string& out_path,
                  const ConvertOptions& options, ConvertStats* stats) {
  ConvertStats local;
  if (!stats) stats = &local;
  *stats = ConvertStats();

  Result<LogReader> reader = LogReader::Open(in_path, LogReaderOptions{.salvage = options.salvage});
  if (!reader.ok()) return reader.status();
  auto out = CreateWriter(options.format, out_path);
  if (!out.ok()) return out.status();

  Status st = Convert(*reader, **out, options, stats);
  stats->events_in = reader->events_read();
  stats->batches_in = reader->batches_read();
  stats->events_out = (*out)->events_written();
  stats->bytes_written = (*out)->bytes_written();
  stats->complete = reader->complete();
  if (!reader->damage().ok()) {
    stats->salvaged = true;
    stats->damage = reader->damage().message();
  }
  // A half-written JSON file would only mislead; but never delete what is not a regular
  // file (-o /dev/null, a FIFO, a device).
  if (!st.ok() && (*out)->writes_regular_file()) {
    out->reset();
    ::unlink(out_path.c_str());
  }
  return st;
}

}  // namespace xtrace
