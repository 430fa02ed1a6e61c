// The processes of a Slurm job on this node, for --slurm-job: those whose environment holds
// the job's SLURM_JOB_ID (every task of a job, and what its tasks start, inherit it, whatever
// process tracking the cluster uses), and the job's cgroup v2 when Slurm made one
// (proctrack/cgroup or task/cgroup on a cgroup v2 host: ".../job_42/..."), which then is the
// scope, so that a step started during the capture is in it too.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace xtrace {

struct SlurmJobOnNode {
  std::vector<uint32_t> pids;  // whoever owns them
  std::string cgroup_path;     // "/system.slice/slurmstepd.scope/job_42" if there is one
};

// A job id as Slurm prints it: digits (an array task's own id; "1234_5" is not one).
Status CheckSlurmJobId(const std::string& job_id);

// Whether a /proc/PID/environ text (NUL-separated) sets SLURM_JOB_ID to `job_id` and, when
// `node` is not empty, SLURMD_NODENAME to `node` (the node slurmd started the task as: it
// tells apart the tasks of several slurmd on one host, slurmd -N).
bool EnvironHasSlurmJob(std::string_view environ_text, std::string_view job_id,
                        std::string_view node = {});

// The job's cgroup in a process's cgroup path: the path up to its "job_<id>" component, or ""
// when it has none.
std::string SlurmJobCgroup(std::string_view cgroup_path, std::string_view job_id);

// The processes in /proc that belong to the job, leaving out `skip_pid` (the client asking
// for the capture, which may run inside the job itself); those whose environment cannot be
// read are not counted. With `only_uid`, only the processes whose /proc entry that uid owns
// (their effective uid) are looked at: the environment of nobody else's is read.
SlurmJobOnNode FindSlurmJobOnNode(const std::string& job_id, const std::string& node,
                                  uint32_t skip_pid, std::optional<uid_t> only_uid = std::nullopt);

}  // namespace xtrace
