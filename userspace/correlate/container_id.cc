// Container ids from cgroup paths.
#include "correlate/container_id.h"

#include <cctype>

namespace xtrace {
namespace {

constexpr size_t kContainerIdLength = 64;

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// A run of exactly 64 hex digits in one path component, or "".
std::string_view IdInComponent(std::string_view component) {
  if (component.find("-conmon-") != std::string_view::npos) return {};
  size_t i = 0;
  while (i < component.size()) {
    if (!IsHex(component[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < component.size() && IsHex(component[end])) ++end;
    if (end - i == kContainerIdLength) return component.substr(i, kContainerIdLength);
    i = end;
  }
  return {};
}

}  // namespace

std::string ContainerIdFromCgroupPath(std::string_view cgroup_path) {
  size_t end = cgroup_path.size();
  while (end > 0) {
    const size_t slash = cgroup_path.rfind('/', end - 1);
    const size_t begin = slash == std::string_view::npos ? 0 : slash + 1;
    const std::string_view id = IdInComponent(cgroup_path.substr(begin, end - begin));
    if (!id.empty()) {
      std::string lower(id);
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return lower;
    }
    if (slash == std::string_view::npos) break;
    end = slash;
  }
  return {};
}

}  // namespace xtrace
