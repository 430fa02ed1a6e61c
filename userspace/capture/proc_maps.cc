// /proc/PID/maps parsing.
#include "capture/proc_maps.h"

#include "base/read_file.h"
#include "capture/proc_stat.h"

#include <cerrno>
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

    MappedLibrary lib;
    lib.path = path;
    lib.host_path = "/proc/" + std::to_string(pid) + "/root" + path;
    lib.inode = inode;
    unsigned major = 0, minor = 0;
    if (std::sscanf(dev.c_str(), "%x:%x", &major, &minor) == 2) {
      lib.dev_major = major;
      lib.dev_minor = minor;
    }
    bool seen = false;
    for (const auto& f : found) seen = seen || f.SameFile(lib);
    if (!seen) found.push_back(std::move(lib));
  }
  return found;
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

}  // namespace xtrace
