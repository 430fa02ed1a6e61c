// `xtrace slurm JOBID`: every rank of a running Slurm job, on every node it runs on, captured
// for one window by the nodes' xtrace daemons, as the job's own user. Slurm itself carries the
// trigger: a job step with one task per node of the job (srun --jobid=J --overlap
// --ntasks-per-node=1) asks the daemon of its node to capture the job's processes there from
// a common start time, into DIR/NODE, written as the user. Then `xtrace convert DIR` and
// `xtrace report DIR` read every node's logs as one run. Interrupted (Ctrl-C, SIGTERM), the
// command has every node's step stop the capture it started, and waits for their last files.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace xtrace {

struct SlurmCommandLine {
  bool help = false;
  std::string job;
  uint64_t duration_ns = 10'000'000'000ull;
  uint64_t start_in_ns = 3'000'000'000ull;  // time for srun to reach every node
  std::string output_dir;                   // default xtrace-slurm-JOBID (made absolute)
  std::string socket_path;                  // %n: the node's Slurm name
  // The step on each node (what the command runs through srun).
  bool node_step = false;
  uint64_t start_at_realtime_ns = 0;
  std::string cluster;  // the job's cluster, as the command found it (SLURM_CLUSTER_NAME)
};

// argv[0] is "slurm".
Result<SlurmCommandLine> ParseSlurmCommandLine(int argc, char** argv);
std::string SlurmCommandHelp();

// "/run/xtrace/%n.sock" for node "n1" -> "/run/xtrace/n1.sock".
std::string NodeSocketPath(const std::string& pattern, const std::string& node);

// The job's cluster, for a step on its node: the step's own SLURM_CLUSTER_NAME (`env`, its
// environment's value, null if unset), else what the command passed it; "" if neither.
std::string NodeStepCluster(const char* env, const std::string& passed);

// "ClusterName = c1" in `scontrol show config` output -> "c1" ("" if there is no such line).
std::string ClusterNameInConfig(const std::string& scontrol_show_config);

int RunSlurmCommand(int argc, char** argv);

}  // namespace xtrace
