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

SlurmJobMatch MatchSlurmJob(std::string_view text, const SlurmJobSelector& job) {
  const std::string job_entry = "SLURM_JOB_ID=" + job.job_id;
  const std::string node_entry = "SLURMD_NODENAME=" + job.node;
  constexpr std::string_view kCluster = "SLURM_CLUSTER_NAME=";
  bool job_found = false, node_found = job.node.empty();
  std::optional<std::string_view> cluster;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\0', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view entry = text.substr(at, end - at);
    job_found = job_found || entry == job_entry;
    node_found = node_found || entry == node_entry;
    if (entry.substr(0, kCluster.size()) == kCluster) cluster = entry.substr(kCluster.size());
    at = end + 1;
  }
  if (!job_found || !node_found) return SlurmJobMatch::kNo;
  if (job.cluster.empty()) return SlurmJobMatch::kYes;
  if (!cluster) return SlurmJobMatch::kWithoutClusterName;
  return *cluster == job.cluster ? SlurmJobMatch::kYes : SlurmJobMatch::kNo;
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

SlurmJobOnNode FindSlurmJobOnNode(const SlurmJobSelector& selector, uint32_t skip_pid,
                                  std::optional<uid_t> only_uid) {
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
    const SlurmJobMatch match = MatchSlurmJob(text.str(), selector);
    if (match == SlurmJobMatch::kNo) continue;
    job.pids.push_back(pid);
    if (match == SlurmJobMatch::kWithoutClusterName) job.without_cluster_name.push_back(pid);
    if (job.cgroup_path.empty())
      job.cgroup_path = SlurmJobCgroup(CgroupPathOfProcess(pid), selector.job_id);
  }
  return job;
}

std::string DescribeSlurmJob(const SlurmJobSelector& job) {
  std::string what = "Slurm job " + job.job_id;
  if (!job.cluster.empty()) what += " of cluster " + job.cluster;
  if (!job.node.empty()) what += " on node " + job.node;
  return what;
}

std::string SlurmJobWithoutClusterNameLine(const SlurmJobSelector& job, const std::string& pids) {
  return "pid " + pids + " of " + DescribeSlurmJob(job) +
         ": no SLURM_CLUSTER_NAME in its environment, taken as the job's by SLURM_JOB_ID" +
         (job.node.empty() ? "" : " and SLURMD_NODENAME") + " alone";
}

}  // namespace xtrace
