// The processes of a Slurm job on this node, for --slurm-job: those whose environment holds
// the job's SLURM_JOB_ID (every task of a job, and what its tasks start, inherit it, whatever
// process tracking the cluster uses), and the job's cgroup v2 when Slurm made one
// (proctrack/cgroup or task/cgroup on a cgroup v2 host: ".../job_42/..."), which then is the
// scope, so that a step started during the capture is in it too.
//
// A job id is unique within its cluster only: two clusters on one machine (two test clusters,
// or a test cluster beside a real one) may both have a job 42, even on nodes of the same name.
// So a job is named by its cluster too (SLURM_CLUSTER_NAME, which slurmstepd puts in every
// task's environment), and by the node slurmd started the task as (SLURMD_NODENAME).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace xtrace {

// Which job's processes: an empty node or cluster matches any.
struct SlurmJobSelector {
  std::string job_id;   // digits (CheckSlurmJobId)
  std::string node;     // SLURMD_NODENAME: several slurmd on one host (slurmd -N)
  std::string cluster;  // SLURM_CLUSTER_NAME: several clusters on one host
};

enum class SlurmJobMatch {
  kNo,
  kYes,
  // The job id (and node) match, and the process has no SLURM_CLUSTER_NAME at all (a Slurm
  // that does not set it, or a program that cleared its environment): it is taken as the
  // job's by its job id and node alone, and the capture says so.
  kWithoutClusterName,
};

struct SlurmJobOnNode {
  std::vector<uint32_t> pids;                 // whoever owns them
  std::vector<uint32_t> without_cluster_name;  // of `pids`: kWithoutClusterName
  std::string cgroup_path;  // "/system.slice/slurmstepd.scope/job_42" if there is one
};

// A job id as Slurm prints it: digits (an array task's own id; "1234_5" is not one).
Status CheckSlurmJobId(const std::string& job_id);

// Whether a /proc/PID/environ text (NUL-separated) belongs to the selected job: SLURM_JOB_ID
// is its id, SLURMD_NODENAME its node when one is given, and SLURM_CLUSTER_NAME its cluster
// when one is given and the process has that variable (another cluster's name: not the job).
SlurmJobMatch MatchSlurmJob(std::string_view environ_text, const SlurmJobSelector& job);

// The job's cgroup in a process's cgroup path: the path up to its "job_<id>" component, or ""
// when it has none.
std::string SlurmJobCgroup(std::string_view cgroup_path, std::string_view job_id);

// The processes in /proc that belong to the job, leaving out `skip_pid` (the client asking
// for the capture, which may run inside the job itself); those whose environment cannot be
// read are not counted. With `only_uid`, only the processes whose /proc entry that uid owns
// (their effective uid) are looked at: the environment of nobody else's is read.
SlurmJobOnNode FindSlurmJobOnNode(const SlurmJobSelector& job, uint32_t skip_pid,
                                  std::optional<uid_t> only_uid = std::nullopt);

// "Slurm job 42 of cluster c1 on node n1", as far as the selector names it.
std::string DescribeSlurmJob(const SlurmJobSelector& job);

// Said of the processes `pids` ("1234" or "1234, 1240") of `job` taken without the cluster
// name to compare (SlurmJobMatch::kWithoutClusterName).
std::string SlurmJobWithoutClusterNameLine(const SlurmJobSelector& job, const std::string& pids);

}  // namespace xtrace
