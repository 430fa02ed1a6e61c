// /proc/PID/maps parsing.
#include "capture/discovery/proc_maps.h"

#include "base/read_file.h"
#include "capture/discovery/proc_stat.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace xtrace {

MappedLibrary LibraryOf(const MappedSegment& s) {
  MappedLibrary lib;
  lib.path = s.path;
  lib.map_range = s.range;
  lib.inode = s.inode;
  lib.dev_major = s.dev_major;
  lib.dev_minor = s.dev_minor;
  return lib;
}

std::vector<MappedSegment> ParseMappedSegments(std::string_view maps_text) {
  std::vector<MappedSegment> found;
  size_t pos = 0;
  while (pos < maps_text.size()) {
    size_t eol = maps_text.find('\n', pos);
    if (eol == std::string_view::npos) eol = maps_text.size();
    const std::string line(maps_text.substr(pos, eol - pos));
    pos = eol + 1;

    // address perms offset dev inode pathname
    std::istringstream fields(line);
    std::string range, perms, offset, dev;
    uint64_t inode = 0;
    if (!(fields >> range >> perms >> offset >> dev >> inode) || inode == 0) continue;
    std::string path;
    std::getline(fields >> std::ws, path);
    if (path.empty() || path[0] != '/') continue;
    // A file replaced on disk while mapped keeps its old inode; its path is suffixed.
    static constexpr std::string_view kDeleted = " (deleted)";
    if (path.ends_with(kDeleted)) continue;
    const size_t dash = range.find('-');
    if (dash == std::string::npos) continue;
    MappedSegment s;
    s.start = std::strtoull(range.c_str(), nullptr, 16);
    s.end = std::strtoull(range.c_str() + dash + 1, nullptr, 16);
    s.file_offset = std::strtoull(offset.c_str(), nullptr, 16);
    s.executable = perms.size() > 2 && perms[2] == 'x';
    unsigned major = 0, minor = 0;
    if (std::sscanf(dev.c_str(), "%x:%x", &major, &minor) == 2) {
      s.dev_major = major;
      s.dev_minor = minor;
    }
    s.inode = inode;
    s.path = std::move(path);
    s.range = std::move(range);
    found.push_back(std::move(s));
  }
  return found;
}

std::vector<MappedLibrary> ParseMappedLibraries(std::string_view maps_text, uint32_t pid,
                                                std::string_view basename_prefix) {
  std::vector<MappedLibrary> found;
  for (MappedSegment& s : ParseMappedSegments(maps_text)) {
    const size_t slash = s.path.rfind('/');
    if (std::string_view(s.path).substr(slash + 1).rfind(basename_prefix, 0) != 0) continue;
    MappedLibrary lib;
    lib.host_path = "/proc/" + std::to_string(pid) + "/root" + s.path;
    lib.path = std::move(s.path);
    lib.map_range = std::move(s.range);
    lib.inode = s.inode;
    lib.dev_major = s.dev_major;
    lib.dev_minor = s.dev_minor;
    if (s.file_offset == 0) lib.load_base = s.start;
    bool seen = false;
    for (auto& f : found) {
      if (!f.SameFile(lib)) continue;
      seen = true;
      if (!f.load_base) f.load_base = lib.load_base;
    }
    if (!seen) found.push_back(std::move(lib));
  }
  return found;
}

UniqueFd OpenMappedFile(uint32_t pid, const MappedLibrary& lib, std::string* how) {
  const std::string proc = "/proc/" + std::to_string(pid);
  const auto open_path = [](const std::string& p) { return UniqueFd(open(p.c_str(), O_PATH | O_CLOEXEC)); };
  // The inode alone: on overlay filesystems the device a path opens differs from the maps'.
  const auto same_inode = [&lib](const UniqueFd& fd) {
    struct stat st {};
    return fd.valid() && fstat(fd.get(), &st) == 0 && st.st_ino == lib.inode;
  };
  const auto found = [how](UniqueFd fd, const char* way) {
    if (how) *how = way;
    return fd;
  };
  if (!lib.map_range.empty())
    if (UniqueFd fd = open_path(proc + "/map_files/" + lib.map_range); fd.valid())
      return found(std::move(fd), "map_files");
  if (UniqueFd fd = open_path(proc + "/root" + lib.path); same_inode(fd))
    return found(std::move(fd), "root");
  if (UniqueFd fd = open_path(lib.path); same_inode(fd)) return found(std::move(fd), "path");
  return UniqueFd();
}

Result<std::vector<MappedLibrary>> FindMappedLibraries(uint32_t pid,
                                                       std::string_view basename_prefix) {
  const std::string path = "/proc/" + std::to_string(pid) + "/maps";
  const std::optional<std::string> text = ReadWholeFile(path);
  if (!text) {
    const int err = errno;
    if (!ProcessAlive(pid)) return Status::Error("process " + std::to_string(pid) + " is gone");
    return Status::Error("cannot read " + path + ": " + std::strerror(err));
  }
  return ParseMappedLibraries(*text, pid, basename_prefix);
}

std::optional<uint64_t> LoadBase(uint32_t pid, const MappedLibrary& lib) {
  const size_t slash = lib.path.rfind('/');
  auto mapped = FindMappedLibraries(pid, std::string_view(lib.path).substr(slash + 1));
  if (!mapped.ok()) return std::nullopt;
  for (const MappedLibrary& m : *mapped)
    if (m.SameFile(lib) && m.load_base) return m.load_base;
  return std::nullopt;
}

}  // namespace xtrace
