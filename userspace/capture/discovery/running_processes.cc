// Finding the running processes a capture's scope selects.
#include "capture/discovery/running_processes.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "capture/discovery/cgroup.h"
#include "capture/discovery/proc_stat.h"
#include "correlate/process_inspector.h"

namespace xtrace {
namespace {

std::vector<uint32_t> ListProcesses() {
  std::vector<uint32_t> pids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    pids.push_back(static_cast<uint32_t>(std::strtoul(name.c_str(), nullptr, 10)));
  }
  return pids;
}

}  // namespace

std::vector<uint32_t> SelectRunningProcesses(const CaptureScope& scope,
                                             const std::set<uint32_t>& followed,
                                             uint32_t self_pid,
                                             std::vector<uint32_t>* not_the_owners) {
  std::vector<uint32_t> selected_pids;
  if (!scope.discovers()) return selected_pids;
  const std::vector<uint32_t> all = ListProcesses();
  std::map<uint32_t, uint32_t> parent;
  if (scope.follow_children)
    for (uint32_t pid : all) {
      const std::optional<ProcStat> stat = ReadProcStat(pid);
      parent[pid] = stat ? stat->ppid : 0;
    }
  for (uint32_t pid : all) {
    if (pid == self_pid || followed.count(pid)) continue;
    bool selected = false, descends = false;
    if (scope.follow_children) {
      for (uint32_t p = parent[pid], hops = 0; p > 1 && hops < 64; p = parent[p], ++hops)
        if (followed.count(p)) selected = descends = true;
    }
    if (!selected && (scope.all_processes || !scope.comm.empty())) {
      auto details = ProcfsInspector().Process(pid);
      if (!details) continue;
      selected = scope.SelectsRunning(details->comm, details->cgroup_path);
    }
    if (!selected || !scope.InCgroup(CgroupPathOfProcess(pid))) continue;
    if (scope.Owns(pid)) selected_pids.push_back(pid);
    else if (descends && not_the_owners) not_the_owners->push_back(pid);
  }
  return selected_pids;
}

}  // namespace xtrace
