// The logs a command reads, from its arguments: a file is itself, a directory means the
// *.capnp files in it and below it (a daemon's rotated files, one log per rank, or a
// directory per node as `xtrace slurm` writes them). Shared by
// `xtrace convert` and `xtrace report`.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace xtrace {

// Files to read, in order: files as given; for a directory, its *.capnp files and those of
// its subdirectories by path (the daemon's names sort by time). A directory without any is an error naming it.
// A file named more than once (by a directory and by its own path, or through a link) is
// listed once, where it first appears.
Result<std::vector<std::string>> ExpandLogInputs(const std::vector<std::string>& inputs);

}  // namespace xtrace
