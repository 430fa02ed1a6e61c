// cgroup v2 lookups for capture scopes.
#include "capture/discovery/cgroup.h"

#include "base/read_file.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <sstream>
#include <vector>

#include "correlate/container_id.h"
#include "correlate/process_inspector.h"

namespace xtrace {
namespace {

// mountinfo escapes blanks in paths as octal (\040).
std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isdigit(static_cast<unsigned char>(s[i + 2])) &&
        std::isdigit(static_cast<unsigned char>(s[i + 3]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 3)), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool IsCgroup2Dir(const std::string& dir) {
  struct statfs fs {};
  struct stat st {};
  return statfs(dir.c_str(), &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC &&
         stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The kernel's cgroup id is the directory's kernfs node id, which is also its inode number.
uint64_t CgroupIdOf(const std::string& dir) {
  struct stat st {};
  return stat(dir.c_str(), &st) == 0 ? st.st_ino : 0;
}

std::string JoinHierarchyPath(const std::string& root, const std::string& rest) {
  std::string path = root == "/" ? "" : root;
  if (!rest.empty() && rest[0] != '/') path += '/';
  path += rest;
  return path.empty() ? "/" : path;
}

Result<CgroupScope> ScopeForDir(const Cgroup2Mount& mount, const std::string& dir) {
  std::error_code ec;
  const std::string canonical = std::filesystem::canonical(dir, ec).string();
  if (ec || !IsCgroup2Dir(canonical))
    return Status::Error(dir + " is not a cgroup v2 directory (the cgroup v2 hierarchy is at " +
                         mount.mount_point + ")");
  if (canonical.rfind(mount.mount_point, 0) != 0)
    return Status::Error(dir + " is not under the cgroup v2 mount " + mount.mount_point);
  CgroupScope scope;
  scope.dir = canonical;
  scope.path = JoinHierarchyPath(mount.root, canonical.substr(mount.mount_point.size()));
  scope.id = CgroupIdOf(canonical);
  return scope;
}

}  // namespace

Result<Cgroup2Mount> ParseCgroup2Mount(std::string_view text) {
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    // id parent major:minor root mount-point options [optional...] - fstype source super-options
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream tail(line.substr(dash + 3));
    std::string fstype;
    if (!(tail >> fstype) || fstype != "cgroup2") continue;
    std::istringstream head(line.substr(0, dash));
    std::string id, parent, dev, root, mount_point;
    if (!(head >> id >> parent >> dev >> root >> mount_point)) continue;
    return Cgroup2Mount{Unescape(mount_point), Unescape(root)};
  }
  return Status::Error("no cgroup v2 filesystem is mounted (see /proc/self/mountinfo)");
}

Result<Cgroup2Mount> FindCgroup2Mount() {
  return ParseCgroup2Mount(ReadWholeFile("/proc/self/mountinfo").value_or(""));
}

Result<CgroupScope> ResolveCgroup(const std::string& path) {
  auto mount = FindCgroup2Mount();
  if (!mount.ok()) return mount.status().WithContext("--cgroup " + path);
  if (path.rfind(mount->mount_point, 0) == 0 || (IsCgroup2Dir(path) && path[0] == '/'))
    return ScopeForDir(*mount, path);
  // A hierarchy path: below the mounted root.
  std::string rest = path;
  if (mount->root != "/" && rest.rfind(mount->root, 0) == 0) rest = rest.substr(mount->root.size());
  while (!rest.empty() && rest[0] == '/') rest.erase(0, 1);
  return ScopeForDir(*mount, mount->mount_point + "/" + rest);
}

Result<CgroupScope> ResolveContainerIn(const Cgroup2Mount& mount, const std::string& id) {
  if (id.size() < 4 || id.size() > 64)
    return Status::Error("--container: '" + id + "' is not a container id (4 to 64 hex digits)");
  for (char c : id)
    if (!std::isxdigit(static_cast<unsigned char>(c)))
      return Status::Error("--container: '" + id + "' is not a container id (4 to 64 hex digits)");
  std::string want = id;
  for (char& c : want) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));

  // The shallowest directory of each matching container (a container may nest cgroups).
  std::map<std::string, std::string> found;  // container id -> directory
  std::error_code ec;
  auto it = std::filesystem::recursive_directory_iterator(
      mount.mount_point, std::filesystem::directory_options::skip_permission_denied, ec);
  for (; !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
    const std::string name = it->path().filename().string();
    const std::string cid = ContainerIdFromCgroupPath(name);
    if (cid.empty() || cid.rfind(want, 0) != 0) continue;
    found.try_emplace(cid, it->path().string());
    it.disable_recursion_pending();
  }
  if (found.empty())
    return Status::Error("--container " + id + ": no container with that id in the cgroup hierarchy at " +
                         mount.mount_point);
  if (found.size() > 1) {
    std::string ids;
    for (const auto& [cid, dir] : found) ids += (ids.empty() ? "" : ", ") + cid.substr(0, 12);
    return Status::Error("--container " + id + " matches " + std::to_string(found.size()) +
                         " containers (" + ids + "); give more of the id");
  }
  return ScopeForDir(mount, found.begin()->second);
}

Result<CgroupScope> ResolveContainer(const std::string& id) {
  auto mount = FindCgroup2Mount();
  if (!mount.ok()) return mount.status().WithContext("--container " + id);
  return ResolveContainerIn(*mount, id);
}

bool CgroupPathContains(std::string_view scope, std::string_view member) {
  if (scope == "/" || scope.empty()) return !member.empty();
  if (member.rfind(scope, 0) != 0) return false;
  return member.size() == scope.size() || member[scope.size()] == '/';
}

std::string CgroupPathOfProcess(uint32_t pid) {
  return CgroupPathFromProcFile(
      ReadWholeFile("/proc/" + std::to_string(pid) + "/cgroup").value_or(""));
}

}  // namespace xtrace
