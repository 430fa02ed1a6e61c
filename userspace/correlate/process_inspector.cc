// /proc readers for process and thread identity.
#include "correlate/process_inspector.h"

#include "base/read_file.h"
#include "correlate/container_id.h"

#include <sstream>
#include <string>

namespace xtrace {
namespace {

std::optional<std::string> ReadFile(const std::string& path) { return ReadWholeFile(path); }

std::string TrimNewline(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

std::string CgroupPathFromProcFile(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string_view line = text.substr(pos, eol - pos);
    if (line.rfind("0::", 0) == 0) return std::string(line.substr(3));
    pos = eol + 1;
  }
  return {};
}

std::optional<ProcessDetails> ProcfsInspector::Process(uint32_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  auto comm = ReadFile(dir + "/comm");
  if (!comm) return std::nullopt;
  ProcessDetails d;
  d.comm = TrimNewline(*comm);
  if (auto cmdline = ReadFile(dir + "/cmdline")) {
    std::string& c = *cmdline;
    while (!c.empty() && c.back() == '\0') c.pop_back();
    for (char& ch : c)
      if (ch == '\0') ch = ' ';
    d.command_line = c;
  }
  d.ns_pid = pid;
  if (auto status = ReadFile(dir + "/status")) {
    // "NSpid:\t4242\t7" — the last field is the pid in the innermost namespace.
    std::istringstream lines(*status);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("NSpid:", 0) != 0) continue;
      std::istringstream fields(line.substr(6));
      for (uint32_t v; fields >> v;) d.ns_pid = v;
      break;
    }
  }
  if (auto cgroup = ReadFile(dir + "/cgroup")) {
    d.cgroup_path = CgroupPathFromProcFile(*cgroup);
    d.container_id = ContainerIdFromCgroupPath(d.cgroup_path);
  }
  return d;
}

}  // namespace xtrace
