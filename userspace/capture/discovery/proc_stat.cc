// /proc/PID/stat parsing.
#include "capture/discovery/proc_stat.h"

#include <charconv>

#include "base/read_file.h"

namespace xtrace {
namespace {

// The next space-separated field of `rest`, which loses it; empty at the end.
std::string_view NextField(std::string_view& rest) {
  const size_t start = rest.find_first_not_of(' ');
  if (start == std::string_view::npos) {
    rest = {};
    return {};
  }
  rest.remove_prefix(start);
  const size_t end = rest.find_first_of(" \n");
  const std::string_view field = rest.substr(0, end);
  rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
  return field;
}

template <typename T>
bool ParseNumber(std::string_view field, T& out) {
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), out);
  return ec == std::errc() && end == field.data() + field.size();
}

}  // namespace

std::optional<ProcStat> ParseProcStat(std::string_view text) {
  // "PID (COMM) STATE PPID ..."; COMM is whatever the process named itself, ')' included.
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return std::nullopt;
  ProcStat stat;
  stat.comm = std::string(text.substr(open + 1, close - open - 1));
  std::string_view rest = text.substr(close + 1);
  const std::string_view state = NextField(rest);
  if (state.size() != 1) return std::nullopt;
  stat.state = state[0];
  if (!ParseNumber(NextField(rest), stat.ppid)) return std::nullopt;
  // Of fields 5 to 21 only 9, the flags, is needed; field 22 is the start time.
  for (int field = 5; field < 22; ++field) {
    const std::string_view value = NextField(rest);
    if (value.empty()) return std::nullopt;
    if (field == 9 && !ParseNumber(value, stat.flags)) return std::nullopt;
  }
  if (!ParseNumber(NextField(rest), stat.start_ticks)) return std::nullopt;
  return stat;
}

std::optional<ProcStat> ReadProcStat(uint32_t pid) {
  const std::optional<std::string> text = ReadWholeFile("/proc/" + std::to_string(pid) + "/stat");
  if (!text) return std::nullopt;
  return ParseProcStat(*text);
}

bool ProcessAlive(uint32_t pid) {
  const std::optional<ProcStat> stat = ReadProcStat(pid);
  return stat && stat->alive();
}

}  // namespace xtrace
