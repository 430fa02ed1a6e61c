// A process's rank in a distributed job, read from its environment: what `xtrace report`
// uses to name the logs of a multi-rank run. For the capture side to call when it first sees
// a process (Correlator::NoteProcess), storing the answer in ProcessInfo.rank.
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

// The rank in an environ block (NUL-separated NAME=VALUE entries, as /proc/PID/environ): the
// first variable of kRankVariables present with a non-negative decimal value.
std::optional<int32_t> RankFromEnviron(std::string_view environ_block);

// Reads /proc/PID/environ (needs the privilege to read the process's memory). nullopt when
// unreadable or when no rank variable is set.
std::optional<int32_t> ReadProcessRank(uint32_t pid);

}  // namespace xtrace
