// The report's tables from section statistics (report_tables.h).
#include "report/report_tables.h"

#include "base/hex.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "report/display_name.h"
#include "report/table_writer.h"

namespace xtrace::report {
namespace {

using nlohmann::json;

double Percent(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

json NsOrNull(const DurationStats& s, uint64_t value) { return s.count ? json(value) : json(); }

const char* KindName(DeviceOpKind kind) {
  switch (kind) {
    case DeviceOpKind::kCopy:
      return "copy";
    case DeviceOpKind::kFill:
      return "fill";
    case DeviceOpKind::kHostFunction:
      return "host function";
    default:
      return "kernel";
  }
}

bool NameSelected(const TableOptions& o, const std::string& name) { return NameSelected(o, name, name); }

// Rules are matched against the name as shown, then as captured: a user writes them from
// what the report shows, or from the names a log or another tool holds.
std::string Category(const TableOptions& o, const std::string& captured, const std::string& shown) {
  if (!o.categories) return "";
  const std::string_view category = o.categories->Classify(shown);
  if (category != kOtherCategory || captured == shown) return std::string(category);
  return std::string(o.categories->Classify(captured));
}

std::string Category(const TableOptions& o, const std::string& name) { return Category(o, name, name); }

ReportTable HostCalls(const SectionStats& s, const TableOptions& o) {
  ReportTable t{"host_calls", "Host calls (per API function)", {}, {}, ""};
  t.columns = {{"name", "Function", Column::kText, true}, {"calls", "Calls", Column::kCount},
               {"total_ns", "Total", Column::kNs},         {"percent", "Time %", Column::kPercent},
               {"average_ns", "Average", Column::kNs},     {"min_ns", "Min", Column::kNs},
               {"max_ns", "Max", Column::kNs},             {"failed", "Failed", Column::kCount},
               {"failures", "", Column::kJsonOnly}};
  if (o.categories) t.columns.insert(t.columns.begin() + 1, {"category", "Category", Column::kText});
  for (const auto& [name, row] : s.host_calls) {
    if (!NameSelected(o, name)) continue;
    std::vector<json> r = {name,
                           row.time.count,
                           row.time.total_ns,
                           Percent(double(row.time.total_ns), double(s.thread_time_ns)),
                           row.time.average_ns(),
                           row.time.min_or_zero(),
                           row.time.max_ns,
                           row.failed,
                           json(row.failures)};
    if (o.categories) r.insert(r.begin() + 1, Category(o, name));
    t.rows.push_back(std::move(r));
  }
  t.note = "Time %: of the traced threads' time (each thread from its first to its last call).";
  return t;
}

ReportTable DeviceOps(const SectionStats& s, const TableOptions& o) {
  ReportTable t{"device_ops", "Device operations (per kernel; copies and fills by append function)", {}, {}, ""};
  t.columns = {{"name", "Operation", Column::kText, true},
               {"kind", "Kind", Column::kText},
               {"calls", "Calls", Column::kCount},
               {"total_ns", "Total", Column::kNs},
               {"percent", "Time %", Column::kPercent},
               {"average_ns", "Average", Column::kNs},
               {"min_ns", "Min", Column::kNs},
               {"max_ns", "Max", Column::kNs},
               {"measured", "Measured", Column::kCount},
               {"estimated", "Estimated", Column::kCount},
               {"estimated_bound_ns", "Est. bound", Column::kNs},
               {"bytes", "Bytes", Column::kBytes},
               {"gb_per_s", "GB/s", Column::kRate},
               {"mangled_name", "", Column::kJsonOnly}};
  if (o.categories) t.columns.insert(t.columns.begin() + 2, {"category", "Category", Column::kText});
  uint64_t measured_total = 0;
  for (const auto& [name, row] : s.device_ops) measured_total += row.measured.total_ns;
  for (const auto& [name, row] : s.device_ops) {
    const std::string shown = ShownName(o, name);
    if (!NameSelected(o, name, shown)) continue;
    const bool memory = row.kind != DeviceOpKind::kKernel;
    const uint64_t bytes = row.measured_bytes + row.estimated_bytes;
    json rate;
    if (memory && row.measured.total_ns > 0) {
      rate = double(row.measured_bytes) / double(row.measured.total_ns);  // bytes/ns = GB/s
    }
    std::vector<json> r = {shown,
                           KindName(row.kind),
                           row.measured.count + row.estimated.count,
                           row.measured.total_ns,
                           Percent(double(row.measured.total_ns), double(measured_total)),
                           NsOrNull(row.measured, uint64_t(row.measured.average_ns())),
                           NsOrNull(row.measured, row.measured.min_or_zero()),
                           NsOrNull(row.measured, row.measured.max_ns),
                           row.measured.count,
                           row.estimated.count,
                           row.estimated.total_ns,
                           memory ? json(bytes) : json(),
                           rate,
                           name};
    if (o.categories) r.insert(r.begin() + 2, Category(o, name, shown));
    t.rows.push_back(std::move(r));
  }
  t.note =
      "Total, Time %, Average, Min, Max: measured operations only (kernel timestamps). Est. bound: "
      "the summed host-side bounds of operations without timestamps, an upper bound, not a timing.";
  return t;
}

ReportTable Submission(const SectionStats& s, const TableOptions& o) {
  ReportTable t{"submission", "Submission latency (measured operations; averages)", {}, {}, ""};
  t.columns = {{"name", "Operation", Column::kText, true},
               {"measured", "Measured", Column::kCount},
               {"append_to_submit_ns", "Append->Submit", Column::kNs},
               {"submit_to_start_ns", "Submit->Start", Column::kNs},
               {"start_to_end_ns", "Start->End", Column::kNs},
               {"append_to_end_ns", "Append->End", Column::kNs},
               {"total_ns", "", Column::kJsonOnly}};
  for (const auto& [name, row] : s.device_ops) {
    const std::string shown = ShownName(o, name);
    if (!NameSelected(o, name, shown) || row.measured.count == 0) continue;
    const double a = row.append_to_submit.average_ns(), b = row.submit_to_start.average_ns(),
                 c = row.measured.average_ns();
    t.rows.push_back({shown, row.measured.count, NsOrNull(row.append_to_submit, uint64_t(a)),
                      NsOrNull(row.submit_to_start, uint64_t(b)), uint64_t(c), uint64_t(a + b + c),
                      row.measured.total_ns});
  }
  t.note = "Append and submit: the start of the host call; an immediate list's append is its submit.";
  return t;
}

ReportTable Ranges(const SectionStats& s, const TableOptions& o) {
  ReportTable t{"ranges", "ITT / oneDNN / PyTorch ranges", {}, {}, ""};
  t.columns = {{"domain", "Domain", Column::kText},    {"name", "Name", Column::kText, true},
               {"calls", "Calls", Column::kCount},      {"self_ns", "Self", Column::kNs},
               {"self_percent", "Self %", Column::kPercent},
               {"total_ns", "Total", Column::kNs},      {"average_ns", "Average", Column::kNs},
               {"device_ns", "Device", Column::kNs}};
  uint64_t self_total = 0;
  for (const auto& [key, row] : s.ranges) self_total += row.self_ns;
  for (const auto& [key, row] : s.ranges) {
    const std::string shown = ShownName(o, key.second);
    if (!NameSelected(o, key.second, shown)) continue;
    t.rows.push_back({key.first, shown, row.total.count, row.self_ns,
                      Percent(double(row.self_ns), double(self_total)), row.total.total_ns,
                      row.total.average_ns(), row.device_ns});
  }
  t.key_columns = 2;  // domain, name
  t.note = "Self: minus the ranges nested in it on its thread. Device: measured time of the "
           "operations appended inside it.";
  return t;
}

// Each engine's name, made unique within its process: two queues on one engine of a device
// ("GPU 0 compute 0.0") are told apart by a number in the order of their handles.
std::map<EngineKey, std::string> EngineNames(const SectionStats& s) {
  std::map<EngineKey, std::string> names;
  std::map<std::pair<uint32_t, std::string>, int> seen;
  for (const auto& [key, e] : s.engines) {
    std::string name = EngineName(e.identity, std::get<2>(key));
    if (const int n = ++seen[{std::get<0>(key), name}]; n > 1) name += " #" + std::to_string(n);
    names[key] = std::move(name);
  }
  return names;
}

void Engines(const SectionStats& s, const TableOptions& o, std::vector<ReportTable>* out) {
  ReportTable t{"engines", "GPU utilization (per engine)", {}, {}, ""};
  t.columns = {{"pid", "Pid", Column::kCount},
               {"engine", "Engine", Column::kText},
               {"operations", "Ops", Column::kCount},
               {"span_ns", "Span", Column::kNs},
               {"busy_percent", "Busy %", Column::kPercent},
               {"idle_launch_ns", "Idle: launch", Column::kNs},
               {"idle_sync_ns", "Idle: sync", Column::kNs},
               {"idle_waiting_ns", "Idle: waiting", Column::kNs},
               {"idle_unknown_ns", "Idle: unknown", Column::kNs},
               {"verdict", "Verdict", Column::kText},
               {"estimated_percent", "Est. %", Column::kPercent},
               {"launch_latency_p50_ns", "Latency p50", Column::kNs},
               {"launch_latency_p95_ns", "p95", Column::kNs},
               {"launch_latency_p99_ns", "p99", Column::kNs},
               {"busy_ns", "", Column::kJsonOnly},
               {"device", "", Column::kJsonOnly},
               {"queue", "", Column::kJsonOnly},
               {"immediate", "", Column::kJsonOnly},
               {"ordinal", "", Column::kJsonOnly},
               {"index", "", Column::kJsonOnly},
               {"engine_type", "", Column::kJsonOnly},
               {"estimated_operations", "", Column::kJsonOnly}};
  t.key_columns = 2;  // pid, engine
  // The engines' idle time while xtrace held the submitting thread (or its process): a column
  // of the text and CSV only where a capture held one, always in JSON.
  const bool held = std::any_of(s.engines.begin(), s.engines.end(),
                                [](const auto& e) { return e.second.idle.idle().held_ns > 0; });
  const int held_column = t.ColumnIndex("idle_unknown_ns") + 1;
  t.columns.insert(t.columns.begin() + held_column,
                   {"idle_held_ns", held ? "Idle: xtrace" : "", held ? Column::kNs : Column::kJsonOnly});
  ReportTable gaps{"gaps", "Largest idle gaps (per engine)", {}, {}, ""};
  gaps.key_columns = 3;  // pid, engine, at
  gaps.columns = {{"pid", "Pid", Column::kCount},           {"engine", "Engine", Column::kText},
                  {"start_ns", "At", Column::kNs},          {"duration_ns", "Gap", Column::kNs},
                  {"cause", "Cause", Column::kText},        {"submit_tid", "Submitter", Column::kCount},
                  {"host_activity", "Submitter meanwhile", Column::kText, true, true},
                  {"queue", "", Column::kJsonOnly},         {"activity", "", Column::kJsonOnly}};
  // A capture with Python frames: each gap names the line that got work to the engine again.
  bool python = false;
  for (const auto& [key, row] : s.engines)
    for (const EngineGap& g : row.idle.largest_gaps()) python = python || !g.python_line.empty();
  if (python) gaps.columns.insert(gaps.columns.begin() + 6, {"python_line", "Python line", Column::kText, true});
  const std::map<EngineKey, std::string> names = EngineNames(s);
  for (const auto& [key, row] : s.engines) {
    const auto& [pid, device, queue] = key;
    const EngineIdle& e = row.idle;
    const EngineIdentity& id = row.identity;
    const json device_cell = device == kUnknownDevice ? json("?") : json(std::to_string(device));
    const auto& lat = e.launch_latency();
    const json p50 = lat.count() ? json(lat.Percentile(0.50)) : json();
    const json p95 = lat.count() ? json(lat.Percentile(0.95)) : json();
    const json p99 = lat.count() ? json(lat.Percentile(0.99)) : json();
    const std::string type = EngineGroupType(id.group_flags);
    const std::string& name = names.at(key);
    t.rows.push_back({pid, name, e.operations(), e.span_ns(),
                      Percent(double(e.busy_ns()), double(e.span_ns())), e.idle().launch_ns,
                      e.idle().sync_ns, e.idle().waiting_ns, e.idle().unknown_ns,
                      IdleVerdict(e.busy_ns(), e.idle()),
                      Percent(double(e.idle().unknown_ns), double(e.span_ns())), p50, p95, p99,
                      e.busy_ns(), device_cell, Hex(queue), id.described ? json(id.immediate) : json(),
                      id.described ? json(id.ordinal) : json(), id.described ? json(id.index) : json(),
                      type.empty() ? json() : json(type), e.estimated_operations()});
    t.rows.back().insert(t.rows.back().begin() + held_column, e.idle().held_ns);
    for (const EngineGap& g : e.largest_gaps()) {
      std::string text;
      json activity = json::array();
      for (const GapActivity& a : g.host_activity) {
        if (!text.empty()) text += ", ";
        text += a.name + " " + FormatDuration(double(a.overlap_ns));
        activity.push_back({{"name", a.name}, {"overlap_ns", a.overlap_ns}});
      }
      gaps.rows.push_back({pid, name,
                           g.start_ns >= o.time_origin_ns ? g.start_ns - o.time_origin_ns : 0,
                           g.duration_ns(), g.cause, g.submit_tid, text.empty() ? "-" : text,
                           Hex(queue), activity});
      if (python)
        gaps.rows.back().insert(gaps.rows.back().begin() + 6,
                                g.python_line.empty() ? json("-") : json(g.python_line));
    }
  }
  t.note = "Engine: device, engine group type (when the log holds the device's queue groups), "
           "ordinal.index. Idle: launch = nothing submitted, the host was late; sync = nothing "
           "submitted because the host first waited for the previous operation; waiting = "
           "submitted, not started; unknown = around operations without timestamps. Verdict: "
           "from the measured part, when it is at least half of the span; Est. %: the share of "
           "the span left out of it (unknown). Latency: submitting call end -> device start.";
  if (held)
    t.note += " Idle: xtrace = xtrace held the submitting thread or its process (to ask about "
              "objects made before the attach, or to probe it as it started or loaded a "
              "library; left out of the verdict).";
  // An engine whose time was mostly not measured: why, and what would measure it.
  const int verdict = t.ColumnIndex("verdict");
  if (std::any_of(t.rows.begin(), t.rows.end(), [&](const auto& row) {
        return row[verdict] == kVerdictMostlyEstimated || row[verdict] == kVerdictEstimated;
      }))
    t.note += " \"mostly estimated\" (\"estimated\": all of it): most of the engine's time lies "
              "around operations without kernel timestamps, whose host-side bounds say nothing of "
              "how busy it was, so no verdict is drawn. An operation is measured when the program "
              "reads the kernel timestamps of the event it signals (zeEventQueryKernelTimestamp, "
              "an event pool with ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP).";
  // Queues the log never described keep their handle for a name: the only one the log has, and
  // the name of their track in `xtrace convert`'s trace, where the user goes next.
  const bool undescribed = std::any_of(s.engines.begin(), s.engines.end(),
                                       [](const auto& e) { return !e.second.identity.described; });
  if (undescribed)
    t.note += " \"queue 0x...\", \"immediate list 0x...\": the log does not say which engine "
              "that queue or list ran on (it was made before the attach and the process's Level "
              "Zero could not be asked, or the log was written without engine identities); the "
              "name is its handle, as on its track in xtrace convert's trace.";
  gaps.note = "At: from the start of the capture.";
  out->push_back(std::move(t));
  out->push_back(std::move(gaps));
}

void CategoryTables(const SectionStats& s, const TableOptions& o, std::vector<ReportTable>* out) {
  struct Sum {
    uint64_t calls = 0, total_ns = 0, estimated_ns = 0;
  };
  std::map<std::string, Sum> device, host;
  uint64_t device_total = 0;
  for (const auto& [name, row] : s.device_ops) {
    const std::string shown = ShownName(o, name);
    if (!NameSelected(o, name, shown)) continue;
    Sum& sum = device[Category(o, name, shown)];
    sum.calls += row.measured.count + row.estimated.count;
    sum.total_ns += row.measured.total_ns;
    sum.estimated_ns += row.estimated.total_ns;
    device_total += row.measured.total_ns;
  }
  for (const auto& [name, row] : s.host_calls) {
    if (!NameSelected(o, name)) continue;
    Sum& sum = host[Category(o, name)];
    sum.calls += row.time.count;
    sum.total_ns += row.time.total_ns;
  }
  ReportTable d{"device_categories", "Device time by category", {}, {}, ""};
  d.columns = {{"name", "Category", Column::kText}, {"calls", "Calls", Column::kCount},
               {"total_ns", "Total", Column::kNs},  {"percent", "Time %", Column::kPercent},
               {"estimated_bound_ns", "Est. bound", Column::kNs}};
  for (const auto& [name, sum] : device) {
    d.rows.push_back({name, sum.calls, sum.total_ns, Percent(double(sum.total_ns), double(device_total)),
                      sum.estimated_ns});
  }
  ReportTable h{"host_categories", "Host call time by category", {}, {}, ""};
  h.columns = {{"name", "Category", Column::kText}, {"calls", "Calls", Column::kCount},
               {"total_ns", "Total", Column::kNs},  {"percent", "Time %", Column::kPercent}};
  for (const auto& [name, sum] : host) {
    h.rows.push_back({name, sum.calls, sum.total_ns, Percent(double(sum.total_ns), double(s.thread_time_ns))});
  }
  out->push_back(std::move(d));
  out->push_back(std::move(h));
}

}  // namespace

std::string ShownName(const TableOptions& options, std::string_view captured) {
  return options.mangled ? std::string(captured) : DemangledName(captured);
}

bool NameSelected(const TableOptions& options, std::string_view captured, std::string_view shown) {
  if (!options.name) return true;
  auto found = [&](std::string_view name) { return std::regex_search(name.begin(), name.end(), *options.name); };
  return found(shown) || (captured != shown && found(captured));
}

void SortAndCut(ReportTable* table, SortKey sort, size_t top) {
  const char* key = "total_ns";
  switch (sort) {
    case SortKey::kCalls: key = "calls"; break;
    case SortKey::kAverage: key = "average_ns"; break;
    case SortKey::kMax: key = "max_ns"; break;
    case SortKey::kName: key = "name"; break;
    case SortKey::kTotal: break;
  }
  int column = table->ColumnIndex(key);
  if (column < 0) column = table->ColumnIndex(table->id == "gaps" ? "duration_ns" : "total_ns");
  if (column < 0) column = table->ColumnIndex("span_ns");
  if (column >= 0) {
    const bool ascending = table->columns[column].kind == Column::kText;
    const int name = table->ColumnIndex("name");
    std::stable_sort(table->rows.begin(), table->rows.end(), [&](const auto& a, const auto& b) {
      const json& x = a[column];
      const json& y = b[column];
      if (x != y) {
        if (x.is_null() || y.is_null()) return y.is_null();
        return ascending ? x < y : x > y;
      }
      return name >= 0 && a[name] < b[name];
    });
  }
  if (top > 0 && table->rows.size() > top) table->rows.resize(top);
}

std::vector<ReportTable> BuildSectionTables(const SectionStats& stats, const TableOptions& options) {
  std::vector<ReportTable> tables;
  tables.push_back(HostCalls(stats, options));
  tables.push_back(DeviceOps(stats, options));
  tables.push_back(Submission(stats, options));
  tables.push_back(Ranges(stats, options));
  Engines(stats, options, &tables);
  if (options.categories) CategoryTables(stats, options, &tables);
  for (ReportTable& t : tables) SortAndCut(&t, options.sort, t.id == "engines" ? 0 : options.top);
  return tables;
}

}  // namespace xtrace::report
