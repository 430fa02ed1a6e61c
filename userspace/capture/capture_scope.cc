// Capture scope resolution and its user-space side.
#include "capture/capture_scope.h"

#include <algorithm>
#include <cstring>

namespace xtrace {

// TASK_COMM_LEN - 1: the kernel keeps this much of a process name.
constexpr size_t kMaxCommChars = 15;

Result<CaptureScope> ResolveCaptureScope(const CaptureOptions& o) {
  CaptureScope scope;
  const bool given = !o.pids.empty() || !o.command.empty();
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
  scope.follow_children = o.follow_children.value_or(!o.command.empty());
  if (!given && !scope.all_processes && scope.comm.empty())
    return Status::Error("no target: give --pid PID, --system, --comm NAME, --cgroup PATH, "
                         "--container ID or a command");
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

std::string CaptureScope::Describe() const {
  std::string what;
  if (all_processes) what = "every process";
  else if (!comm.empty()) what = "every process named " + comm;
  else what = "the given processes";
  if (follow_children && !all_processes) what += " and their children";
  if (!container_id.empty()) what += " in container " + container_id + " (cgroup " + cgroup->path + ")";
  else if (cgroup) what += " in cgroup " + cgroup->path;
  return what;
}

}  // namespace xtrace
