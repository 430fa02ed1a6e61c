// One table of command-line options (flag, value name, group, help, apply) from which every
// command's parser and its --help are both built, so that no command lists a flag by hand and
// the help cannot drift from what is parsed. A command's table is the concatenation of the
// tables it accepts (e.g. attach = the capture options + the local output options).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace xtrace {

struct Option {
  char short_flag = 0;     // 'p' for -p; 0 when there is none
  std::string long_flag;   // "--pid"
  std::string value_name;  // "PID"; empty for a switch
  std::string group;       // the --help section it is listed under: "TARGET", "OUTPUT", ...
  std::string help;        // one paragraph; the help renderer wraps it
  // Applies the option. `flag` is the spelling the user typed (for errors), `value` its value
  // ("" for a switch). Errors name the option and the value: "--pid: 'x' is not a process id".
  std::function<Status(const std::string& flag, const std::string& value)> apply;
};

using OptionTable = std::vector<Option>;
using ApplyOption = decltype(Option::apply);

// Apply functions of the common kinds of option.
// A switch that sets `into`.
ApplyOption SetTrue(bool& into);
// A value parsed by `parse` (e.g. ParseDuration from cli/args.h), stored into `into`.
template <typename T, typename Parse>
ApplyOption StoreParsed(T& into, Parse parse) {
  return [&into, parse](const std::string& flag, const std::string& value) {
    auto parsed = parse(flag, value);
    if (!parsed.ok()) return parsed.status();
    into = static_cast<T>(*parsed);
    return Status::Ok();
  };
}

// `a` followed by `b`: a command accepts several tables.
OptionTable Concat(OptionTable a, const OptionTable& b);

// A --help section heading and the note printed after it.
struct HelpGroup {
  std::string name;
  std::string note;
};

// Everything in a command's --help besides its options.
struct CommandDoc {
  std::string command;              // "attach", "ctl": for "Usage: xtrace attach ..."
  std::vector<std::string> usage;   // what follows "xtrace COMMAND" on each usage line
  std::string description;          // paragraphs, wrapped as they are to be printed
  std::vector<HelpGroup> groups;    // section order and notes; other groups follow in table order
  std::string notes;                // after the options, before the examples (may be empty)
  std::vector<std::string> examples;
  std::string exit_status;          // "Exit status: ..." paragraph
};

// The whole --help text: usage lines, description, every option of `table` in its group,
// notes, examples, exit status.
std::string RenderHelp(const CommandDoc& doc, const OptionTable& table);

// Where a command's non-option arguments may be.
enum class Positionals {
  kAnywhere,   // between options too (convert IN -o OUT); "--" makes the rest positional
  kEndOptions, // the first one ends the options and it and every later one is positional
               // (record COMMAND ARG..., ctl VERB ...); so does "--"
};

struct ParsedCommandLine {
  bool help = false;                     // -h or --help was given: print the help, run nothing
  std::vector<std::string> positionals;  // in order
};

// Applies every option in `args` (argv without the command name) through `table`. Accepts
// "-p V", "--pid V" and "--pid=V". The error is one line naming the option and the value:
// "unknown option '--frobnicate'", "--pid needs a value (PID)", "--pid: 'x' is not a process id".
Result<ParsedCommandLine> ParseCommandLine(const OptionTable& table,
                                           std::span<char* const> args, Positionals positionals);

// Prints "xtrace COMMAND: MESSAGE" and a pointer to its --help on stderr; returns 2, the exit
// status of every usage error.
int UsageError(const std::string& command, const std::string& message);

// `text` with its control characters written as escapes (\n, \t, \x1b, ...), so that a usage
// error quoting what the user typed stays one line on the terminal.
std::string OneLine(std::string_view text);

}  // namespace xtrace
