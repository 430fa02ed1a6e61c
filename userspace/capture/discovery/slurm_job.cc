// Finding a Slurm job's processes in /proc.
#include "capture/discovery/slurm_job.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "capture/discovery/cgroup.h"

namespace xtrace {

Status CheckSlurmJobId(const std::string& job_id) {
  if (job_id.empty() || job_id.size() > 19 || job_id.find_first_not_of("0123456789") != std::string::npos)
    return Status::Error("'" + job_id + "' is not a Slurm job id (digits, as squeue shows "
                         "them; for an array task give its own job id)");
  return Status::Ok();
}

bool EnvironHasSlurmJob(std::string_view text, std::string_view job_id, std::string_view node) {
  const std::string job = "SLURM_JOB_ID=" + std::string(job_id);
  const std::string node_entry = "SLURMD_NODENAME=" + std::string(node);
  bool job_found = false, node_found = node.empty();
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\0', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view entry = text.substr(at, end - at);
    job_found = job_found || entry == job;
    node_found = node_found || entry == node_entry;
    at = end + 1;
  }
  return job_found && node_found;
}

std::string SlurmJobCgroup(std::string_view path, std::string_view job_id) {
  const std::string component = "/job_" + std::string(job_id);
  for (size_t at = path.find(component); at != std::string_view::npos;
       at = path.find(component, at + 1)) {
    const size_t end = at + component.size();
    if (end == path.size() || path[end] == '/') return std::string(path.substr(0, end));
  }
  return "";
}

SlurmJobOnNode FindSlurmJobOnNode(const std::string& job_id, const std::string& node,
                                  uint32_t skip_pid, std::optional<uid_t> only_uid) {
  SlurmJobOnNode job;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<uint32_t>(std::strtoul(name.c_str(), nullptr, 10));
    if (pid == skip_pid) continue;
    struct stat st {};
    if (only_uid && (::stat(entry.path().c_str(), &st) != 0 || st.st_uid != *only_uid)) continue;
    std::ifstream in(entry.path() / "environ", std::ios::binary);
    if (!in) continue;
    std::stringstream text;
    text << in.rdbuf();
    if (!EnvironHasSlurmJob(text.str(), job_id, node)) continue;
    job.pids.push_back(pid);
    if (job.cgroup_path.empty()) job.cgroup_path = SlurmJobCgroup(CgroupPathOfProcess(pid), job_id);
  }
  return job;
}

}  // namespace xtrace
