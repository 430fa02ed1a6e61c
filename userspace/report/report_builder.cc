// Assembling and rendering a report from many logs (report_builder.h).
#include "report/report_builder.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>

#include "model/drop_remedy.h"
#include "report/table_writer.h"

namespace xtrace::report {
namespace {

using nlohmann::json;

// What a log's capture lost, as a warning: how many records of each source, and what to do
// next time (the remedy that fits the ring that lost them); empty when it lost none.
std::string DropsWarning(const RecordsDropped& d) {
  if (!d.total()) return "";
  return "the capture dropped " + std::to_string(d.total()) + " events" +
         BySourceText(DroppedBySource(d)) + ", missing from these tables; " +
         DropRemedyText(d.total(), d.itt_rings);
}

struct ReadLogs {
  std::vector<LogDescription> logs;
  std::map<std::string, SectionStats> sections;  // merged across logs
  std::map<std::string, std::string> labels;
  std::vector<SectionStats> per_log;             // each log's whole capture
  // name -> rank -> total: kernels' measured device time, ranges' time (spread across ranks)
  std::map<std::string, std::map<std::string, uint64_t>> kernel_by_rank, range_by_rank;
  std::set<std::string> ranks;
  std::vector<std::string> warnings;
  std::map<uint32_t, LoggedProcess> processes;
  uint64_t first_start_ns = 0;
};

Result<ReadLogs> ReadAll(const std::vector<std::string>& paths, const ReportOptions& options,
                         size_t first_index = 0) {
  ReadLogs out;
  for (size_t i = 0; i < paths.size(); ++i) {
    Result<LogAggregate> log = AggregateLog(paths[i], first_index + i, options.read);
    if (!log.ok()) return log.status();
    if (i == 0) out.first_start_ns = log->start_ns;
    SectionStats whole;
    for (const auto& [key, section] : log->aggregator->sections()) {
      out.sections[key].Merge(section);
      out.labels.try_emplace(key, log->aggregator->Label(key));
      whole.Merge(section);
    }
    out.per_log.push_back(std::move(whole));
    for (const auto& [pid, process] : log->aggregator->processes()) out.processes[pid] = process;
    for (const auto& [rank, totals] : log->aggregator->rank_totals()) {
      out.ranks.insert(rank);
      for (const auto& [name, ns] : totals.kernel_ns) out.kernel_by_rank[name][rank] += ns;
      for (const auto& [name, ns] : totals.range_ns) out.range_by_rank[name][rank] += ns;
    }
    if (const uint64_t n = log->aggregator->executions_recorded_before())
      out.warnings.push_back(log->path + ": " + std::to_string(n) +
                             (n == 1 ? " execution" : " executions") +
                             " of command lists recorded before the attach: their contents are unknown, "
                             "so they show no device operations");
    if (const HeldTime& held = log->aggregator->holds(); held.holds())
      out.warnings.push_back(log->path + ": xtrace held the traced threads " + FormatDuration(double(held.total_ns())) +
                             " in all (" + std::to_string(held.holds()) + (held.holds() == 1 ? " hold" : " holds") +
                             ")" + held.Causes() + "; that time is left out of the "
                             "calls' and ranges' times, and an engine's idle time under it is \"" +
                             kHeldCause + "\"");
    LogDescription d{log->path, log->rank, log->host, log->damage, log->rank_recorded,
                     std::vector<int32_t>(log->ranks.begin(), log->ranks.end()), log->complete,
                     log->events};
    if (!d.damage.empty()) {
      out.warnings.push_back(d.damage + "; reported the " + std::to_string(d.events) + " events before it");
    } else if (!d.complete) {
      out.warnings.push_back(d.path + " has no summary: the capture did not finish cleanly; reported the " +
                             std::to_string(d.events) + " events it holds");
    }
    for (const std::string& note : log->notes) out.warnings.push_back(d.path + ": " + note);
    if (const std::string lost = DropsWarning(log->dropped); !lost.empty())
      out.warnings.push_back(d.path + ": " + lost);
    out.logs.push_back(std::move(d));
  }
  return out;
}

// Per kernel (or range): min, median, max and mean of each rank's total, the rank farthest from
// the median, and the slowest rank with its excess over the median: the straggler. A rank is
// a traced process's rank (a node's log holds several), else a log's own name ("log 2").
ReportTable Spread(const std::string& id, const std::string& title, const std::string& what,
                   const std::map<std::string, std::map<std::string, uint64_t>>& by_name,
                   const TableOptions& o) {
  ReportTable t{id, title, {}, {}, ""};
  t.columns = {{"name", what, Column::kText, true},   {"logs", "Ranks", Column::kCount},
               {"min_ns", "Min", Column::kNs},        {"median_ns", "Median", Column::kNs},
               {"max_ns", "Max", Column::kNs},        {"mean_ns", "Mean", Column::kNs},
               {"slowest", "Slowest", Column::kText}, {"excess_ns", "Excess", Column::kNs},
               {"outlier", "Outlier", Column::kText}, {"outlier_vs_median", "x median", Column::kRate},
               {"total_ns", "", Column::kJsonOnly},   {"per_log_ns", "", Column::kJsonOnly}};
  // Names as the other tables show them (demangled, cut): names cut alike are one row.
  std::map<std::string, std::map<std::string, uint64_t>> shown_by_name;
  for (const auto& [name, per_rank] : by_name) {
    const std::string shown = ShownName(o, name);
    if (!NameSelected(o, name, shown)) continue;
    for (const auto& [rank, ns] : per_rank) shown_by_name[shown][rank] += ns;
  }
  for (const auto& [name, per_rank] : shown_by_name) {
    std::vector<std::pair<uint64_t, std::string>> values;  // (ns, rank)
    json per_log = json::object();
    for (const auto& [rank, ns] : per_rank) {
      values.emplace_back(ns, rank);
      per_log[rank] = ns;
    }
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    const double median = n % 2 ? double(values[n / 2].first)
                                : (double(values[n / 2 - 1].first) + double(values[n / 2].first)) / 2;
    double sum = 0;
    for (const auto& v : values) sum += double(v.first);
    const auto& outlier = std::abs(double(values.back().first) - median) >= std::abs(double(values.front().first) - median)
                              ? values.back()
                              : values.front();
    const uint64_t excess = double(values.back().first) > median ? uint64_t(double(values.back().first) - median) : 0;
    t.rows.push_back({name, n, values.front().first, uint64_t(median), values.back().first,
                      uint64_t(sum / double(n)), values.back().second, excess, outlier.second,
                      median > 0 ? json(double(outlier.first) / median) : json(), uint64_t(sum), per_log});
  }
  t.note = "Slowest: the rank with the most time, Excess: its time beyond the median. Outlier: "
           "the rank farthest from the median (a straggler when x median is far from 1).";
  return t;
}

ReportTable Logs(const std::vector<LogDescription>& logs) {
  ReportTable t{"logs", "Logs", {}, {}, ""};
  t.columns = {{"rank", "Rank", Column::kText},       {"host", "Host", Column::kText},
               {"events", "Events", Column::kCount},  {"complete", "Complete", Column::kText},
               {"path", "Path", Column::kText, true}};
  for (const LogDescription& d : logs) {
    // A node's log names every rank it holds ("ranks 0, 1"), not only the first.
    std::string rank = d.rank;
    if (d.ranks.size() > 1) {
      rank = "ranks ";
      for (size_t i = 0; i < d.ranks.size(); ++i) rank += (i ? ", " : "") + std::to_string(d.ranks[i]);
    }
    t.rows.push_back({rank, d.host, d.events, d.complete ? "yes" : "no", d.path});
  }
  return t;
}

SectionStats Whole(const ReadLogs& r) {
  SectionStats whole;
  for (const SectionStats& s : r.per_log) whole.Merge(s);
  return whole;
}

}  // namespace

Result<Report> BuildReport(const std::vector<std::string>& paths, const ReportOptions& options) {
  Result<ReadLogs> r = ReadAll(paths, options);
  if (!r.ok()) return r.status();
  Report report;
  TableOptions tables = options.tables;
  tables.time_origin_ns = r->first_start_ns;
  for (const auto& [key, stats] : r->sections) {
    report.sections.push_back({r->labels[key], BuildSectionTables(stats, tables)});
  }
  if (report.sections.empty()) report.sections.push_back({"", BuildSectionTables(SectionStats{}, tables)});
  if (r->logs.size() > 1) report.across_logs.push_back(Logs(r->logs));
  if (r->ranks.size() > 1) {
    ReportTable spread = Spread("ranks", "Kernels across ranks (measured device time per rank)",
                                "Kernel", r->kernel_by_rank, tables);
    SortAndCut(&spread, tables.sort, tables.top);
    report.across_logs.push_back(std::move(spread));
    if (!r->range_by_rank.empty()) {
      ReportTable ranges = Spread("range_ranks", "Ranges across ranks (ITT task and range time per rank)",
                                  "Range", r->range_by_rank, tables);
      SortAndCut(&ranges, tables.sort, tables.top);
      report.across_logs.push_back(std::move(ranges));
    }
  }
  report.logs = std::move(r->logs);
  report.warnings = std::move(r->warnings);
  report.processes = std::move(r->processes);
  return report;
}

Result<Report> BuildDiff(const std::vector<std::string>& before, const std::vector<std::string>& after,
                         const ReportOptions& options) {
  Result<ReadLogs> b = ReadAll(before, options);
  if (!b.ok()) return b.status();
  Result<ReadLogs> a = ReadAll(after, options, before.size());
  if (!a.ok()) return a.status();
  const SectionStats wb = Whole(*b), wa = Whole(*a);

  ReportTable t{"diff", "Change from BEFORE to AFTER (device: measured time; host: call time)", {}, {}, ""};
  t.columns = {{"side", "Side", Column::kText},
               {"name", "Name", Column::kText, true},
               {"calls_before", "Calls before", Column::kCount},
               {"calls_after", "Calls after", Column::kCount},
               {.key = "calls_delta", .header = "Calls +/-", .kind = Column::kCount, .change = true},
               {"total_before_ns", "Total before", Column::kNs},
               {"total_after_ns", "Total after", Column::kNs},
               {.key = "total_delta_ns", .header = "Total +/-", .kind = Column::kNs, .change = true},
               {"average_before_ns", "Avg before", Column::kNs},
               {"average_after_ns", "Avg after", Column::kNs},
               {.key = "average_delta_ns", .header = "Avg +/-", .kind = Column::kNs, .change = true}};
  auto add = [&](const char* side, const std::string& name, const DurationStats& x, const DurationStats& y) {
    const std::string shown = ShownName(options.tables, name);
    if (!NameSelected(options.tables, name, shown)) return;
    t.rows.push_back({side, shown, x.count, y.count, int64_t(y.count) - int64_t(x.count), x.total_ns,
                      y.total_ns, int64_t(y.total_ns) - int64_t(x.total_ns), x.average_ns(), y.average_ns(),
                      y.average_ns() - x.average_ns()});
  };
  std::map<std::string, std::pair<DurationStats, DurationStats>> device, host;
  for (const auto& [name, row] : wb.device_ops) device[name].first = row.measured;
  for (const auto& [name, row] : wa.device_ops) device[name].second = row.measured;
  for (const auto& [name, row] : wb.host_calls) host[name].first = row.time;
  for (const auto& [name, row] : wa.host_calls) host[name].second = row.time;
  for (const auto& [name, p] : device) add("device", name, p.first, p.second);
  for (const auto& [name, p] : host) add("host", name, p.first, p.second);
  const int delta = t.ColumnIndex("total_delta_ns");
  std::stable_sort(t.rows.begin(), t.rows.end(), [&](const auto& x, const auto& y) {
    return std::llabs(x[delta].template get<int64_t>()) > std::llabs(y[delta].template get<int64_t>());
  });
  if (options.tables.top > 0 && t.rows.size() > options.tables.top) t.rows.resize(options.tables.top);
  t.key_columns = 2;  // side, name
  t.note = "Sorted by the absolute change of the total.";

  Report report;
  report.diff.push_back(std::move(t));
  report.logs = std::move(b->logs);
  report.logs.insert(report.logs.end(), a->logs.begin(), a->logs.end());
  report.warnings = std::move(b->warnings);
  report.warnings.insert(report.warnings.end(), a->warnings.begin(), a->warnings.end());
  report.processes = std::move(b->processes);
  report.processes.insert(a->processes.begin(), a->processes.end());
  return report;
}

bool Report::HasRows() const {
  auto any = [](const std::vector<ReportTable>& tables) {
    // The Logs table describes the inputs, whatever was selected from them.
    return std::any_of(tables.begin(), tables.end(),
                       [](const ReportTable& t) { return t.id != "logs" && !t.rows.empty(); });
  };
  return any(across_logs) || any(diff) ||
         std::any_of(sections.begin(), sections.end(), [&](const ReportSection& s) { return any(s.tables); });
}

json ReportToJson(const Report& report) {
  json logs = json::array();
  for (const LogDescription& d : report.logs) {
    logs.push_back({{"path", d.path},
                    {"rank", d.rank},
                    {"rank_recorded", d.rank_recorded},
                    {"ranks", d.ranks},
                    {"host", d.host},
                    {"events", d.events},
                    {"complete", d.complete},
                    {"damage", d.damage}});
  }
  json out = {{"schema", "xtrace-report"}, {"version", kReportJsonVersion}, {"logs", logs}};
  out["sections"] = SectionsToJson(report.sections);
  auto tables_json = [](const std::vector<ReportTable>& tables) {
    json j = SectionsToJson({ReportSection{"", tables}});
    return j[0]["tables"];
  };
  if (!report.across_logs.empty()) out["across_logs"] = tables_json(report.across_logs);
  if (!report.diff.empty()) out["diff"] = tables_json(report.diff)["diff"];
  out["warnings"] = report.warnings;
  return out;
}

std::string RenderReport(const Report& report, OutputFormat format, const TextLayout& layout) {
  std::vector<ReportSection> all = report.sections;
  if (!report.across_logs.empty()) all.push_back({"across logs", report.across_logs});
  if (!report.diff.empty()) all.push_back({"", report.diff});
  switch (format) {
    case OutputFormat::kJson:
      return ReportToJson(report).dump(2) + "\n";
    case OutputFormat::kCsv:
      return RenderCsv(all);
    case OutputFormat::kText:
      break;
  }
  return RenderText(all, layout);
}

}  // namespace xtrace::report
