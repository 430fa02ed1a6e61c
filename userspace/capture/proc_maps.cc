// /proc/PID/maps parsing.
#include "capture/proc_maps.h"

#include "base/read_file.h"
#include "capture/proc_stat.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace xtrace {

std::vector<MappedLibrary> ParseMappedLibraries(std::string_view maps_text, uint32_t pid,
                                                std::string_view basename_prefix) {
  std::vector<MappedLibrary> found;
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
    // A library replaced on disk while mapped keeps its old inode; its path is suffixed.
    static constexpr std::string_view kDeleted = " (deleted)";
    if (path.size() > kDeleted.size() && path.ends_with(kDeleted)) continue;
    const size_t slash = path.rfind('/');
    if (std::string_view(path).substr(slash + 1).rfind(basename_prefix, 0) != 0) continue;

    const uint64_t start = std::strtoull(range.c_str(), nullptr, 16);
    const bool at_file_start = std::strtoull(offset.c_str(), nullptr, 16) == 0;
    MappedLibrary lib;
    lib.path = path;
    lib.host_path = "/proc/" + std::to_string(pid) + "/root" + path;
    lib.map_range = range;
    lib.inode = inode;
    unsigned major = 0, minor = 0;
    if (std::sscanf(dev.c_str(), "%x:%x", &major, &minor) == 2) {
      lib.dev_major = major;
      lib.dev_minor = minor;
    }
    if (at_file_start) lib.load_base = start;
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
