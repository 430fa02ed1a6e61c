// Per Python line totals; see python_lines.h.
#include "report/python_lines.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "log/log_reader.h"
#include "model/event.h"
#include "report/held_time.h"

namespace xtrace::report {
namespace {

struct LineTotals {
  uint64_t calls = 0;        // traced calls made from the line, and ITT begins and ends
  uint64_t host_ns = 0;      // their time
  uint64_t launches = 0;
  uint64_t device_ops = 0;
  uint64_t device_ns = 0;     // measured operations' time (kernel timestamps)
  uint64_t estimated_ops = 0;  // operations without timestamps
  uint64_t bound_ns = 0;       // their host-side bounds: an upper bound, never a time
};

using CallKey = std::tuple<uint32_t, uint32_t, uint64_t>;  // pid, tid, start

}  // namespace

Result<Report> PythonLinesReport(const std::vector<std::string>& logs,
                                 const PythonLinesOptions& options) {
  std::map<std::string, LineTotals> lines;
  uint64_t device_ns_all = 0, device_ops_unplaced = 0;
  Report report;
  for (const std::string& path : logs) {
    auto reader = LogReader::Open(path, LogReaderOptions{.salvage = options.read.salvage});
    if (!reader.ok()) return reader.status();
    // As the other tables select: by process, and by the start of the call or operation.
    const AggregateOptions selection = SelectionOf(options.read, reader->header().start_clock);
    auto selected = [&selection, &report](uint32_t pid, uint64_t start_ns) {
      return InSelection(selection, pid, start_ns, report.processes);
    };
    std::map<CallKey, std::string> line_of_call;
    HeldTime holds;  // xtrace's, left out of the calls' time as the other tables leave it
    Event e;
    while (true) {
      auto more = reader->Next(&e);
      if (!more.ok()) return options.read.salvage ? more.status() : DamageError(more.status());
      if (!*more) break;
      const StringTable& strings = reader->strings();
      if (holds.Note(e)) continue;  // a hold or a learned creation: xtrace's, no call of a line
      if (const auto* process = std::get_if<ProcessInfo>(&e)) {
        report.processes[process->pid] = LoggedProcess::Of(*process, strings);
      } else if (const auto* st = std::get_if<PythonStack>(&e)) {
        // Every call's line is kept: an operation in the window may have been appended
        // before it.
        const PythonFrame* user = InnermostUserFrame(*st, strings, options.skips);
        if (!user) continue;
        std::string name = PythonFrameName(*user, strings);
        if (selected(st->pid, st->start_ns)) {
          LineTotals& t = lines[name];
          ++t.calls;
          t.host_ns += holds.Unheld(st->pid, st->tid, st->start_ns, st->end_ns);
        }
        line_of_call[{st->pid, st->tid, st->start_ns}] = std::move(name);
      } else if (const auto* l = std::get_if<KernelLaunch>(&e)) {
        if (!selected(l->pid, l->start_ns)) continue;
        auto it = line_of_call.find({l->pid, l->tid, l->start_ns});
        if (it != line_of_call.end()) ++lines[it->second].launches;
      } else if (const auto* op = std::get_if<DeviceOp>(&e)) {
        if (!selected(op->pid, op->start_ns)) continue;
        // Only a measured operation has a time. An estimated one has its host-side bound
        // (submission to the host call that saw it done), which every operation of one
        // submission shares: summed as time, a line's share would count it once per operation.
        const uint64_t ns = op->end_ns > op->start_ns ? op->end_ns - op->start_ns : 0;
        if (op->measured) device_ns_all += ns;
        auto it = line_of_call.find({op->pid, op->append_tid, op->append_ns});
        if (it == line_of_call.end()) {
          ++device_ops_unplaced;
          continue;
        }
        LineTotals& t = lines[it->second];
        ++t.device_ops;
        if (op->measured) {
          t.device_ns += ns;
        } else {
          ++t.estimated_ops;
          t.bound_ns += ns;
        }
      }
    }
    if (!reader->damage().ok())
      report.warnings.push_back(reader->damage().message() + "; reported the " +
                                std::to_string(reader->events_read()) + " events before it");
  }
  std::vector<std::pair<std::string, LineTotals>> rows;
  for (auto& row : lines)
    if (!options.name || std::regex_search(row.first, *options.name)) rows.push_back(std::move(row));
  // By measured device time; where there is none (a capture without kernel timestamps, or
  // lines alike), by the estimated operations' bounds, which say where the GPU work came from,
  // before the time in calls.
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second.device_ns, a.second.bound_ns, a.second.host_ns) >
           std::tie(b.second.device_ns, b.second.bound_ns, b.second.host_ns);
  });
  if (options.top && rows.size() > options.top) rows.resize(options.top);

  ReportTable table;
  table.id = "python_lines";
  table.title = "Python lines (innermost frame outside library code)";
  table.columns = {{"line", "Python line", Column::kText, true},
                   {"device_ns", "Device time", Column::kNs},
                   {"device_percent", "Device %", Column::kPercent},
                   {"device_ops", "Device ops", Column::kCount},
                   {"estimated", "Estimated", Column::kCount},
                   {"bound_ns", "Est. bound", Column::kNs},
                   {"launches", "Launches", Column::kCount},
                   {"events", "Traced events", Column::kCount},
                   {"host_ns", "In calls", Column::kNs}};
  for (const auto& [name, t] : rows) {
    const double percent = device_ns_all ? 100.0 * static_cast<double>(t.device_ns) /
                                               static_cast<double>(device_ns_all)
                                         : 0.0;
    table.rows.push_back({name, t.device_ns, percent, t.device_ops, t.estimated_ops, t.bound_ns, t.launches,
                          t.calls, t.host_ns});
  }
  std::string skipped;
  for (const std::string& s : options.skips) skipped += (skipped.empty() ? "" : ", ") + s;
  table.note = "Device time, Device %: measured operations only (kernel timestamps); Est. bound: the "
               "summed host-side bounds of the Estimated operations, an upper bound, not a timing. ";
  table.note += "Frames in files matching " + (skipped.empty() ? std::string("nothing") : skipped) +
               " are skipped (--python-skip)";
  if (device_ops_unplaced)
    table.note += "; " + std::to_string(device_ops_unplaced) +
                  " device operations were appended by calls without Python frames";
  ReportSection section;
  section.tables.push_back(std::move(table));
  report.sections.push_back(std::move(section));
  return report;
}

}  // namespace xtrace::report
