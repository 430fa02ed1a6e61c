// Parsing a command line through an option table, and rendering its --help.
#include "cli/option_table.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace xtrace {
namespace {

// --help layout: flags from column 2, help text from column 25, lines up to 95 characters
// (what fits a default 100-column terminal with room for a pager's margin).
constexpr size_t kHelpColumn = 25;
constexpr size_t kLineWidth = 95;

std::string FlagText(const Option& o) {
  std::string text = o.short_flag ? std::string("  -") + o.short_flag + ", " : "      ";
  text += o.long_flag;
  if (!o.value_name.empty()) text += " " + o.value_name;
  return text;
}

// `text` word-wrapped to kLineWidth, every line indented to kHelpColumn.
std::string WrapHelp(const std::string& text) {
  std::istringstream words(text);
  std::string out, line, word;
  const std::string indent(kHelpColumn, ' ');
  while (words >> word) {
    if (!line.empty() && kHelpColumn + line.size() + 1 + word.size() > kLineWidth) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += indent + line + "\n";
  return out;
}

std::string OptionHelp(const Option& o) {
  const std::string flags = FlagText(o);
  std::string help = WrapHelp(o.help);
  if (help.empty()) return flags + "\n";
  // The first help line goes beside the flags when they leave room for it.
  if (flags.size() + 1 <= kHelpColumn) return flags + help.substr(flags.size());
  return flags + "\n" + help;
}

const Option* Find(const OptionTable& table, const std::string& arg) {
  for (const Option& o : table) {
    if (arg == o.long_flag) return &o;
    if (o.short_flag && arg.size() == 2 && arg[0] == '-' && arg[1] == o.short_flag) return &o;
  }
  return nullptr;
}

bool IsOption(const std::string& arg) { return arg.size() > 1 && arg[0] == '-'; }

}  // namespace

ApplyOption SetTrue(bool& into) {
  return [&into](const std::string&, const std::string&) { return into = true, Status::Ok(); };
}

OptionTable Concat(OptionTable a, const OptionTable& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string RenderHelp(const CommandDoc& doc, const OptionTable& table) {
  std::string out;
  for (size_t i = 0; i < doc.usage.size(); ++i)
    out += std::string(i ? "       " : "Usage: ") + "xtrace " + doc.command + " " + doc.usage[i] + "\n";
  out += "\n" + doc.description;

  std::vector<HelpGroup> groups = doc.groups;
  for (const Option& o : table) {
    auto named = [&](const HelpGroup& g) { return g.name == o.group; };
    if (std::none_of(groups.begin(), groups.end(), named)) groups.push_back({o.group, ""});
  }
  for (const HelpGroup& g : groups) {
    std::string options;
    for (const Option& o : table)
      if (o.group == g.name) options += OptionHelp(o);
    if (options.empty()) continue;
    out += "\n" + g.name + (g.note.empty() ? "" : " (" + g.note + ")") + "\n" + options;
  }
  out += "  -h, --help             this help\n";

  if (!doc.notes.empty()) out += "\n" + doc.notes;
  if (!doc.examples.empty()) {
    out += "\nExamples:\n";
    for (const std::string& e : doc.examples) out += "  " + e + "\n";
  }
  if (!doc.exit_status.empty()) out += "\n" + doc.exit_status;
  return out;
}

Result<ParsedCommandLine> ParseCommandLine(const OptionTable& table,
                                           std::span<char* const> args, Positionals positionals) {
  ParsedCommandLine parsed;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (!IsOption(arg)) {
      if (positionals == Positionals::kEndOptions) break;
      parsed.positionals.push_back(arg);
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      parsed.help = true;
      return parsed;
    }
    std::optional<std::string> inline_value;  // --flag=value
    if (const size_t eq = arg.find('='); arg.starts_with("--") && eq != std::string::npos) {
      inline_value = arg.substr(eq + 1);
      arg.resize(eq);
    }
    const Option* option = Find(table, arg);
    if (!option) return Status::Error("unknown option '" + arg + "'");
    std::string value;
    if (option->value_name.empty()) {
      if (inline_value) return Status::Error(arg + " takes no value (got '" + *inline_value + "')");
    } else if (inline_value) {
      value = *inline_value;
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return Status::Error(arg + " needs a value (" + option->value_name + ")");
    }
    if (Status st = option->apply(arg, value); !st.ok()) return st;
  }
  for (; i < args.size(); ++i) parsed.positionals.emplace_back(args[i]);
  return parsed;
}

std::string OneLine(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (u < 0x20 || u == 0x7f) {
      char esc[8];
      std::snprintf(esc, sizeof(esc), "\\x%02x", u);
      out += esc;
    } else {
      out += c;
    }
  }
  return out;
}

int UsageError(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "xtrace %s: %s\nTry 'xtrace %s --help'.\n", command.c_str(),
               OneLine(message).c_str(), command.c_str());
  return 2;
}

}  // namespace xtrace
