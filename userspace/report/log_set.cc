// Reading the logs of a report (log_set.h).
#include "report/log_set.h"

#include <algorithm>
#include <variant>

#include "log/log_reader.h"

namespace xtrace::report {

Status DamageError(const Status& damage) {
  return Status::Error(damage.message() + "; --salvage reports the part before it");
}

AggregateOptions SelectionOf(const LogReadOptions& options, const ClockAnchor& start) {
  AggregateOptions aggregate = options.aggregate;
  aggregate.from_ns = options.from ? std::optional(options.from->Resolve(start)) : std::nullopt;
  aggregate.to_ns = options.to ? std::optional(options.to->Resolve(start)) : std::nullopt;
  return aggregate;
}

Result<LogAggregate> AggregateLog(const std::string& path, size_t index, const LogReadOptions& options) {
  Result<LogReader> reader = LogReader::Open(path, LogReaderOptions{.salvage = options.salvage});
  if (!reader.ok()) return reader.status();
  LogAggregate log;
  log.path = path;
  log.host = reader->header().host;
  log.start_ns = reader->header().start_clock.monotonic_ns;
  log.rank = "log " + std::to_string(index);

  const AggregateOptions aggregate = SelectionOf(options, reader->header().start_clock);
  // The reader steps over the batches of spans that end before the window or start after it
  // (the log's batch index), so a short window costs what it holds, not the whole log. What
  // it still returns around the window, the aggregator's selection filters.
  if (aggregate.from_ns || aggregate.to_ns)
    reader->SetWindow(LogReaderOptions::Window{.from_ns = aggregate.from_ns.value_or(0),
                                               .to_ns = aggregate.to_ns.value_or(UINT64_MAX)});

  // With --by rank, a process's section is its rank once its ProcessInfo says it; the log's
  // rank (the first a process recorded) is only known at the end, and names the section of
  // the events without one then.
  log.aggregator = std::make_unique<ReportAggregator>(aggregate, aggregate.by == GroupBy::kHost ? log.host : log.rank);
  while (true) {
    Result<const Event*> next = reader->NextEvent();
    if (!next.ok()) return options.salvage ? next.status() : DamageError(next.status());
    if (!*next) break;
    const Event& event = **next;
    if (const auto* process = std::get_if<ProcessInfo>(&event); process && process->rank >= 0) {
      log.ranks.insert(process->rank);
      if (!log.rank_recorded) {
        log.rank = "rank " + std::to_string(process->rank);
        log.rank_recorded = true;
      }
    }
    if (const auto* d = std::get_if<RecordsDropped>(&event)) {
      // A drop window is the time between two looks at the counters: its records were lost
      // somewhere in it, so one that overlaps the report's window counts.
      if ((!aggregate.from_ns || d->end_ns >= *aggregate.from_ns) &&
          (!aggregate.to_ns || d->start_ns < *aggregate.to_ns))
        log.dropped.AddCounts(*d);
    }
    log.aggregator->Add(event, reader->strings());
  }
  log.aggregator->Finish();
  if (aggregate.by == GroupBy::kRank) log.aggregator->NameUnrankedSection(log.rank);
  log.aggregator->NameUnrankedTotals(log.rank);
  log.events = reader->events_read();
  log.complete = reader->complete();
  if (log.complete) log.notes = reader->summary()->notes;
  if (!reader->damage().ok()) log.damage = reader->damage().message();
  return log;
}

}  // namespace xtrace::report
