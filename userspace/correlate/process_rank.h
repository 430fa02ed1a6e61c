// A process's rank in a distributed job and the job's size, read from its environment: what
// `xtrace report` uses to name the logs of a multi-rank run and what a trace's
// "distributedInfo" says. For the capture side to call when it first sees a process
// (Correlator::NoteProcess), storing the answers in ProcessInfo.rank and .world_size.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace xtrace {

// Environment variables that carry a rank, most specific first: a launcher's own global rank
// (PyTorch/torchrun, Intel MPI and MPICH, Open MPI, PMIx, Slurm), then node-local ranks.
inline constexpr std::string_view kRankVariables[] = {
    "RANK",          "PMI_RANK",        "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
    "SLURM_PROCID",  "MPI_LOCALRANKID", "LOCAL_RANK",           "OMPI_COMM_WORLD_LOCAL_RANK",
};

// Variables that carry the job's number of ranks: PyTorch/torchrun, Intel MPI and MPICH,
// Open MPI, Slurm.
inline constexpr std::string_view kWorldSizeVariables[] = {
    "WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS",
};

// The rank in an environ block (NUL-separated NAME=VALUE entries, as /proc/PID/environ): the
// first variable of kRankVariables present with a non-negative decimal value.
std::optional<int32_t> RankFromEnviron(std::string_view environ_block);

// The world size likewise: the first of kWorldSizeVariables with a positive decimal value.
std::optional<int32_t> WorldSizeFromEnviron(std::string_view environ_block);

struct DistributedIdentity {
  std::optional<int32_t> rank;
  std::optional<int32_t> world_size;
};

// Reads /proc/PID/environ once (needs the privilege to read the process's memory). Both
// nullopt when unreadable; each nullopt when its variables are not set.
DistributedIdentity ReadDistributedIdentity(uint32_t pid);

}  // namespace xtrace
