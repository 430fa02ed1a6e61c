// What a capture targets, resolved before anything is loaded: the rule every BPF probe applies
// (include/xtrace/capture_config.h), and the same rule in user space for the processes that
// were running before the capture began.
//
// How targets combine: --pid and the command are traced as given, and their new children
// too with --follow-children; --system selects every process; --comm selects processes by
// name; --cgroup and --container narrow all of that to one cgroup subtree (given alone, they
// select every process in it); --slurm-job selects a job's processes on this node (its cgroup
// if Slurm made one, else the processes with its SLURM_JOB_ID and their children). --user
// narrows everything to the processes whose real, effective and saved uid are the user's:
// the daemon sets it for a client that is neither root nor in its --group, and checks it
// for every process, the running ones here and every later one in BPF. A collector in a pid
// namespace of its own (a pod sidecar with shareProcessNamespace) only ever sees, and
// traces, processes of that namespace.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "base/status.h"
#include "base/unique_fd.h"
#include "capture/capture_options.h"
#include "capture/discovery/cgroup.h"
#include "capture/discovery/process_watcher.h"
#include "capture/discovery/slurm_job.h"
#include "xtrace/capture_config.h"

namespace xtrace {

struct CaptureScope {
  bool all_processes = false;
  bool follow_children = false;
  std::string comm;                   // at most 15 characters, as the kernel keeps it
  std::optional<CgroupScope> cgroup;  // --cgroup or --container
  std::string container_id;           // --container, as given
  std::optional<uid_t> owner;          // --user: only processes whose uids are all this one
  SlurmJobSelector slurm;              // --slurm-job (empty job_id: none), --slurm-node, --slurm-cluster
  std::vector<uint32_t> job_pids;      // its processes found running (no job cgroup)
  // Of the job's processes found running: those taken by job id (and node) alone, having no
  // SLURM_CLUSTER_NAME to compare with --slurm-cluster; and those that are somebody else's
  // (with --user), left out, with the uid each runs as.
  std::vector<uint32_t> job_pids_without_cluster_name;
  std::vector<std::pair<uint32_t, uid_t>> job_pids_not_the_owners;

  // The capture looks for processes itself (as they start, fork or load libraries) rather
  // than only watching the ones it was given.
  bool discovers() const { return all_processes || !comm.empty() || follow_children; }
  // It also selects processes that were running before it started (--system, --comm), not
  // only ones it was given or saw start.
  bool finds_running() const { return all_processes || !comm.empty(); }
  // It ends once the processes it follows are gone; otherwise it runs until stopped.
  bool ends_with_targets() const { return !all_processes && comm.empty(); }

  xt_capture_config ToConfig(const CollectorPidNamespace& ns) const;

  // For a process found running when the capture starts (not one given by pid): whether it
  // is selected by --system or --comm and lies in the cgroup (its owner is asked apart).
  bool SelectsRunning(std::string_view process_comm, std::string_view cgroup_path) const;
  // Whether process `pid` is one --user admits (every process without --user).
  bool Owns(uint32_t pid) const;
  bool InCgroup(std::string_view cgroup_path) const;

  // "every process in cgroup /a/b", for the first progress line.
  std::string Describe() const;
};

// Validates and resolves the target options (cgroup paths, container ids, the user, the
// Slurm job's processes). With --user, a process given by pid, or a Slurm job, that is not
// the user's is an error naming its owner: nothing of it is probed.
Result<CaptureScope> ResolveCaptureScope(const CaptureOptions& options);

}  // namespace xtrace
