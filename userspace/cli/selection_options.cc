// Parsing the selection options (selection_options.h).
#include "cli/selection_options.h"

#include <cstdio>
#include <ctime>

#include "cli/args.h"

namespace xtrace {
namespace {

constexpr const char* kTimeForms =
    "seconds from the capture start (12.5, +12.5s, 500ms, 2m) or a wall-clock time "
    "(2026-11-23T11:35:12.5Z, ...+01:00, or local time without a zone)";

Status Bad(const std::string& option, const std::string& text, const std::string& expected) {
  return Status::Error(option + ": '" + OneLine(text) + "' is not " + expected);
}

// "YYYY-MM-DD[T ]HH:MM:SS[.frac][Z|+HH:MM|-HH:MM]" -> CLOCK_REALTIME ns.
std::optional<uint64_t> ParseWallClock(const std::string& text) {
  std::tm tm{};
  char sep = 0;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &sep, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 7 ||
      (sep != 'T' && sep != ' ')) {
    return std::nullopt;
  }
  if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
      tm.tm_min > 59 || tm.tm_sec > 60 || tm.tm_year < 1970) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::string rest = text.substr(static_cast<size_t>(consumed));
  uint64_t fraction_ns = 0;
  if (!rest.empty() && rest[0] == '.') {
    size_t digits = 1;
    uint64_t scale = 100000000;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') {
      fraction_ns += static_cast<uint64_t>(rest[digits] - '0') * scale;
      scale /= 10;
      ++digits;
    }
    if (digits == 1) return std::nullopt;
    rest = rest.substr(digits);
  }
  std::time_t seconds = 0;
  if (rest.empty()) {
    tm.tm_isdst = -1;
    seconds = std::mktime(&tm);
  } else if (rest == "Z") {
    seconds = ::timegm(&tm);
  } else {
    int hours = 0, minutes = 0, n = 0;
    if ((rest[0] != '+' && rest[0] != '-') ||
        std::sscanf(rest.c_str() + 1, "%2d:%2d%n", &hours, &minutes, &n) != 2 ||
        static_cast<size_t>(n) + 1 != rest.size() || hours > 23 || minutes > 59) {
      return std::nullopt;
    }
    const long offset = (hours * 60L + minutes) * 60L;
    seconds = ::timegm(&tm) - (rest[0] == '+' ? offset : -offset);
  }
  if (seconds < 0) return std::nullopt;
  return static_cast<uint64_t>(seconds) * 1000000000ull + fraction_ns;
}

}  // namespace

Result<TimeBound> ParseTimeBound(const std::string& option, const std::string& text) {
  if (text.size() > 10 && text[4] == '-' && text[7] == '-') {
    if (auto ns = ParseWallClock(text)) return TimeBound{TimeBound::Kind::kRealtime, *ns};
    return Bad(option, text, kTimeForms);
  }
  std::string since_start = text.starts_with('+') ? text.substr(1) : text;
  if (since_start == "0" || since_start == "0s") return TimeBound{TimeBound::Kind::kSinceStart, 0};
  if (since_start.empty() || since_start[0] == '-' || since_start[0] == '+')
    return Bad(option, text, kTimeForms);
  Result<uint64_t> ns = ParseDuration(option, since_start);
  if (!ns.ok()) return Bad(option, text, kTimeForms);
  return TimeBound{TimeBound::Kind::kSinceStart, *ns};
}

Status ParseWindowBound(const std::string& option, const std::string& text,
                        EventSelection& selection) {
  Result<TimeBound> bound = ParseTimeBound(option, text);
  if (!bound.ok()) return bound.status();
  (option == "--to" ? selection.to : selection.from) = *bound;
  (option == "--to" ? selection.to_text : selection.from_text) = text;
  return Status::Ok();
}

Status ParsePidList(const std::string& option, const std::string& text, EventSelection& selection) {
  for (size_t start = 0; start <= text.size();) {
    const size_t comma = std::min(text.find(',', start), text.size());
    Result<uint32_t> pid = ParsePid(option, text.substr(start, comma - start));
    if (!pid.ok()) return Bad(option, text, "PID[,PID...]");
    selection.pids.insert(*pid);
    start = comma + 1;
  }
  return Status::Ok();
}

Status ParseRankList(const std::string& option, const std::string& text, EventSelection& selection) {
  for (size_t start = 0; start <= text.size();) {
    const size_t comma = std::min(text.find(',', start), text.size());
    Result<uint64_t> rank = ParseCount(option, text.substr(start, comma - start), 0, INT32_MAX);
    if (!rank.ok()) return Bad(option, text, "RANK[,RANK...] (ranks count from 0)");
    selection.ranks.insert(static_cast<int32_t>(*rank));
    start = comma + 1;
  }
  return Status::Ok();
}

Status ParseNamePattern(const std::string& option, const std::string& text,
                        EventSelection& selection) {
  try {
    selection.name = std::regex(text, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return Status::Error(option + ": '" + OneLine(text) + "' is not a regular expression (" +
                         e.what() + ")");
  }
  selection.name_pattern = text;
  return Status::Ok();
}

Status CheckWindow(const EventSelection& selection) {
  if (selection.from && selection.to && selection.from->kind == selection.to->kind &&
      selection.to->ns <= selection.from->ns) {
    return Status::Error("the window is empty: --to must be after --from");
  }
  return Status::Ok();
}

std::string DescribeSelection(const EventSelection& selection) {
  std::string out;
  auto add = [&out](const std::string& option, const std::string& value) {
    out += (out.empty() ? "" : " ") + option + " " + value;
  };
  auto list = [](const auto& values) {
    std::string text;
    for (const auto& v : values) text += (text.empty() ? "" : ",") + std::to_string(v);
    return text;
  };
  if (selection.from) add("--from", selection.from_text);
  if (selection.to) add("--to", selection.to_text);
  if (!selection.pids.empty()) add("--pid", list(selection.pids));
  if (!selection.ranks.empty()) add("--rank", list(selection.ranks));
  if (selection.name) add("--name", "'" + OneLine(selection.name_pattern) + "'");
  return out;
}

OptionTable SelectionOptionTable(EventSelection& selection) {
  auto apply = [&selection](Status (*parse)(const std::string&, const std::string&, EventSelection&)) {
    return [&selection, parse](const std::string& flag, const std::string& value) {
      return parse(flag, value, selection);
    };
  };
  return {
      {0, "--from", "TIME", "SELECTION",
       std::string("only what ends at or after TIME: ") + kTimeForms, apply(ParseWindowBound)},
      {0, "--to", "TIME", "SELECTION", "only what starts before TIME (same forms as --from)",
       apply(ParseWindowBound)},
      {0, "--pid", "PID[,PID...]", "SELECTION", "only these processes (and their device operations)",
       apply(ParsePidList)},
      {0, "--rank", "RANK[,RANK...]", "SELECTION",
       "only processes of these ranks (read from their environment: RANK, PMI_RANK, ...)",
       apply(ParseRankList)},
      {0, "--name", "REGEX", "SELECTION",
       "only kernels, calls, device operations and ITT ranges whose name matches (ECMAScript "
       "regex, searched)",
       apply(ParseNamePattern)},
  };
}

}  // namespace xtrace
