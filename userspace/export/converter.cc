// Converter: maps each model event to Chrome trace events; see converter.h.
#include "export/converter.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "export/chrome_json_writer.h"
#include "export/device_lanes.h"
#include "export/driver_track_writer.h"
#include "export/hold_slices.h"
#include "export/itt_converter.h"
#include "export/merged_log_reader.h"
#include "export/perfetto_writer.h"
#include "export/python_slices.h"
#include "export/selected_timeline.h"
#include "export/trace_description.h"
#include "export/ze_export.h"
#include "log/log_reader.h"
#include "model/drop_remedy.h"
#include "model/ze_api.h"

namespace xtrace {
namespace {

// Progress is reported this often (in events): cheap, and often enough for a smooth display.
constexpr uint64_t kProgressEveryEvents = 1 << 16;

// Writes the trace events for one log event.
class EventConverter {
 public:
  EventConverter(const StringTable& strings, TraceWriter& out)
      : strings_(strings),
        out_(out),
        itt_(strings, out),
        driver_(strings, out),
        ze_(strings, out),
        holds_(strings, out),
        python_(strings, out) {
    ze_.set_python(&python_);
  }

  // The trace ends: slices still open are written.
  void Finish() {
    python_.Finish();
    holds_.Finish(ze_);
  }

  void StartCorrelationIdsAt(uint64_t first) { ze_.StartCorrelationIdsAt(first); }
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
    std::string rank;
    if (e.rank >= 0) {
      rank = std::to_string(e.rank);
      name += " (rank " + rank + ")";
      args_.push_back(TraceArg::String("rank", rank));
    }
    out_.ProcessName(e.pid, name, args_);
    // Ranks listed in rank order (the GPUs' own tracks sort after every rank).
    if (e.rank >= 0) out_.ProcessSortIndex(e.pid, e.rank);
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

  // What a hold learned is named on the hold's slice (hold_slices.h).
  void operator()(const KernelCreate& e) {
    if (e.learned) holds_.Learned(e);
    else ze_.Write(e);
  }
  void operator()(const KernelLaunch& e) { ze_.Write(e); }

  void operator()(const DrmFile& e) { driver_.Write(e); }
  void operator()(const DrmIoctl& e) { driver_.Write(e); }
  void operator()(const DrmFenceSignal& e) { driver_.Write(e); }
  void operator()(const ApiCall& e) {
    if (e.learned) holds_.Learned(e);
    else ze_.Write(e);
  }
  void operator()(const XtraceHold& e) { holds_.Write(e); }
  void operator()(const UnfinishedCall& e) { ze_.Write(e); }
  void operator()(const DeviceInfo& e) { ze_.Write(e); }
  void operator()(const DeviceQueue& e) { ze_.Write(e); }
  void operator()(const DeviceOp& e) { ze_.Write(e); }
  void operator()(const MemoryUsage& e) { ze_.Write(e); }
  void operator()(const ClockSample& e) { ze_.Write(e); }
  void operator()(const ClockFit& e) { ze_.Write(e); }
  void operator()(const PythonStack& e) { python_.Write(e); }

  // Where the capture lost records: an instant on the trace-wide track at the start of the
  // window they were lost in, with how many of each source, how many of them the programs'
  // own ITT rings lost, and the remedy that fits the ring that lost them.
  void operator()(const RecordsDropped& e) {
    args_.clear();
    args_.push_back(TraceArg::Uint("dropped", e.total()));
    const std::pair<std::string_view, uint64_t> sources[] = {
        {"level_zero", e.level_zero}, {"itt", e.itt}, {"itt_rings", e.itt_rings},
        {"drm", e.drm}, {"other", e.other}};
    for (const auto& [key, n] : sources)
      if (n) args_.push_back(TraceArg::Uint(key, n));
    args_.push_back(TraceArg::Uint("window_ns", e.end_ns > e.start_ns ? e.end_ns - e.start_ns : 0));
    remedy_ = DropRemedyText(e.total(), e.itt_rings);
    args_.push_back(TraceArg::String("remedy", remedy_));
    out_.Instant("records dropped", "xtrace", 0, 0, e.start_ns, TraceWriter::InstantScope::kGlobal,
                 args_);
  }

 private:
  const StringTable& strings_;
  TraceWriter& out_;
  std::vector<TraceArg> args_;       // reused: no allocation per event
  std::string remedy_;               // of the last RecordsDropped: its args_ point into it
  std::unordered_map<uint32_t, std::string> process_comms_;  // pid -> its name so far
  IttEventWriter itt_;
  DriverTrackWriter driver_;
  ZeTraceExporter ze_;
  HoldSliceWriter holds_;
  PythonSliceWriter python_;
};

// "otherData": what the log says about the capture. Values are strings, as the format's
// consumers expect (and 64-bit clock values would not survive a double). `owned` backs the
// numbers and texts made here.
void AddLogFacts(const LogReader& reader, std::deque<std::string>& owned,
                 std::vector<TraceArg>& data) {
  const LogHeader& h = reader.header();
  auto number = [&](uint64_t v) -> std::string_view {
    return owned.emplace_back(std::to_string(v));
  };
  data.insert(data.end(), {
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
  });
  if (const auto& s = reader.summary()) {
    data.push_back(TraceArg::String("end_monotonic_ns", number(s->end_clock.monotonic_ns)));
    data.push_back(TraceArg::String("end_realtime_ns", number(s->end_clock.realtime_ns)));
    data.push_back(TraceArg::String("events", number(s->events)));
    data.push_back(TraceArg::String("dropped_records", number(s->dropped)));
    data.push_back(TraceArg::String("processes", number(s->processes)));
  }
  if (!reader.damage().ok()) data.push_back(TraceArg::String("damage", reader.damage().message()));
}

// A merged trace's "otherData". The first log's facts alone would pass for the whole job's
// (its command line, its events, its completeness), so the trace gets what every log shares
// or their totals, and each log's own facts under "log N". Times are on the first log's
// clock (its start_* anchor), onto which the others are moved ("clock_alignment").
void AddMergedFacts(MergedLogReader& logs, std::deque<std::string>& owned, std::vector<TraceArg>& data) {
  auto text = [&](std::string s) -> std::string_view { return owned.emplace_back(std::move(s)); };
  // Each distinct value once, in the order of the logs.
  auto distinct = [&](auto value_of) {
    std::vector<std::string> seen;
    for (size_t i = 0; i < logs.size(); ++i) {
      std::string v = value_of(logs.reader(i));
      if (std::find(seen.begin(), seen.end(), v) == seen.end()) seen.push_back(std::move(v));
    }
    std::string all;
    for (const std::string& v : seen) all += (all.empty() ? "" : ", ") + v;
    return text(std::move(all));
  };
  const ClockAnchor& start = logs.reader(0).header().start_clock;
  data.insert(data.end(), {
      TraceArg::String("producer", "xtrace"),
      TraceArg::String("xtrace_version", distinct([](const LogReader& r) { return r.header().xtrace_version; })),
      TraceArg::String("log_format_version",
                       distinct([](const LogReader& r) { return std::to_string(r.header().format_version); })),
      TraceArg::String("host", distinct([](const LogReader& r) { return r.header().host; })),
      TraceArg::String("kernel_release", distinct([](const LogReader& r) { return r.header().kernel_release; })),
      TraceArg::String("clock", "CLOCK_MONOTONIC"),
      TraceArg::String("start_monotonic_ns", text(std::to_string(start.monotonic_ns))),
      TraceArg::String("start_monotonic_raw_ns", text(std::to_string(start.monotonic_raw_ns))),
      TraceArg::String("start_realtime_ns", text(std::to_string(start.realtime_ns))),
  });
  bool complete = true, summaries = true;
  uint64_t events = 0, dropped = 0, processes = 0, end_realtime_ns = 0;
  for (size_t i = 0; i < logs.size(); ++i) {
    const LogReader& r = logs.reader(i);
    complete = complete && r.complete();
    std::string about = r.path() + " (host " + r.header().host + ", boot " + r.header().boot_id;
    if (!r.header().command_line.empty()) about += ", command " + r.header().command_line;
    if (const auto& summary = r.summary()) {
      events += summary->events;
      dropped += summary->dropped;
      processes += summary->processes;
      end_realtime_ns = std::max(end_realtime_ns, summary->end_clock.realtime_ns);
      about += ", " + std::to_string(summary->events) + " events, " + std::to_string(summary->dropped) + " dropped";
    } else {
      summaries = false;
      about += ", cut short";
    }
    if (!r.damage().ok()) about += ", damaged: " + r.damage().message();
    data.push_back(TraceArg::String(text("log " + std::to_string(i + 1)), text(about + ")")));
  }
  data.push_back(TraceArg::String("capture_complete", complete ? "true" : "false"));
  // Totals only when every log has them: a sum missing a log's share would pass for the job's.
  if (summaries) {
    data.push_back(TraceArg::String("end_realtime_ns", text(std::to_string(end_realtime_ns))));
    data.push_back(TraceArg::String("events", text(std::to_string(events))));
    data.push_back(TraceArg::String("dropped_records", text(std::to_string(dropped))));
    data.push_back(TraceArg::String("processes", text(std::to_string(processes))));
  }
}

// The pid of the process an event is of; 0 for an event of no process (the device-wide
// memory counters, xtrace's own clock readings, records dropped).
uint32_t EventPid(const Event& event) {
  return std::visit(
      [](const auto& e) -> uint32_t {
        if constexpr (requires { e.pid; }) return e.pid;
        else return 0;
      },
      event);
}

// Whether an event of a process passes --pid and --rank. Events of no process (pid 0: the
// device-wide memory counters, xtrace's own clock readings) always pass; a process's rank is
// known from its ProcessInfo, which comes before its events.
class ProcessFilter {
 public:
  explicit ProcessFilter(const EventSelection& selection) : sel_(selection) {}

  bool Selected(const Event& event) {
    if (sel_.pids.empty() && sel_.ranks.empty()) return true;
    if (const auto* p = std::get_if<ProcessInfo>(&event)) ranks_[p->pid] = p->rank;
    const uint32_t pid = EventPid(event);
    if (pid == 0) return true;
    if (!sel_.pids.empty() && !sel_.pids.count(pid)) return false;
    if (!sel_.ranks.empty()) {
      auto rank = ranks_.find(pid);
      if (rank == ranks_.end() || !sel_.ranks.count(rank->second)) return false;
    }
    return true;
  }

 private:
  const EventSelection& sel_;
  std::unordered_map<uint32_t, int32_t> ranks_;
};

// One input log: its reader's strings, its exporters, its place on the timeline.
struct InputLog {
  InputLog(const StringTable& strings, TraceWriter& out, const EventSelection& selection)
      : lanes(out), converter(strings, lanes), filter(selection) {}
  DeviceLaneWriter lanes;
  EventConverter converter;
  ProcessFilter filter;
};

// How each log lands on the trace's clock: logs of one boot share CLOCK_MONOTONIC; another
// boot moves by the difference of the two boots' CLOCK_REALTIME - CLOCK_MONOTONIC at their
// first logs' starts.
struct Placement {
  std::vector<TimelineInput> inputs;  // per log
  // Per host after the first, the log that placed it (the host's first): its note in the
  // trace's "clock_alignment" is written once the log has been read, when its summary (and
  // with it the realtime clock's drift during the log) is known.
  std::vector<size_t> aligned_by;
  uint32_t hosts = 0;
};

int64_t RealtimeOffset(const ClockAnchor& a) {
  return static_cast<int64_t>(a.realtime_ns - a.monotonic_ns);
}

// Each log opened (its header read), for a MergedLogReader.
Result<std::vector<MergedLogReader::Source>> OpenLogs(const std::vector<std::string>& paths,
                                                    bool salvage) {
  std::vector<MergedLogReader::Source> sources;
  for (const std::string& path : paths) {
    Result<LogReader> reader = LogReader::Open(path, LogReaderOptions{.salvage = salvage});
    if (!reader.ok()) return reader.status();
    sources.push_back({std::move(*reader), 0});
  }
  return sources;
}

// Places the logs (Placement) and moves each onto the trace's clock by its offset.
Result<Placement> PlaceLogs(MergedLogReader& logs) {
  Placement placement;
  std::map<std::string, size_t> host_of_boot;  // boot key -> host index
  // A capture is known by its boot and xtrace's command line (the daemon's rotated files
  // share both; two `xtrace record -o rankN.capnp` differ in it).
  std::map<std::pair<std::string, std::string>, uint32_t> capture_index;
  std::map<std::string, uint32_t> captures_of_boot;
  std::vector<ClockAnchor> host_anchor;
  std::vector<std::string> host_names;
  for (size_t i = 0; i < logs.size(); ++i) {
    const LogHeader& h = logs.reader(i).header();
    const std::string boot = h.boot_id.empty() ? "host " + h.host : h.boot_id;
    auto [it, added] = host_of_boot.try_emplace(boot, host_anchor.size());
    if (added) {
      if (host_anchor.size() >= kMaxHosts) {
        return Status::Error(logs.reader(i).path() + ": more than " +
                             std::to_string(kMaxHosts) +
                             " machines (boots) in one trace");
      }
      host_anchor.push_back(h.start_clock);
      host_names.push_back(h.host.empty() ? "host " + std::to_string(host_anchor.size()) : h.host);
    }
    TimelineInput input;
    input.host_index = static_cast<uint32_t>(it->second);
    auto [capture, new_capture] = capture_index.try_emplace({boot, h.command_line}, 0);
    if (new_capture) capture->second = captures_of_boot[boot]++;
    if (capture->second >= kMaxCapturesPerHost) {
      return Status::Error(logs.reader(i).path() + ": more than " +
                           std::to_string(kMaxCapturesPerHost) +
                           " captures of one machine in one trace");
    }
    input.capture_index = capture->second;
    input.offset_ns = RealtimeOffset(host_anchor[it->second]) - RealtimeOffset(host_anchor[0]);
    input.host = host_names[it->second];
    placement.inputs.push_back(input);
    if (added && it->second > 0) placement.aligned_by.push_back(i);
  }
  placement.hosts = static_cast<uint32_t>(host_anchor.size());
  for (TimelineInput& input : placement.inputs) input.label_host = placement.hosts > 1;
  for (size_t i = 0; i < logs.size(); ++i) logs.SetOffset(i, placement.inputs[i].offset_ns);
  return placement;
}

// What the placement of log `i` (a further host's first) rests on. The log measures how far
// CLOCK_REALTIME moved against CLOCK_MONOTONIC during the capture (NTP slewing), once read to
// its summary; how far apart the machines' realtime clocks were is not in it.
std::string AlignmentNote(const LogReader& log, const TimelineInput& input) {
  const LogHeader& h = log.header();
  std::string note = input.host + " (boot " + h.boot_id + "): moved by " + std::to_string(input.offset_ns) +
                     " ns onto the first log's clock through CLOCK_REALTIME; uncertain by the machines' clock "
                     "synchronization (NTP/PTP), which the logs do not measure";
  if (const auto& summary = log.summary()) {
    const int64_t drift = RealtimeOffset(summary->end_clock) - RealtimeOffset(h.start_clock);
    note += ", plus " + std::to_string(drift < 0 ? -drift : drift) +
            " ns by which its realtime clock moved against its monotonic clock during the log";
  }
  return note;
}

Status FinishMerged(SelectedTimeline& timeline, MergedLogReader& logs, const Placement& placement,
                    const EventSelection& selection, const MonotonicWindow& window) {
  std::deque<std::string> owned;
  std::vector<TraceArg> data;
  auto text = [&](std::string s) -> std::string_view { return owned.emplace_back(std::move(s)); };
  if (logs.size() == 1) {
    AddLogFacts(logs.reader(0), owned, data);
  } else {
    AddMergedFacts(logs, owned, data);
    data.push_back(TraceArg::String("logs", text(std::to_string(logs.size()))));
    data.push_back(TraceArg::String("hosts", text(std::to_string(placement.hosts))));
    data.push_back(TraceArg::String(
        "clock_alignment",
        text(placement.aligned_by.empty()
                 ? "every log is of one boot: they share CLOCK_MONOTONIC exactly"
                 : [&] {
                     std::string all;
                     for (size_t i : placement.aligned_by)
                       all += (all.empty() ? "" : "; ") + AlignmentNote(logs.reader(i), placement.inputs[i]);
                     return all;
                   }())));
  }
  if (selection.has_window()) {
    data.push_back(TraceArg::String("window_from_monotonic_ns", text(std::to_string(window.from_ns))));
    if (window.to_ns != UINT64_MAX)
      data.push_back(TraceArg::String("window_to_monotonic_ns", text(std::to_string(window.to_ns))));
  }
  if (!selection.pids.empty() || !selection.ranks.empty() || selection.name) {
    std::string what;
    for (uint32_t pid : selection.pids) what += (what.empty() ? "pid " : ",") + std::to_string(pid);
    if (!selection.ranks.empty()) what += what.empty() ? "" : "; ";
    bool first = true;
    for (int32_t rank : selection.ranks) {
      what += (first ? "rank " : ",") + std::to_string(rank);
      first = false;
    }
    if (selection.name) what += (what.empty() ? "name ~ " : "; name ~ ") + selection.name_pattern;
    data.push_back(TraceArg::String("selection", text(what)));
  }
  return timeline.Finish(data);
}

// The trace's start on the first log's clock: the earliest start of any log, from which
// seconds "from the start" count.
ClockAnchor TraceStart(MergedLogReader& logs, const Placement& placement) {
  ClockAnchor start = logs.reader(0).header().start_clock;
  for (size_t i = 0; i < logs.size(); ++i) {
    const uint64_t at = logs.reader(i).header().start_clock.monotonic_ns +
                        static_cast<uint64_t>(placement.inputs[i].offset_ns);
    if (at < start.monotonic_ns) {
      start.realtime_ns -= start.monotonic_ns - at;
      start.monotonic_ns = at;
    }
  }
  return start;
}

Status ConvertMerged(MergedLogReader& logs, TraceWriter& out, const ConvertOptions& options,
                     ConvertStats* stats) {
  Result<Placement> placement = PlaceLogs(logs);
  if (!placement.ok()) return placement.status();
  const ClockAnchor start = TraceStart(logs, *placement);
  const MonotonicWindow window = ResolveWindow(options.selection, start);
  // Only a selection is told what it kept and what the logs held (ConvertStats): without one,
  // each event goes to its converter with nothing counted beside it.
  const bool selecting = !options.selection.empty();
  // The readers leave out what lies outside the window, each on its own clock.
  for (size_t i = 0; i < logs.size(); ++i) {
    if (!options.selection.has_window()) break;
    const uint64_t shift = static_cast<uint64_t>(placement->inputs[i].offset_ns);
    logs.reader(i).SetWindow(LogReaderOptions::Window{
        .from_ns = window.from_ns - shift,
        .to_ns = window.to_ns == UINT64_MAX ? UINT64_MAX : window.to_ns - shift});
  }
  SelectedTimeline timeline(out, TimelineSelection{.from_ns = window.from_ns,
                                                   .to_ns = window.to_ns,
                                                   .name = options.selection.name ? &*options.selection.name : nullptr});
  timeline.Clocks(logs.reader(0).header().start_clock);
  // The trace's opening: the ranks of every log (a trace of one rank names it, of several
  // lists them) and the first log's devices, whose numbers the other logs' do not share.
  {
    TraceDescription description;
    std::set<int32_t> ranks;
    for (size_t i = 0; i < logs.size(); ++i) {
      if (!logs.reader(i).file_size()) continue;  // a pipe cannot be read twice
      TraceDescription one = DescribeLog(logs.reader(i).path(), options.salvage);
      if (i == 0) description.devices = std::move(one.devices);
      ranks.insert(one.ranks.begin(), one.ranks.end());
      if (!description.world_size) description.world_size = one.world_size;
    }
    description.ranks.assign(ranks.begin(), ranks.end());
    out.Describe(description);
  }
  std::vector<std::unique_ptr<InputLog>> inputs;
  for (size_t i = 0; i < logs.size(); ++i) {
    inputs.push_back(std::make_unique<InputLog>(logs.reader(i).strings(),
                                                timeline.AddInput(placement->inputs[i]),
                                                options.selection));
    // Log i's correlation ids: i * 2^32 + 1 on (integers a double still holds exactly).
    inputs.back()->converter.StartCorrelationIdsAt((uint64_t{i} << 32) + 1);
  }
  stats->hosts = placement->hosts;
  size_t source = 0;
  uint64_t events = 0;
  while (true) {
    Result<const Event*> next = logs.NextEvent(&source);
    if (!next.ok()) {
      stats->damage = next.status().message();
      return next.status();
    }
    if (!*next) break;
    const Event& event = **next;
    InputLog& input = *inputs[source];
    if (!selecting) {
      std::visit(input.converter, event);
    } else {
      if (const auto* p = std::get_if<ProcessInfo>(&event)) {
        stats->processes[p->pid] = LoggedProcess::Of(*p, logs.reader(source).strings());
      }
      if (input.filter.Selected(event)) {
        const uint64_t kept = timeline.spans_kept();
        std::visit(input.converter, event);
        if (timeline.spans_kept() != kept && EventPid(event) != 0)
          stats->selected_kept += timeline.spans_kept() - kept;
      }
    }
    if (options.progress && ++events % kProgressEveryEvents == 0) {
      options.progress(logs.bytes_read(), logs.total_size());
    }
  }
  // What is written now (the Python slices still open) is of the processes too.
  const uint64_t kept = timeline.spans_kept();
  for (auto& input : inputs) input->converter.Finish();
  stats->selected_kept += timeline.spans_kept() - kept;
  // How long the logs ran, when each says where it ended.
  uint64_t end_ns = 0;
  bool ended = true;
  for (size_t i = 0; i < logs.size(); ++i) {
    const auto& summary = logs.reader(i).summary();
    ended = ended && summary.has_value();
    if (summary)
      end_ns = std::max(end_ns, summary->end_clock.monotonic_ns + static_cast<uint64_t>(placement->inputs[i].offset_ns));
  }
  if (ended) stats->logged_ns = end_ns - std::min(end_ns, start.monotonic_ns);
  if (Status st = FinishMerged(timeline, logs, *placement, options.selection, window); !st.ok())
    return st;
  if (options.progress) options.progress(logs.bytes_read(), logs.total_size());
  return Status::Ok();
}

// One log, nothing selected: straight from the exporters to the writer.
Status ConvertWhole(LogReader& reader, TraceWriter& out, const ConvertOptions& options,
                    ConvertStats* stats) {
  out.Clocks(reader.header().start_clock);
  // A second reading of the log, for what the trace's opening says; not possible on a pipe.
  if (reader.file_size()) out.Describe(DescribeLog(reader.path(), options.salvage));
  DeviceLaneWriter drawable(out);
  EventConverter converter(reader.strings(), drawable);
  while (true) {
    Result<const Event*> next = reader.NextEvent();
    if (!next.ok()) {
      stats->damage = next.status().message();
      return next.status();
    }
    if (!*next) break;
    std::visit(converter, **next);
    if (options.progress && reader.events_read() % kProgressEveryEvents == 0) {
      options.progress(reader.bytes_read(), reader.file_size());
    }
  }
  converter.Finish();
  std::deque<std::string> owned;
  std::vector<TraceArg> data;
  AddLogFacts(reader, owned, data);
  if (Status st = out.Finish(data); !st.ok()) return st;
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
  const std::string_view name =
      path.ends_with(".gz") ? std::string_view(path).substr(0, path.size() - 3) : path;
  for (std::string_view suffix : {".pftrace", ".perfetto-trace", ".pb"}) {
    if (name.ends_with(suffix)) return TraceFormat::kPerfetto;
  }
  return TraceFormat::kChromeJson;
}

Result<LogsExtent> MeasureLogs(const std::vector<std::string>& in_paths, bool salvage) {
  if (in_paths.empty()) return Status::Error("no logs to measure");
  Result<std::vector<MergedLogReader::Source>> sources = OpenLogs(in_paths, salvage);
  if (!sources.ok()) return sources.status();
  MergedLogReader logs(std::move(*sources));
  Result<Placement> placement = PlaceLogs(logs);
  if (!placement.ok()) return placement.status();
  for (size_t i = 0; i < logs.size(); ++i) {
    // A window no span reaches into: every span batch is stepped over.
    logs.reader(i).SetWindow(LogReaderOptions::Window{.from_ns = UINT64_MAX - 1, .to_ns = UINT64_MAX});
  }
  LogsExtent extent{.start = TraceStart(logs, *placement)};
  size_t source = 0;
  while (true) {
    Result<const Event*> next = logs.NextEvent(&source);
    if (!next.ok()) return next.status();
    if (!*next) break;
  }
  uint64_t end_ns = extent.start.monotonic_ns;
  for (size_t i = 0; i < logs.size(); ++i) {
    const LogReader& r = logs.reader(i);
    uint64_t ends = r.spans_end_ns();
    if (r.summary()) ends = std::max(ends, r.summary()->end_clock.monotonic_ns);
    if (ends != 0) end_ns = std::max(end_ns, ends + static_cast<uint64_t>(placement->inputs[i].offset_ns));
  }
  extent.length_ns = end_ns - extent.start.monotonic_ns;
  return extent;
}

Status ConvertLog(const std::string& in_path, const std::string& out_path,
                  const ConvertOptions& options, ConvertStats* stats) {
  return ConvertLogs({in_path}, out_path, options, stats);
}

Status ConvertLogs(const std::vector<std::string>& in_paths, const std::string& out_path,
                   const ConvertOptions& options, ConvertStats* stats) {
  ConvertStats local;
  if (!stats) stats = &local;
  *stats = ConvertStats();
  if (in_paths.empty()) return Status::Error("no logs to convert");

  Result<std::vector<MergedLogReader::Source>> sources = OpenLogs(in_paths, options.salvage);
  if (!sources.ok()) return sources.status();
  MergedLogReader logs(std::move(*sources));
  auto out = CreateWriter(options.format, out_path);
  if (!out.ok()) return out.status();

  const bool whole = logs.size() == 1 && options.selection.empty();
  Status st = whole ? ConvertWhole(logs.reader(0), **out, options, stats)
                    : ConvertMerged(logs, **out, options, stats);
  stats->logs = logs.size();
  for (size_t i = 0; i < logs.size(); ++i) {
    const LogReader& r = logs.reader(i);
    stats->events_in += r.events_read();
    stats->batches_in += r.batches_read();
    stats->batches_skipped += r.batches_skipped();
    stats->complete = (i == 0 || stats->complete) && r.complete();
    if (!r.damage().ok() && stats->damage.empty()) {
      stats->salvaged = true;
      stats->damage = r.damage().message();
    }
  }
  if (whole) stats->hosts = 1;
  stats->events_out = (*out)->events_written();
  stats->bytes_written = (*out)->bytes_written();
  stats->trace_bytes = (*out)->trace_bytes();
  // A half-written trace would only mislead; but never delete what is not a regular file
  // (-o /dev/null, a FIFO, a device).
  if (!st.ok() && (*out)->writes_regular_file()) {
    out->reset();
    ::unlink(out_path.c_str());
  }
  return st;
}

}  // namespace xtrace
