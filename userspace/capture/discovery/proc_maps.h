// Finds shared libraries in a process's memory map, and opens each one as the file the process
// maps, whatever its root: a library inside a container or a chroot is another inode than the
// host's file of the same path, and uprobes match by inode.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace xtrace {

// One line of /proc/PID/maps that maps a file.
struct MappedSegment {
  uint64_t start = 0, end = 0;  // addresses [start, end)
  uint64_t file_offset = 0;     // of `start`
  bool executable = false;
  uint32_t dev_major = 0, dev_minor = 0;
  uint64_t inode = 0;
  std::string path;
  std::string range;  // "start-end", as /proc/PID/map_files names it
};

// The file-backed lines of a /proc/PID/maps text, in its order (a file replaced on disk
// while mapped, "(deleted)", is left out: its path names another file now).
std::vector<MappedSegment> ParseMappedSegments(std::string_view maps_text);

struct MappedLibrary {
  // As /proc/PID/maps names it, e.g. /usr/lib/x86_64-linux-gnu/libze_loader.so.1.8.0. The
  // kernel writes it relative to the reader's root where it can: a chrooted process's
  // library shows its host path (/srv/tree/usr/lib/...), a container's its path inside.
  std::string path;
  std::string host_path;  // /proc/PID/root + path, or once opened /proc/self/fd/N
  std::string map_range;  // "start-end" of its first mapping: its /proc/PID/map_files entry
  uint64_t load_base = 0;  // start of its mapping at file offset 0 (0: none such)
  uint64_t inode = 0;
  uint32_t dev_major = 0;
  uint32_t dev_minor = 0;

  bool SameFile(const MappedLibrary& o) const {
    return inode == o.inode && dev_major == o.dev_major && dev_minor == o.dev_minor;
  }
};

// The file `segment` maps, named and ranged as that segment gives it (no host path yet).
MappedLibrary LibraryOf(const MappedSegment& segment);

// Each distinct file of ParseMappedSegments(maps_text) whose base name starts with
// `basename_prefix` (e.g. "libze_loader.so"), once, in order of first appearance.
std::vector<MappedLibrary> ParseMappedLibraries(std::string_view maps_text, uint32_t pid,
                                                std::string_view basename_prefix);

// Opens (O_PATH) the file `lib` of process `pid` maps: its /proc/PID/map_files entry (the
// mapping itself; needs CAP_SYS_ADMIN), else /proc/PID/root/<path> (a container's file) or
// <path> from xtrace's root (a chrooted process's), each only if its inode is the one the
// maps name. `how` says which way it was reached (for messages).
// An invalid fd when none opens (the process is gone).
UniqueFd OpenMappedFile(uint32_t pid, const MappedLibrary& lib, std::string* how = nullptr);

// Reads /proc/PID/maps. Errors name the pid and say whether the process is gone.
Result<std::vector<MappedLibrary>> FindMappedLibraries(uint32_t pid,
                                                       std::string_view basename_prefix);

// Where `pid` maps `lib` (possibly found in another process, or before an exec) now: the start
// of its mapping at file offset 0, which virtual addresses of a shared object are relative to.
// nullopt when it does not map it (yet), or is gone.
std::optional<uint64_t> LoadBase(uint32_t pid, const MappedLibrary& lib);

}  // namespace xtrace
