// Rank identity from a process's environment (process_rank.h).
#include "correlate/process_rank.h"

#include <charconv>
#include <span>
#include <string>

#include "base/read_file.h"

namespace xtrace {

namespace {

// The first of `variables` set in `block` to a decimal value of at least `min`.
std::optional<int32_t> FirstNumber(std::string_view block,
                                   std::span<const std::string_view> variables, int32_t min) {
  for (std::string_view variable : variables) {
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
      int32_t number = -1;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
      if (ec == std::errc() && ptr == value.data() + value.size() && number >= min) return number;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<int32_t> RankFromEnviron(std::string_view block) {
  return FirstNumber(block, kRankVariables, 0);
}

std::optional<int32_t> WorldSizeFromEnviron(std::string_view block) {
  return FirstNumber(block, kWorldSizeVariables, 1);
}

DistributedIdentity ReadDistributedIdentity(uint32_t pid) {
  const std::optional<std::string> block = ReadWholeFile("/proc/" + std::to_string(pid) + "/environ");
  if (!block) return {};
  return {RankFromEnviron(*block), WorldSizeFromEnviron(*block)};
}

}  // namespace xtrace
