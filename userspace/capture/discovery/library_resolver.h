// Where the dynamic linker will find a library for a command about to be exec'd, so its
// probes can be attached before the command's first call.
#pragma once

#include <optional>
#include <string>

#include "capture/discovery/proc_maps.h"

namespace xtrace {

// Looks for `soname` (e.g. "libze_loader.so.1") along LD_LIBRARY_PATH, then the linker cache
// (ldconfig -p), then the default directories, as ld.so does; follows symlinks to the file.
std::optional<MappedLibrary> ResolveLibraryForExec(const std::string& soname);

// The file at `path` (symlinks followed) as a MappedLibrary reachable from this namespace.
std::optional<MappedLibrary> LibraryAtPath(const std::string& path);

}  // namespace xtrace
