// Output-name templates, for one log per rank of a job launched by mpirun (or any launcher
// that starts one xtrace per rank): `mpirun -n 4 xtrace record -o 'run.%r.capnp' -- ./app`
// writes run.0.capnp ... run.3.capnp.
//   %r  the rank, from xtrace's own environment, which the launcher set and the traced
//       command inherits: the variables a traced process's rank is read from
//       (correlate/process_rank.h: RANK, PMI_RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK,
//       SLURM_PROCID, ...)
//   %p  xtrace's pid (the launched command's parent)
//   %h  the host name (up to its first dot)
//   %%  a percent sign
// Any other character after % is an error, as is %r where no rank variable is set.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace xtrace {

struct OutputTemplateValues {
  std::optional<int32_t> rank;
  uint32_t pid = 0;
  std::string host;
};

// This process's values.
OutputTemplateValues CurrentOutputTemplateValues();

// `pattern` with its % sequences replaced; a pattern without % is returned as it is.
Result<std::string> ExpandOutputTemplate(std::string_view pattern, const OutputTemplateValues& values);

}  // namespace xtrace
