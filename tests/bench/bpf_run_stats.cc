// BPF run-time statistics: BPF_ENABLE_STATS and prog info by id.
#include "bpf_run_stats.h"

#include <bpf/bpf.h>
#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace xtrace::bench {

Result<BpfRunStats> BpfRunStats::Enable() {
  const int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
  if (fd < 0)
    return Status::Error(std::string("enabling BPF run-time statistics: ") + std::strerror(errno));
  return BpfRunStats(UniqueFd(fd));
}

RunTotals BpfRunStats::Read(const std::vector<uint32_t>& program_ids) {
  RunTotals totals;
  for (uint32_t id : program_ids) {
    UniqueFd fd(bpf_prog_get_fd_by_id(id));
    if (!fd.valid()) continue;
    bpf_prog_info info{};
    __u32 len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd.get(), &info, &len) != 0) continue;
    totals.run_time_ns += info.run_time_ns;
    totals.run_count += info.run_cnt;
  }
  return totals;
}

std::vector<uint32_t> ProgramIdsOfProcess(int pid, const std::string& name_prefix) {
  std::vector<uint32_t> ids;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fdinfo";
  DIR* d = opendir(dir.c_str());
  if (!d) return ids;
  while (dirent* e = readdir(d)) {
    std::ifstream in(dir + "/" + e->d_name);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("prog_id:", 0) == 0) ids.push_back(std::stoul(line.substr(8)));
    }
  }
  closedir(d);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::erase_if(ids, [&](uint32_t id) {
    UniqueFd fd(bpf_prog_get_fd_by_id(id));
    bpf_prog_info info{};
    __u32 len = sizeof(info);
    return !fd.valid() || bpf_obj_get_info_by_fd(fd.get(), &info, &len) != 0 ||
           std::string(info.name).rfind(name_prefix, 0) != 0;
  });
  return ids;
}

}  // namespace xtrace::bench
