// Finds shared libraries in a process's memory map, with the path to reach each one from
// the host (through /proc/PID/root, so a library inside a container is the right inode).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace xtrace {

struct MappedLibrary {
  std::string path;       // as the process sees it, e.g. /usr/lib/x86_64-linux-gnu/libze_loader.so.1.8.0
  std::string host_path;  // /proc/PID/root + path: openable from xtrace's mount namespace
  uint64_t inode = 0;
  uint32_t dev_major = 0;
  uint32_t dev_minor = 0;

  bool SameFile(const MappedLibrary& o) const {
    return inode == o.inode && dev_major == o.dev_major && dev_minor == o.dev_minor;
  }
};

// Parses the text of /proc/PID/maps and returns each distinct file whose base name starts
// with `basename_prefix` (e.g. "libze_loader.so"), once, in order of first appearance.
std::vector<MappedLibrary> ParseMappedLibraries(std::string_view maps_text, uint32_t pid,
                                                std::string_view basename_prefix);

// Reads /proc/PID/maps. Errors name the pid and say whether the process is gone.
Result<std::vector<MappedLibrary>> FindMappedLibraries(uint32_t pid,
                                                       std::string_view basename_prefix);

}  // namespace xtrace
