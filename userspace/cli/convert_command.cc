// `xtrace convert`: argument parsing, progress and the final report around ConvertLogs
// (export/converter.h), which does the work.
#include "cli/convert_command.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/human_bytes.h"
#include "cli/args.h"
#include "cli/option_table.h"
#include "cli/selection_options.h"
#include "export/converter.h"
#include "log/log_inputs.h"

namespace xtrace {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;

struct Arguments {
  std::vector<std::string> inputs;  // as given (files or directories)
  std::vector<std::string> logs;    // the files they name
  std::string output;
  std::optional<TraceFormat> format;
  bool salvage = false;
  bool quiet = false;
  EventSelection selection;
  uint64_t split_ns = 0;  // --split: one trace per this much of the capture (0: one trace)
};

CommandDoc ConvertDoc() {
  return {
      .command = "convert",
      .usage = {"LOG... [-o OUT] [--format json|perfetto] [SELECTION] [--salvage] [-q]"},
      .description = R"(Converts xtrace event logs into a trace that opens in https://ui.perfetto.dev: Chrome trace
JSON (also chrome://tracing), or a native Perfetto protobuf trace, a sixth of the JSON's size
and far faster to load; OUT ending in .gz is gzip-compressed as it is written. Times are
CLOCK_MONOTONIC (JSON: microseconds with nanosecond decimals).

Several logs, or a directory of them (*.capnp: a daemon's rotated files, one log per rank or
node), make one timeline, merged in time order. Logs of one boot share the clock; logs of
other machines are aligned through their CLOCK_REALTIME readings (as good as the machines'
clock synchronization; the trace's metadata says by how much each moved, under
"clock_alignment"). A process's name carries its rank and, with several machines, its host;
pids of further machines are renumbered apart, the real pid kept in the name.
)",
      .groups = {{"OUTPUT", ""},
                 {"SELECTION", ""},
                 {"DAMAGED LOGS", ""}},
      .notes = R"(A window keeps a span that reaches into it whole (not clipped), an instant inside it, an
arrow (flow) only when both its ends are in it (and none with --name: their other ends are
calls the pattern does not name); each counter starts the window at its last value before it;
processes and threads are named when they have something in the window. The batches of a log
outside the window are skipped without decoding their events. --split makes each part such a
window: a span that crosses from one part into the next is in both.
)",
      .examples = {
          "xtrace convert run.capnp                    # writes run.json",
          "xtrace convert run.capnp -o /tmp/trace.json",
          "xtrace convert run.capnp -o run.pftrace      # Perfetto protobuf",
          "xtrace convert run.capnp -o run.json.gz      # gzip-compressed JSON",
          "xtrace convert run.capnp --from 12.5 --to 17.5 -o five-seconds.pftrace",
          "xtrace convert run.capnp --from 2026-11-23T11:35:00Z --to +600s",
          "xtrace convert run.capnp --pid 4242 --name 'gemm|conv'",
          "xtrace convert day.capnp --split 10m -o day.pftrace  # day.part01.pftrace, ...",
          "xtrace convert rank0.capnp rank1.capnp -o job.pftrace   # one timeline",
          "xtrace convert /var/lib/xtrace --rank 0,1 -o job.pftrace # a daemon's files",
          "xtrace convert killed.capnp --salvage       # keep what a killed capture left",
          "xtrace convert run.capnp -o - | gzip > run.json.gz",
      },
      .exit_status = R"(Exit status: 0 converted (with --salvage also when damage was skipped; a warning says so;
also when the selection left no event of the traced processes: a warning says so, naming the
selection and the processes the logs hold), 1 a log could not be converted (one line on
stderr says why and names the file), 2 bad usage.
)",
  };
}

OptionTable ConvertOptionTable(Arguments& args) {
  return {
      {'o', "--output", "FILE", "OUTPUT",
       "where to write the trace; \"-\" writes to standard output; FILE.gz is gzip-compressed "
       "(default, for one log file: LOG with .capnp replaced by .json, or .pftrace for perfetto)",
       [&args](const std::string&, const std::string& value) {
         args.output = value;
         return Status::Ok();
       }},
      {0, "--format", "FORMAT", "OUTPUT",
       "json (Chrome trace JSON) or perfetto (protobuf); default: perfetto when FILE ends in "
       ".pftrace, .perfetto-trace or .pb (before any .gz), else json",
       [&args](const std::string& flag, const std::string& value) {
         if (value == "json") args.format = TraceFormat::kChromeJson;
         else if (value == "perfetto") args.format = TraceFormat::kPerfetto;
         else return Status::Error(flag + ": '" + value + "' is not json or perfetto");
         return Status::Ok();
       }},
      {0, "--split", "DURATION", "OUTPUT",
       "one trace per DURATION of the capture (300, 90s, 10m, 1h; with --from/--to, of that "
       "window), each of which opens on its own: OUT with .partN before its extension "
       "(day.part01.pftrace, day.part02.pftrace, ...). For a capture too long for one trace to "
       "open in a browser",
       [&args](const std::string& flag, const std::string& value) {
         Result<uint64_t> ns = ParseDuration(flag, value);
         if (!ns.ok()) return ns.status();
         if (*ns == 0) return Status::Error(flag + ": a part must last longer than 0");
         args.split_ns = *ns;
         return Status::Ok();
       }},
      {'q', "--quiet", "", "OUTPUT",
       "no progress and no summary line (errors and warnings still print)", SetTrue(args.quiet)},
      {0, "--salvage", "", "DAMAGED LOGS",
       "convert everything before the first damage (for example the last batch of a capture "
       "that was killed mid-write) and warn about the damage, instead of failing. A log that "
       "merely lacks its summary (the capture did not finish cleanly) converts without "
       "--salvage, with a warning",
       SetTrue(args.salvage)},
  };
}

OptionTable ConvertTable(Arguments& args) {
  return Concat(ConvertOptionTable(args), SelectionOptionTable(args.selection));
}

int UsageError(const std::string& message) { return xtrace::UsageError("convert", message); }

std::string DefaultOutputPath(const std::string& input, TraceFormat format) {
  constexpr std::string_view kLogSuffix = ".capnp";
  const std::string suffix = format == TraceFormat::kPerfetto ? ".pftrace" : ".json";
  if (input.size() > kLogSuffix.size() && input.ends_with(kLogSuffix)) {
    return input.substr(0, input.size() - kLogSuffix.size()) + suffix;
  }
  return input + suffix;
}

// Sizes from which a trace may not open in ui.perfetto.dev in a browser. The page's memory is
// limited (about 2 GB is typical, Perfetto's documentation on large traces says), and what
// the trace becomes there is larger than the file: 2-4 times a protobuf trace's size. A JSON
// trace is parsed from text about six times the size of the same protobuf trace, so it gets
// twice the bytes before the same risk (and JSON traces of 1-2 GB are known to fail).
constexpr uint64_t kLargePerfettoTrace = uint64_t{512} << 20;
constexpr uint64_t kLargeJsonTrace = uint64_t{1} << 30;

// A selection that left nothing of the traced processes, said on one line with what the logs
// hold instead: their processes (with their ranks when they have one) and, for a window, how
// long the logs ran.
std::string NothingSelected(const Arguments& args, const ConvertStats& stats, const std::string& input_name) {
  const std::string output = args.output == "-" ? "the trace" : args.output;
  std::string text = "nothing selected: " + DescribeSelection(args.selection) + " left no event of the traced processes of " +
                     input_name + "; " + output + " holds none of them. " + input_name +
                     (args.logs.size() == 1 ? " holds " : " hold ");
  text += HeldProcessesText(stats.processes);
  if (args.selection.has_window() && stats.logged_ns) {
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%.3f s", static_cast<double>(*stats.logged_ns) / 1e9);
    text += std::string(", over the ") + seconds + " from its start";
  }
  return text + ".";
}

// Returns an exit status when parsing decided the outcome (help, usage error).
std::optional<int> ParseArguments(int argc, char** argv, Arguments* args) {
  auto parsed = ParseCommandLine(ConvertTable(*args), std::span(argv + 1, argc - 1),
                                 Positionals::kAnywhere);
  if (!parsed.ok()) return UsageError(parsed.status().message());
  if (parsed->help) {
    std::fputs(RenderHelp(ConvertDoc(), ConvertTable(*args)).c_str(), stdout);
    return kExitOk;
  }
  if (Status st = CheckWindow(args->selection); !st.ok()) return UsageError(st.message());
  args->inputs = parsed->positionals;
  if (args->inputs.empty()) return UsageError("which log? (xtrace convert LOG.capnp)");
  if (args->output.empty()) {
    std::error_code ec;
    if (args->inputs.size() > 1 || std::filesystem::is_directory(args->inputs[0], ec))
      return UsageError("several logs make one trace: say where it goes (-o FILE)");
    args->output = DefaultOutputPath(args->inputs[0], args->format.value_or(TraceFormat::kChromeJson));
  }
  if (!args->format) args->format = FormatForPath(args->output);
  if (args->output.empty()) return UsageError("the output file name is empty");
  if (args->split_ns && args->output == "-")
    return UsageError("--split writes one file per part: name them with -o FILE, not -");
  if (std::error_code ec; args->split_ns && std::filesystem::exists(args->output, ec) &&
                          !std::filesystem::is_regular_file(args->output, ec))
    return UsageError("--split writes one file per part, named after -o FILE: " + args->output +
                      " is not a regular file");
  for (const std::string& input : args->inputs)
    if (args->output == input) return UsageError("the output would overwrite the input " + input);
  return std::nullopt;
}

// A one-line progress display on a terminal, redrawn at most a few times a second.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  // What the line says before its figures ("part 2 of 12: ").
  void SetLabel(std::string label) { label_ = std::move(label); }
  ~ProgressLine() { Clear(); }

  void Update(uint64_t bytes_read, std::optional<uint64_t> total) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(250)) return;
    last_ = now;
    if (total && *total > 0) {
      std::fprintf(stderr, "\rxtrace convert: %s%3u%% (%s of %s)\033[K", label_.c_str(),
                   static_cast<unsigned>(bytes_read * 100 / *total), HumanBytes(bytes_read).c_str(),
                   HumanBytes(*total).c_str());
    } else {
      std::fprintf(stderr, "\rxtrace convert: %s%s read\033[K", label_.c_str(),
                   HumanBytes(bytes_read).c_str());
    }
    drawn_ = true;
  }

  void Clear() {
    if (drawn_) std::fputs("\r\033[K", stderr);
    drawn_ = false;
  }

 private:
  bool enabled_;
  std::string label_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace

std::string LargeTraceNote(TraceFormat format, uint64_t trace_bytes, const std::string& output) {
  const bool perfetto = format == TraceFormat::kPerfetto;
  if (trace_bytes < (perfetto ? kLargePerfettoTrace : kLargeJsonTrace)) return "";
  const std::string file = output == "-" ? "the trace" : output;
  std::string note = file + " holds " + HumanBytes(trace_bytes) +
                     (output.ends_with(".gz") ? " (uncompressed)" : "") +
                     " of trace: ui.perfetto.dev may fail to open it in a browser, whose memory "
                     "is limited (about 2 GB) and holds a trace at several times its size. ";
  if (!perfetto)
    note += "The Perfetto format (-o FILE.pftrace) holds the same in about a sixth of the bytes; ";
  else
    note += "Perfetto's trace_processor opens it outside the browser (trace_processor --httpd " +
            (output == "-" ? std::string("FILE") : output) + ", then the UI offers to use it); ";
  return note + "or convert it in parts: --split DURATION (one trace per DURATION), --from/--to, "
                "--pid, --rank or --name.";
}

std::string PartPath(const std::string& output, size_t part, size_t parts) {
  const size_t width = std::to_string(std::max<size_t>(parts, 1)).size();
  std::string number = std::to_string(part);
  if (number.size() < width) number.insert(0, width - number.size(), '0');
  std::string stem = output, gz;
  if (stem.size() > 3 && stem.ends_with(".gz")) {
    gz = ".gz";
    stem.resize(stem.size() - 3);
  }
  const size_t slash = stem.rfind('/');
  const size_t dot = stem.rfind('.');
  const bool has_extension = dot != std::string::npos && dot > 0 &&
                             (slash == std::string::npos || dot > slash + 1);
  if (!has_extension) return stem + ".part" + number + gz;
  return stem.substr(0, dot) + ".part" + number + stem.substr(dot) + gz;
}

namespace {

// A time from the trace's start, as a part's bounds are said: as --split and --from take it
// ("90s", "10m00s", "1h05m00s"), to the millisecond when not whole ("16m42.099s").
std::string SinceStart(uint64_t ns) {
  const auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  const uint64_t s = ns / 1'000'000'000, ms = ns % 1'000'000'000 / 1'000'000;
  const bool whole = ns % 1'000'000'000 == 0;
  char secs[24], text[48];
  if (whole) std::snprintf(secs, sizeof(secs), s >= 60 ? "%02llu" : "%llu", u(s % 60));
  else std::snprintf(secs, sizeof(secs), s >= 60 ? "%02llu.%03llu" : "%llu.%03llu", u(s % 60), u(ms));
  if (s >= 3600) std::snprintf(text, sizeof(text), "%lluh%02llum%ss", u(s / 3600), u(s / 60 % 60), secs);
  else if (s >= 60) std::snprintf(text, sizeof(text), "%llum%ss", u(s / 60), secs);
  else std::snprintf(text, sizeof(text), "%ss", secs);
  return text;
}

// --split: the logs measured once, then converted part by part, each a window of its own
// (ConvertLogs reads only the batches that reach into it). A span that crosses from one part
// into the next is in both, whole, as a window keeps it.
int ConvertInParts(const Arguments& args, const std::string& input_name, ConvertOptions options,
                   ProgressLine& progress) {
  for (const std::string& log : args.logs) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(log, ec)) {
      std::fprintf(stderr, "xtrace convert: %s: --split reads the logs once per part: give "
                   "files, not a pipe\n", log.c_str());
      return kExitError;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  Result<LogsExtent> extent = MeasureLogs(args.logs, args.salvage);
  if (!extent.ok()) {
    std::fprintf(stderr, "xtrace convert: %s%s\n", extent.status().message().c_str(),
                 args.salvage ? "" : "; --salvage converts the part before it");
    return kExitError;
  }
  // The span to cut, as ns from the trace's start: the logs' length, within --from/--to.
  const uint64_t origin = extent->start.monotonic_ns;
  const auto since = [&](const TimeBound& b) {
    const uint64_t at = b.Resolve(extent->start);
    return at > origin ? at - origin : 0;
  };
  const uint64_t from = args.selection.from ? since(*args.selection.from) : 0;
  uint64_t to = extent->length_ns + 1;  // the last span starts before its end
  if (args.selection.to) to = std::min(to, since(*args.selection.to));
  const uint64_t parts = to > from ? (to - from + args.split_ns - 1) / args.split_ns : 1;

  uint64_t events_out = 0, bytes = 0, written = 0, empty = 0;
  std::string first_written, last_written;
  // A run of parts that hold nothing of the traced processes (a pause in the job, or the time
  // before it began): not written, and said in one line.
  uint64_t empty_run = 0, empty_run_from = 0;
  const auto say_empty_run = [&](uint64_t next) {
    if (empty_run == 0 || args.quiet) return;
    const uint64_t first = next - empty_run;
    const std::string which = empty_run == 1
                                  ? "part " + std::to_string(first + 1)
                                  : "parts " + std::to_string(first + 1) + "-" + std::to_string(next);
    std::fprintf(stderr,
                 "xtrace convert: %s of %llu (%s to %s from the start): nothing of the traced "
                 "processes, not written\n",
                 which.c_str(), static_cast<unsigned long long>(parts),
                 SinceStart(empty_run_from).c_str(),
                 SinceStart(std::min(from + next * args.split_ns, std::max(to, from + 1))).c_str());
  };
  ConvertStats stats;
  for (uint64_t k = 0; k < parts; ++k) {
    const std::string path = PartPath(args.output, k + 1, parts);
    const uint64_t part_from = from + k * args.split_ns;
    const uint64_t part_to = std::min(part_from + args.split_ns, std::max(to, part_from + 1));
    options.selection.from = TimeBound{TimeBound::Kind::kSinceStart, part_from};
    options.selection.to = TimeBound{TimeBound::Kind::kSinceStart, part_to};
    const std::string label = "part " + std::to_string(k + 1) + " of " + std::to_string(parts);
    progress.SetLabel(label + ": ");
    const Status status = ConvertLogs(args.logs, path, options, &stats);
    progress.Clear();
    if (!status.ok()) {
      std::fprintf(stderr, "xtrace convert: %s: %s%s\n", label.c_str(), status.message().c_str(),
                   stats.damage.empty() ? "" : "; --salvage converts the part before it");
      return kExitError;
    }
    if (k == 0 && stats.salvaged)
      std::fprintf(stderr, "xtrace convert: warning: %s; every part ends before it\n",
                   stats.damage.c_str());
    else if (k == 0 && !stats.complete)
      std::fprintf(stderr,
                   "xtrace convert: warning: %s has no summary: the capture did not finish "
                   "cleanly; its parts hold what it holds\n",
                   input_name.c_str());
    if (stats.selected_kept == 0) {
      std::error_code ec;
      std::filesystem::remove(path, ec);
      if (empty_run++ == 0) empty_run_from = part_from;
      ++empty;
      continue;
    }
    say_empty_run(k);
    empty_run = 0;
    ++written;
    if (first_written.empty()) first_written = path;
    last_written = path;
    events_out += stats.events_out;
    bytes += stats.bytes_written;
    if (!args.quiet)
      std::fprintf(stderr, "xtrace convert: %s (%s to %s from the start) -> %s: %llu trace events, %s\n",
                   label.c_str(), SinceStart(part_from).c_str(), SinceStart(part_to).c_str(),
                   path.c_str(), static_cast<unsigned long long>(stats.events_out),
                   HumanBytes(stats.bytes_written).c_str());
    if (std::string note = LargeTraceNote(options.format, stats.trace_bytes, path); !note.empty())
      std::fprintf(stderr, "xtrace convert: warning: %s\n", note.c_str());
  }
  say_empty_run(parts);
  if (written == 0) {
    std::fprintf(stderr, "xtrace convert: warning: %s\n",
                 args.selection.empty()
                     ? (input_name + " holds nothing of the traced processes: no part written").c_str()
                     : NothingSelected(args, stats, input_name).c_str());
  } else if (!args.quiet) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string files =
        written == 1 ? first_written : first_written + " ... " + last_written;
    const std::string skipped =
        empty == 0 ? "" : "; " + std::to_string(empty) + " with nothing of the traced processes not written";
    std::fprintf(stderr,
                 "xtrace convert: %s -> %llu of %llu parts of %s (%s%s): %llu trace events, %s in "
                 "all, in %.2f s\n",
                 input_name.c_str(), static_cast<unsigned long long>(written),
                 static_cast<unsigned long long>(parts), SinceStart(args.split_ns).c_str(),
                 files.c_str(), skipped.c_str(), static_cast<unsigned long long>(events_out),
                 HumanBytes(bytes).c_str(), seconds);
  }
  return kExitOk;
}

}  // namespace

int RunConvertCommand(int argc, char** argv) {
  Arguments args;
  if (std::optional<int> exit_status = ParseArguments(argc, argv, &args)) return *exit_status;

  Result<std::vector<std::string>> logs = ExpandLogInputs(args.inputs);
  if (!logs.ok()) {
    std::fprintf(stderr, "xtrace convert: %s\n", logs.status().message().c_str());
    return kExitError;
  }
  args.logs = std::move(*logs);
  const std::string input_name =
      args.logs.size() == 1 ? args.logs[0] : std::to_string(args.logs.size()) + " logs";

  ProgressLine progress(!args.quiet && ::isatty(STDERR_FILENO));
  ConvertOptions options;
  options.salvage = args.salvage;
  options.format = *args.format;
  options.selection = args.selection;
  options.progress = [&](uint64_t bytes_read, std::optional<uint64_t> total) {
    progress.Update(bytes_read, total);
  };

  if (args.split_ns) return ConvertInParts(args, input_name, options, progress);

  const auto start = std::chrono::steady_clock::now();
  ConvertStats stats;
  const Status status = ConvertLogs(args.logs, args.output, options, &stats);
  progress.Clear();
  if (!status.ok()) {
    std::fprintf(stderr, "xtrace convert: %s%s\n", status.message().c_str(),
                 stats.damage.empty() ? "" : "; --salvage converts the part before it");
    return kExitError;
  }

  if (stats.salvaged) {
    std::fprintf(stderr, "xtrace convert: warning: %s; converted the %llu events before it\n",
                 stats.damage.c_str(), static_cast<unsigned long long>(stats.events_in));
  } else if (!stats.complete) {
    std::fprintf(stderr,
                 "xtrace convert: warning: %s has no summary: the capture did not finish "
                 "cleanly; converted the %llu events it holds\n",
                 input_name.c_str(), static_cast<unsigned long long>(stats.events_in));
  }
  // Not an error, as for `xtrace report`: the logs were read and the trace is what the
  // selection asked for; the warning says it is empty and what there was.
  if (!args.selection.empty() && stats.selected_kept == 0)
    std::fprintf(stderr, "xtrace convert: warning: %s\n", NothingSelected(args, stats, input_name).c_str());
  if (!args.quiet) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::string skipped;
    if (stats.batches_skipped > 0) {
      skipped = " (" + std::to_string(stats.batches_skipped) + " of " +
                std::to_string(stats.batches_in) + " batches outside the window skipped)";
    }
    std::fprintf(stderr,
                 "xtrace convert: %s -> %s: %llu log events%s, %llu trace events, %s in %.2f s\n",
                 input_name.c_str(), args.output == "-" ? "standard output" : args.output.c_str(),
                 static_cast<unsigned long long>(stats.events_in), skipped.c_str(),
                 static_cast<unsigned long long>(stats.events_out),
                 HumanBytes(stats.bytes_written).c_str(), seconds);
  }
  // Said with -q too: a trace that will not open is as much a problem as a damaged log.
  if (const std::string note = LargeTraceNote(options.format, stats.trace_bytes, args.output);
      !note.empty())
    std::fprintf(stderr, "xtrace convert: warning: %s\n", note.c_str());
  return kExitOk;
}

}  // namespace xtrace
