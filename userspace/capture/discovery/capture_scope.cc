// Capture scope resolution and its user-space side.
#include "capture/discovery/capture_scope.h"

#include <algorithm>
#include <cstring>

#include "capture/discovery/process_owner.h"
#include "capture/discovery/slurm_job.h"

namespace xtrace {

// TASK_COMM_LEN - 1: the kernel keeps this much of a process name.
constexpr size_t kMaxCommChars = 15;

namespace {

// The owner of `pid` if --user does not admit it (it is somebody else's); nullopt otherwise.
std::optional<uid_t> ForeignOwner(const CaptureScope& scope, uint32_t pid) {
  if (!scope.owner) return std::nullopt;
  const auto uids = ReadProcessUids(pid);
  if (!uids) return std::nullopt;  // gone: the capture finds it missing
  for (uid_t uid : {uids->real, uids->effective, uids->saved})
    if (uid != *scope.owner) return uid;
  return std::nullopt;
}

// --slurm-job: its cgroup when Slurm made one, else its processes (the user's, with --user).
Status ResolveSlurmJob(const CaptureOptions& o, CaptureScope& scope) {
  if (Status st = CheckSlurmJobId(o.slurm_job); !st.ok()) return st.WithContext("--slurm-job");
  scope.slurm = {o.slurm_job, o.slurm_node, o.slurm_cluster};
  const SlurmJobOnNode job = FindSlurmJobOnNode(scope.slurm, o.client_pid);
  if (job.pids.empty())
    return Status::Error(
        "no process of " + DescribeSlurmJob(scope.slurm) + " runs on " +
        (o.slurm_node.empty() ? "this node" : "this host") + " (none has SLURM_JOB_ID=" + o.slurm_job +
        (o.slurm_node.empty() ? "" : " and SLURMD_NODENAME=" + o.slurm_node) + " in its environment" +
        (o.slurm_cluster.empty() ? "" : ", with SLURM_CLUSTER_NAME=" + o.slurm_cluster + " or none") + ")");
  std::optional<uid_t> foreign;
  for (uint32_t pid : job.pids) {
    if (auto owner = ForeignOwner(scope, pid)) {
      foreign = foreign.value_or(*owner);
      scope.job_pids_not_the_owners.emplace_back(pid, *owner);
    } else {
      scope.job_pids.push_back(pid);
      if (std::find(job.without_cluster_name.begin(), job.without_cluster_name.end(), pid) !=
          job.without_cluster_name.end())
        scope.job_pids_without_cluster_name.push_back(pid);
    }
  }
  if (scope.job_pids.empty())
    return Status::Error(DescribeSlurmJob(scope.slurm) + " is not yours: its processes on this node "
                         "belong to " + DescribeUser(*foreign) + ", and this capture may cover "
                         "only the processes of " + DescribeUser(*scope.owner));
  if (!job.cgroup_path.empty() && !scope.cgroup) {
    if (auto cg = ResolveCgroup(job.cgroup_path); cg.ok()) {
      scope.cgroup = std::move(*cg);
      scope.job_pids.clear();  // the cgroup selects them, and whatever the job starts later
    }
  }
  return Status::Ok();
}

}  // namespace

Result<CaptureScope> ResolveCaptureScope(const CaptureOptions& o) {
  CaptureScope scope;
  if (!o.user.empty()) {
    auto uid = ResolveUser(o.user);
    if (!uid.ok()) return uid.status().WithContext("--user");
    scope.owner = *uid;
  }
  for (uint32_t pid : o.pids)
    if (auto owner = ForeignOwner(scope, pid))
      return Status::Error("pid " + std::to_string(pid) + " belongs to " + DescribeUser(*owner) +
                           ": this capture may cover only the processes of " +
                           DescribeUser(*scope.owner));
  const bool given = !o.pids.empty() || !o.command.empty() || !o.slurm_job.empty();
  if (!o.cgroup.empty() && !o.container.empty())
    return Status::Error("--cgroup and --container both name a cgroup; give one");
  if (!o.cgroup.empty()) {
    auto cg = ResolveCgroup(o.cgroup);
    if (!cg.ok()) return cg.status();
    scope.cgroup = std::move(*cg);
  }
  if (!o.container.empty()) {
    auto cg = ResolveContainer(o.container);
    if (!cg.ok()) return cg.status();
    scope.cgroup = std::move(*cg);
    scope.container_id = o.container;
  }
  if (!o.comm.empty()) {
    if (o.comm.size() > kMaxCommChars)
      return Status::Error("--comm " + o.comm + ": a process name has at most 15 characters "
                           "(the kernel cuts longer ones; give the first 15)");
    scope.comm = o.comm;
  }
  scope.all_processes = o.system || (scope.cgroup && !given && scope.comm.empty());
  scope.follow_children = o.follow_children.value_or(!o.command.empty() || !o.slurm_job.empty());
  if (!o.slurm_node.empty() && o.slurm_job.empty())
    return Status::Error("--slurm-node narrows --slurm-job; give the job too");
  if (!o.slurm_cluster.empty() && o.slurm_job.empty())
    return Status::Error("--slurm-cluster narrows --slurm-job; give the job too");
  if (!o.slurm_job.empty()) {
    const bool had_cgroup = scope.cgroup.has_value();
    if (Status st = ResolveSlurmJob(o, scope); !st.ok()) return st;
    // Its own cgroup found: the job is every process in it.
    if (!had_cgroup && scope.cgroup && o.pids.empty() && o.command.empty() && scope.comm.empty())
      scope.all_processes = true;
  }
  if (!given && !scope.all_processes && scope.comm.empty())
    return Status::Error("no target: give --pid PID, --system, --comm NAME, --cgroup PATH, "
                         "--container ID, --slurm-job ID or a command");
  return scope;
}

xt_capture_config CaptureScope::ToConfig(const CollectorPidNamespace& ns) const {
  xt_capture_config config{};
  if (all_processes) config.scope |= XT_SCOPE_ALL_PROCESSES;
  if (follow_children) config.scope |= XT_SCOPE_FOLLOW_CHILDREN;
  if (!comm.empty()) {
    config.scope |= XT_SCOPE_COMM;
    std::memcpy(config.comm, comm.data(), std::min(comm.size(), sizeof(config.comm) - 1));
  }
  if (cgroup) config.scope |= XT_SCOPE_CGROUP;
  if (owner) {
    config.scope |= XT_SCOPE_OWNER;
    config.owner_uid = *owner;
  }
  if (ns.level > 0) {
    config.scope |= XT_SCOPE_PID_NAMESPACE;
    config.pidns_level = ns.level;
    config.pidns_inum = ns.inum;
  }
  return config;
}

bool CaptureScope::InCgroup(std::string_view cgroup_path) const {
  return !cgroup || CgroupPathContains(cgroup->path, cgroup_path);
}

bool CaptureScope::SelectsRunning(std::string_view process_comm,
                                  std::string_view cgroup_path) const {
  const bool selected = all_processes || (!comm.empty() && process_comm == comm);
  return selected && InCgroup(cgroup_path);
}

bool CaptureScope::Owns(uint32_t pid) const {
  if (!owner) return true;
  const auto uids = ReadProcessUids(pid);
  return uids && uids->AllAre(*owner);
}

std::string CaptureScope::Describe() const {
  std::string what;
  if (!slurm.job_id.empty()) what = "the processes of " + DescribeSlurmJob(slurm);
  else if (all_processes) what = "every process";
  else if (!comm.empty()) what = "every process named " + comm;
  else what = "the given processes";
  if (follow_children && !all_processes) what += " and their children";
  if (!container_id.empty()) what += " in container " + container_id + " (cgroup " + cgroup->path + ")";
  else if (cgroup) what += " in cgroup " + cgroup->path;
  if (owner) what += " owned by " + DescribeUser(*owner);
  return what;
}

}  // namespace xtrace
