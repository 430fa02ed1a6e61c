// `xtrace report`: argument parsing around report/report_builder.h, which does the work.
#include "cli/report_command.h"

#include <charconv>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cli/selection_options.h"
#include "report/categories.h"
#include "report/report_builder.h"

namespace xtrace {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

constexpr const char* kHelp = R"(Usage: xtrace report LOG... [options]
       xtrace report --diff BEFORE AFTER [options]

Tables from event logs, without a browser: which API calls and kernels take the time, and why
the GPU is idle. LOG is a log or a directory of logs (*.capnp, e.g. a daemon's rotated files
or one log per rank); several logs are added together, and each kernel's spread across the
logs (min, median, max, mean, and the outlier log) shows stragglers.

TABLES
  host calls      per API function: calls, total, % of the traced threads' time, average,
                  min, max, failed calls (their result names in --format json)
  device ops      per kernel, copies and fills by append function: measured time (calls,
                  total, %, average, min, max, GB/s) and, apart, how many had no timestamps
                  and their host-side bound (an upper bound, never a timing)
  submission      per kernel: append -> submit -> device start -> device end
  ranges          ITT tasks, oneDNN primitives, PyTorch ranges: calls, self, total, device
                  time of the operations appended inside them
  engines, gaps   per engine: busy %, idle split into launch (nothing submitted: the host was
                  late), sync (the host first waited for the previous operation), waiting
                  (submitted, not started) and unknown; verdict launch-bound / sync-bound;
                  launch latency p50/p95/p99; the largest gaps and what the submitting thread
                  was doing in them

OUTPUT
  --format F          text (default), csv or json (schema: docs/report-json.md)
  -o, --output FILE   write there instead of standard output
  --by KEY            one section per process, thread, device, rank or host
  --sort KEY          total (default), calls, average, max or name
  --top N             rows per table (default: all)
  --gaps N            largest gaps kept per engine (default 5)
  --categories FILE   group names by rules, one per line: CATEGORY MATCH PATTERN with MATCH
                      equals, starts-with, ends-with or regex; the first match wins, the rest
                      is "other". Adds a category column and per-category tables.

SELECTION
  --from T, --to T    only events that start in this window: T is seconds from the capture
                      start (12.5, +12.5s, 500ms, 2m) or a wall-clock time
                      (2026-11-23T11:35:12.5Z, ...+01:00, or local time without a zone)
  --pid PID[,PID...]  only these processes
  --name REGEX        only rows whose name matches (ECMAScript regex, searched)

DAMAGED LOGS
  --salvage           report everything before the first damage, with a warning, instead
                      of failing
  -h, --help          this help

Exit status: 0 reported, 1 a log could not be read (one line on stderr says why), 2 bad usage.

Examples:
  xtrace report run.capnp
  xtrace report run.capnp --top 10 --sort average
  xtrace report rank*.capnp --by rank              # one section per rank
  xtrace report /var/lib/xtrace --from 60 --to 120 # a daemon's files, one minute of them
  xtrace report run.capnp --format json -o report.json
  xtrace report run.capnp --name 'gemm|conv' --categories kernels.txt
  xtrace report --diff before.capnp after.capnp --top 20
)";

struct Arguments {
  std::vector<std::string> inputs;
  std::string output;
  report::OutputFormat format = report::OutputFormat::kText;
  bool diff = false;
  std::string categories;
  report::ReportOptions options;
  EventSelection selection;  // --from, --to, --pid, --name
};

int UsageError(const std::string& message) {
  std::fprintf(stderr, "xtrace report: %s\nTry 'xtrace report --help'.\n", message.c_str());
  return kExitUsage;
}

template <typename T>
bool ParseCount(const std::string& text, T* out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

std::optional<int> ParseArguments(int argc, char** argv, Arguments* a) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    const bool takes_value = arg == "-o" || arg == "--output" || arg == "--format" || arg == "--by" ||
                             arg == "--sort" || arg == "--top" || arg == "--gaps" ||
                             arg == "--categories" || arg == "--from" || arg == "--to" ||
                             arg == "--pid" || arg == "--name";
    if (const size_t eq = arg.find('='); arg.starts_with("--") && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (takes_value) {
      if (i + 1 >= argc) return UsageError(arg + " needs a value");
      value = argv[++i];
    }
    auto bad = [&](const std::string& what) { return UsageError(arg + ": " + what + ", got '" + value + "'"); };
    auto& o = a->options;
    if (arg == "-h" || arg == "--help") {
      std::fputs(kHelp, stdout);
      return kExitOk;
    } else if (arg == "-o" || arg == "--output") {
      a->output = value;
    } else if (arg == "--format") {
      if (value == "text") a->format = report::OutputFormat::kText;
      else if (value == "csv") a->format = report::OutputFormat::kCsv;
      else if (value == "json") a->format = report::OutputFormat::kJson;
      else return bad("expected text, csv or json");
    } else if (arg == "--by") {
      using report::GroupBy;
      GroupBy& by = o.read.aggregate.by;
      if (value == "process") by = GroupBy::kProcess;
      else if (value == "thread") by = GroupBy::kThread;
      else if (value == "device") by = GroupBy::kDevice;
      else if (value == "rank") by = GroupBy::kRank;
      else if (value == "host") by = GroupBy::kHost;
      else return bad("expected process, thread, device, rank or host");
    } else if (arg == "--sort") {
      using report::SortKey;
      if (value == "total") o.tables.sort = SortKey::kTotal;
      else if (value == "calls") o.tables.sort = SortKey::kCalls;
      else if (value == "average") o.tables.sort = SortKey::kAverage;
      else if (value == "max") o.tables.sort = SortKey::kMax;
      else if (value == "name") o.tables.sort = SortKey::kName;
      else return bad("expected total, calls, average, max or name");
    } else if (arg == "--top") {
      if (!ParseCount(value, &o.tables.top) || o.tables.top == 0) return bad("expected a row count >= 1");
    } else if (arg == "--gaps") {
      if (!ParseCount(value, &o.read.aggregate.top_gaps)) return bad("expected a gap count");
    } else if (arg == "--categories") {
      a->categories = value;
    } else if (arg == "--from" || arg == "--to" || arg == "--pid" || arg == "--name") {
      // The parsing `xtrace convert` shares (cli/selection_options.h).
      Status st = arg == "--pid"    ? ParsePidList(arg, value, a->selection)
                  : arg == "--name" ? ParseNamePattern(arg, value, a->selection)
                                    : ParseWindowBound(arg, value, a->selection);
      if (!st.ok()) return UsageError(st.message());
    } else if (arg == "--diff") {
      a->diff = true;
    } else if (arg == "--salvage") {
      o.read.salvage = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      return UsageError("unknown option '" + arg + "'");
    } else {
      a->inputs.push_back(arg);
    }
  }
  if (Status st = CheckWindow(a->selection); !st.ok()) return UsageError(st.message());
  a->options.read.from = a->selection.from;
  a->options.read.to = a->selection.to;
  a->options.read.aggregate.pids = a->selection.pids;
  a->options.tables.name = a->selection.name;
  if (a->diff && a->inputs.size() != 2) return UsageError("--diff takes two logs: BEFORE AFTER");
  if (a->inputs.empty()) return UsageError("which log? (xtrace report LOG...)");
  return std::nullopt;
}

}  // namespace

int RunReportCommand(int argc, char** argv) {
  Arguments a;
  if (std::optional<int> status = ParseArguments(argc, argv, &a)) return *status;

  std::optional<report::Categories> categories;
  if (!a.categories.empty()) {
    auto loaded = report::Categories::Load(a.categories);
    if (!loaded.ok()) return UsageError(loaded.status().message());
    categories = std::move(*loaded);
    a.options.tables.categories = &*categories;
  }
  auto fail = [&](const Status& st) {
    std::fprintf(stderr, "xtrace report: %s%s\n", st.message().c_str(),
                 a.options.read.salvage ? "" : "; --salvage reports the part before it");
    return kExitError;
  };
  Result<report::Report> built = Status::Error("no logs");
  if (a.diff) {
    auto before = report::ExpandLogInputs({a.inputs[0]});
    if (!before.ok()) return fail(before.status());
    auto after = report::ExpandLogInputs({a.inputs[1]});
    if (!after.ok()) return fail(after.status());
    built = report::BuildDiff(*before, *after, a.options);
  } else {
    auto logs = report::ExpandLogInputs(a.inputs);
    if (!logs.ok()) return fail(logs.status());
    built = report::BuildReport(*logs, a.options);
  }
  if (!built.ok()) return fail(built.status());
  for (const std::string& w : built->warnings) std::fprintf(stderr, "xtrace report: warning: %s\n", w.c_str());

  const std::string text = report::RenderReport(*built, a.format);
  FILE* out = stdout;
  if (!a.output.empty() && a.output != "-") {
    out = std::fopen(a.output.c_str(), "w");
    if (!out) return fail(Status::Error("cannot write " + a.output));
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  const bool closed = out == stdout ? std::fflush(out) == 0 : std::fclose(out) == 0;
  if (!written || !closed) {
    std::fprintf(stderr, "xtrace report: writing %s failed\n", a.output.empty() ? "standard output" : a.output.c_str());
    return kExitError;
  }
  return kExitOk;
}

}  // namespace xtrace
