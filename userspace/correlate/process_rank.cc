// Rank identity from a process's environment (process_rank.h).
#include "correlate/process_rank.h"

#include <charconv>
#include <string>

#include "base/read_file.h"

namespace xtrace {

std::optional<int32_t> RankFromEnviron(std::string_view block) {
  for (std::string_view variable : kRankVariables) {
    std::string_view rest = block;
    while (!rest.empty()) {
      const size_t end = rest.find('\0');
      const std::string_view entry = rest.substr(0, end);
      rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
      if (entry.size() <= variable.size() || !entry.starts_with(variable) ||
          entry[variable.size()] != '=') {
        continue;
      }
      const std::string_view value = entry.substr(variable.size() + 1);
      int32_t rank = -1;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), rank);
      if (ec == std::errc() && ptr == value.data() + value.size() && rank >= 0) return rank;
    }
  }
  return std::nullopt;
}

std::optional<int32_t> ReadProcessRank(uint32_t pid) {
  const std::optional<std::string> block = ReadWholeFile("/proc/" + std::to_string(pid) + "/environ");
  if (!block) return std::nullopt;
  return RankFromEnviron(*block);
}

}  // namespace xtrace
