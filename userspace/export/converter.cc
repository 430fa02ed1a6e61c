// Converter: maps each model event to Chrome trace events; see converter.h.
#include "export/converter.h"

#include <unistd.h>

#include <array>
#include <charconv>
#include <deque>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "export/chrome_json_writer.h"
#include "export/device_lanes.h"
#include "export/driver_track_writer.h"
#include "export/itt_converter.h"
#include "export/perfetto_writer.h"
#include "export/trace_description.h"
#include "export/ze_export.h"
#include "log/log_reader.h"
#include "model/ze_api.h"

namespace xtrace {
namespace {

// Progress is reported this often (in events): cheap, and often enough for a smooth display.
constexpr uint64_t kProgressEveryEvents = 1 << 16;

static_assert(kDevicePidBase >= kFirstSyntheticPid, "devices are drawn as track trees of their own");

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

  // A process is labelled with what it is now: each exec renames it (viewers keep the last
  // name they read). Who it was stays on its track as an instant at the exec, "exec: env ->
  // python3", rather than in the label: the label is what people search and sort by, and an
  // instant keeps the time and the order of any number of execs.
  void operator()(const ProcessInfo& e) {
    // Viewers show the pid next to the name already; the namespace pid is the one people
    // see inside a container, so it is worth saying when it differs.
    std::string_view comm = strings_.Get(e.comm);
    if (comm.empty()) comm = strings_.Get(e.command_line);
    if (comm.empty()) return;
    std::string name(comm);
    if (e.ns_pid != 0 && e.ns_pid != e.pid) {
      name += " (pid " + std::to_string(e.ns_pid) + " in its namespace)";
    }
    args_.clear();
    const std::pair<const char*, StringId> labels[] = {
        {"command_line", e.command_line}, {"cgroup", e.cgroup}, {"container_id", e.container_id}};
    for (const auto& [key, id] : labels)
      if (!strings_.Get(id).empty()) args_.push_back(TraceArg::String(key, strings_.Get(id)));
    out_.ProcessName(e.pid, name, args_);
    std::string& was = process_comms_[e.pid];
    if (e.exec_ns && !was.empty() && was != comm) {
      args_.insert(args_.begin(), TraceArg::String("was", was));
      out_.Instant("exec: " + was + " -> " + std::string(comm), "xtrace", e.pid, 0, e.exec_ns,
                   TraceWriter::InstantScope::kProcess, args_);
    }
    was = comm;
  }

  void operator()(const ThreadInfo& e) {
    const std::string_view name = strings_.Get(e.name);
    if (!name.empty()) out_.ThreadName(e.pid, e.tid, name);
  }

  void operator()(const KernelCreate& e) { ze_.Write(e); }
  void operator()(const KernelLaunch& e) { ze_.Write(e); }

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

 private:
  const StringTable& strings_;
  TraceWriter& out_;
  std::vector<TraceArg> args_;       // reused: no allocation per event
  std::unordered_map<uint32_t, std::string> process_comms_;  // pid -> its name so far
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
  // A second reading of the log, for what the trace's opening says; not possible on a pipe.
  if (reader.file_size()) out.Describe(DescribeLog(reader.path(), options.salvage));
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
