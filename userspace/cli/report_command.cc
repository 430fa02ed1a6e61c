// `xtrace report`: argument parsing around report/report_builder.h, which does the work.
#include "cli/report_command.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/option_table.h"
#include "cli/selection_options.h"
#include "model/python_event.h"
#include "report/categories.h"
#include "report/python_lines.h"
#include "report/report_builder.h"

namespace xtrace {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;

CommandDoc ReportDoc() {
  return {
      .command = "report",
      .usage = {"LOG... [options]", "--diff BEFORE AFTER [options]"},
      .description = R"(Tables from event logs, without a browser: which API calls and kernels take the time, and why
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
  engines, gaps   per engine (named by device, engine group type and ordinal.index, e.g.
                  "GPU 0 compute 0.1"): busy %, idle split into launch (nothing submitted:
                  the host was late), sync (the host first waited for the previous
                  operation), waiting (submitted, not started) and unknown; verdict
                  launch-bound / sync-bound from the measured part, with the share of the
                  span that was estimated; launch latency p50/p95/p99; the largest gaps and
                  what the submitting thread was doing in them
  xtrace's holds  a capture that attached mid-run held threads to ask about objects made
                  before the attach, and a capture holds whole processes as they exec, load
                  libraries or take Level Zero tables, until they are probed; the log has
                  each hold: that time is left out of the calls', ranges' and threads'
                  times, an engine's idle time under it is a cause of its own (Idle:
                  xtrace; a gap's cause: held by xtrace), and a warning says how long
                  xtrace held them in all, and why
)",
      .groups = {{"OUTPUT", ""}, {"SELECTION", ""}, {"DIFF", ""}, {"DAMAGED LOGS", ""}},
      .notes = R"(Kernel names are shown demangled (a SYCL kernel as its type, as unitrace and the PyTorch
profiler show them). Text fits the terminal's width (COLUMNS, else the terminal's own): long
names are cut keeping the part that tells them apart, the cut marked with an ellipsis, and a
table still too wide is split into parts that each repeat its first columns (the name; pid
and engine), the later parts titled (continued); no column is left out. Text written to a
pipe or a file keeps every table whole, in one part, when COLUMNS is not set (programs and
"less -S" read it; names cut would lose what they search for), and so does --wide anywhere;
CSV and JSON are always whole.
)",
      .examples = {
          "xtrace report run.capnp",
          "xtrace report run.capnp --top 10 --sort average",
          "xtrace report rank*.capnp --by rank              # one section per rank",
          "xtrace report rank*.capnp --rank 3               # only the processes of rank 3",
          "xtrace report /var/lib/xtrace --from 60 --to 120 # a daemon's files, one minute of them",
          "xtrace report run.capnp --format json -o report.json",
          "xtrace report run.capnp --name 'gemm|conv' --categories kernels.txt",
          "xtrace report --diff before.capnp after.capnp --top 20",
          "xtrace report run.capnp --wide --mangled | less -S  # names whole, as captured",
          "xtrace report train.capnp --by python --top 20  # which lines of the model use the GPU",
      },
      .exit_status = "Exit status: 0 reported (also when nothing is in the selection: the text says "
                     "so),\n1 a log could not be read (one line on stderr says why), 2 bad usage.\n",
  };
}

// Applies `choices[value]`, or says which values there are.
template <typename T>
ApplyOption OneOf(T& into, std::vector<std::pair<std::string, T>> choices, std::string expected) {
  return [&into, choices = std::move(choices), expected = std::move(expected)](
             const std::string& flag, const std::string& value) {
    for (const auto& [name, choice] : choices) {
      if (name == value) return into = choice, Status::Ok();
    }
    return Status::Error(flag + ": expected " + expected + ", got '" + value + "'");
  };
}

ApplyOption Selection(EventSelection& selection,
                      Status (*parse)(const std::string&, const std::string&, EventSelection&)) {
  return [&selection, parse](const std::string& flag, const std::string& value) {
    return parse(flag, value, selection);
  };
}

OptionTable ReportOptionTable(ReportArguments& a) {
  using report::GroupBy;
  using report::OutputFormat;
  using report::SortKey;
  report::ReportOptions& o = a.options;
  return {
      {0, "--format", "F", "OUTPUT", "text (default), csv or json (schema: docs/report-json.md)",
       OneOf(a.format,
             {{"text", OutputFormat::kText}, {"csv", OutputFormat::kCsv}, {"json", OutputFormat::kJson}},
             "text, csv or json")},
      {'o', "--output", "FILE", "OUTPUT", "write there instead of standard output",
       [&a](const std::string&, const std::string& value) { return a.output = value, Status::Ok(); }},
      {0, "--by", "KEY", "OUTPUT",
       "one section per process, thread, device, rank or host; or python: one table of device "
       "time, device operations and launches per line of the Python code that made them (the "
       "innermost frame outside library code; needs a capture with Python frames, the default)",
       [&a, by = OneOf(o.read.aggregate.by,
                       {{"process", GroupBy::kProcess},
                        {"thread", GroupBy::kThread},
                        {"device", GroupBy::kDevice},
                        {"rank", GroupBy::kRank},
                        {"host", GroupBy::kHost}},
                       "process, thread, device, rank, host or python")](
           const std::string& flag, const std::string& value) {
         if (value == "python") return a.by_python = true, Status::Ok();
         return by(flag, value);
       }},
      {0, "--python-skip", "TEXT", "OUTPUT",
       "with --by python: frames whose file contains TEXT are library code, skipped for the "
       "frame that called into them (repeatable; default torch/; \"\" to skip none)",
       [&a](const std::string&, const std::string& value) {
         if (!a.python_skips) a.python_skips.emplace();
         if (!value.empty()) a.python_skips->push_back(value);
         return Status::Ok();
       }},
      {0, "--sort", "KEY", "OUTPUT", "total (default), calls, average, max or name",
       OneOf(o.tables.sort,
             {{"total", SortKey::kTotal},
              {"calls", SortKey::kCalls},
              {"average", SortKey::kAverage},
              {"max", SortKey::kMax},
              {"name", SortKey::kName}},
             "total, calls, average, max or name")},
      {0, "--top", "N", "OUTPUT", "rows per table (default: all)",
       StoreParsed(o.tables.top, [](const std::string& flag, const std::string& value) {
         return ParseCount(flag, value, 1, UINT32_MAX);
       })},
      {0, "--gaps", "N", "OUTPUT", "largest gaps kept per engine (default 5)",
       StoreParsed(o.read.aggregate.top_gaps, [](const std::string& flag, const std::string& value) {
         return ParseCount(flag, value, 0, UINT32_MAX);
       })},
      {0, "--categories", "FILE", "OUTPUT",
       "group names by rules, one per line: CATEGORY MATCH PATTERN with MATCH equals, "
       "starts-with, ends-with or regex; the first match wins, the rest is \"other\". Adds a "
       "category column and per-category tables.",
       [&a](const std::string&, const std::string& value) { return a.categories = value, Status::Ok(); }},
      {0, "--wide", "", "OUTPUT",
       "text at full width: names whole and each table in one part, however wide the terminal",
       SetTrue(a.wide)},
      {0, "--mangled", "", "OUTPUT", "kernel names as captured, not demangled",
       SetTrue(o.tables.mangled)},

      {0, "--from", "T", "SELECTION",
       "only events that start in this window (with --to): T is seconds from the capture start "
       "(12.5, +12.5s, 500ms, 2m) or a wall-clock time (2026-11-23T11:35:12.5Z, ...+01:00, or "
       "local time without a zone)",
       Selection(a.selection, ParseWindowBound)},
      {0, "--to", "T", "SELECTION", "the window's end (same forms as --from)",
       Selection(a.selection, ParseWindowBound)},
      {0, "--pid", "PID[,PID...]", "SELECTION", "only these processes",
       Selection(a.selection, ParsePidList)},
      {0, "--rank", "R[,R...]", "SELECTION",
       "only the processes of these ranks (from their environment: Slurm, Open MPI, MPICH, "
       "PMI)",
       Selection(a.selection, ParseRankList)},
      {0, "--name", "REGEX", "SELECTION", "only rows whose name matches (ECMAScript regex, searched)",
       Selection(a.selection, ParseNamePattern)},

      {0, "--diff", "", "DIFF",
       "compare two sets of logs, BEFORE and AFTER (each a log or a directory): per kernel and "
       "API function, the change of calls, total and average",
       SetTrue(a.diff)},
      {0, "--salvage", "", "DAMAGED LOGS",
       "report everything before the first damage, with a warning, instead of failing",
       SetTrue(o.read.salvage)},
  };
}

int UsageError(const std::string& message) { return xtrace::UsageError("report", message); }

// The width text tables are fitted to: COLUMNS when set (what a shell tells programs, and the
// way to ask for another width), else the terminal's when the text goes to standard output
// and that is a terminal; 0 (full width) for a pipe or a file (-o), which programs and pagers
// read whole.
size_t TerminalWidth(bool to_stdout) {
  if (const char* columns = std::getenv("COLUMNS"); columns && *columns) {
    char* end = nullptr;
    const unsigned long value = std::strtoul(columns, &end, 10);
    if (*end == '\0' && value > 0) return value;
  }
  winsize size{};
  if (to_stdout && isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0) return size.ws_col;
  return 0;
}

}  // namespace

Result<ReportCommandLine> ParseReportCommandLine(std::span<char* const> args) {
  ReportCommandLine line;
  ReportArguments& a = line.arguments;
  auto parsed = ParseCommandLine(ReportOptionTable(a), args, Positionals::kAnywhere);
  if (!parsed.ok()) return parsed.status();
  if (parsed->help) return line.help = true, line;
  if (Status st = CheckWindow(a.selection); !st.ok()) return st;
  a.inputs = parsed->positionals;
  a.options.read.from = a.selection.from;
  a.options.read.to = a.selection.to;
  a.options.read.aggregate.pids = a.selection.pids;
  a.options.read.aggregate.ranks = a.selection.ranks;
  a.options.tables.name = a.selection.name;
  if (a.diff && a.inputs.size() != 2) return Status::Error("--diff takes two logs: BEFORE AFTER");
  if (a.inputs.empty()) return Status::Error("which log? (xtrace report LOG...)");
  if (a.python_skips && !a.by_python) return Status::Error("--python-skip goes with --by python");
  if (a.by_python && a.diff) return Status::Error("--by python and --diff exclude each other");
  return line;
}

std::string ReportCommandHelp() {
  ReportArguments unused;
  return RenderHelp(ReportDoc(), ReportOptionTable(unused));
}

std::string NothingToReport(const ReportArguments& a, const report::Report& report) {
  const std::string logs = a.inputs.size() == 1 ? a.inputs[0] : std::to_string(a.inputs.size()) + " inputs";
  const std::string what = a.by_python ? "no Python line" : "no call, device operation or range";
  // What the logs hold instead, as convert says it: the processes a selection could keep.
  if (!a.selection.empty())
    return "Nothing to report: " + what + " of " + logs + " is in the selection (" +
           DescribeSelection(a.selection) + "). " + logs + (a.inputs.size() == 1 ? " holds " : " hold ") +
           HeldProcessesText(report.processes) + ".";
  if (a.by_python)
    return "Nothing to report: no traced call of " + logs +
           " carries Python frames (no CPython process was traced, or the capture ran with "
           "--no-python-frames).";
  return "Nothing to report: " + logs + (a.inputs.size() == 1 ? " holds" : " hold") +
         " no calls, device operations or ranges.";
}

int RunReportCommand(int argc, char** argv) {
  auto line = ParseReportCommandLine(std::span(argv + 1, argc - 1));
  if (!line.ok()) return UsageError(line.status().message());
  if (line->help) {
    std::fputs(ReportCommandHelp().c_str(), stdout);
    return kExitOk;
  }
  ReportArguments& a = line->arguments;

  std::optional<report::Categories> categories;
  if (!a.categories.empty()) {
    auto loaded = report::Categories::Load(a.categories);
    if (!loaded.ok()) return UsageError(loaded.status().message());
    categories = std::move(*loaded);
    a.options.tables.categories = &*categories;
  }
  // The readers' messages name the file; a damaged log's says that --salvage helps.
  auto fail = [&](const Status& st) {
    std::fprintf(stderr, "xtrace report: %s\n", st.message().c_str());
    return kExitError;
  };
  Result<report::Report> built = Status::Error("no logs");
  if (a.diff) {
    auto before = report::ExpandLogInputs({a.inputs[0]});
    if (!before.ok()) return fail(before.status());
    auto after = report::ExpandLogInputs({a.inputs[1]});
    if (!after.ok()) return fail(after.status());
    built = report::BuildDiff(*before, *after, a.options);
  } else if (a.by_python) {
    auto logs = report::ExpandLogInputs(a.inputs);
    if (!logs.ok()) return fail(logs.status());
    report::PythonLinesOptions python;
    python.skips = a.python_skips.value_or(DefaultPythonSkips());
    python.top = a.options.tables.top;
    python.read = a.options.read;
    python.name = a.options.tables.name;
    built = report::PythonLinesReport(*logs, python);
  } else {
    auto logs = report::ExpandLogInputs(a.inputs);
    if (!logs.ok()) return fail(logs.status());
    built = report::BuildReport(*logs, a.options);
  }
  if (!built.ok()) return fail(built.status());
  for (const std::string& w : built->warnings) std::fprintf(stderr, "xtrace report: warning: %s\n", w.c_str());

  std::string text = report::RenderReport(*built, a.format, {.width = a.wide ? 0 : TerminalWidth(a.output.empty() || a.output == "-")});
  // Text says it in place of the tables, which would be nothing at all. CSV and JSON keep
  // their shape (no rows) for the programs that read them; the person who ran the command is
  // told on standard error.
  if (!built->HasRows()) {
    if (a.format == report::OutputFormat::kText)
      text += (text.empty() ? "" : "\n") + NothingToReport(a, *built) + "\n";
    else if (a.format != report::OutputFormat::kText)
      std::fprintf(stderr, "xtrace report: warning: %s\n", NothingToReport(a, *built).c_str());
  }
  FILE* out = stdout;
  if (!a.output.empty() && a.output != "-") {
    out = std::fopen(a.output.c_str(), "w");
    if (!out) return fail(Status::Error(a.output + ": cannot create: " + std::strerror(errno)));
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
