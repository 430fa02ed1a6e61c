// cgroup v2 for capture scopes: where the hierarchy is mounted, which cgroup --cgroup PATH or
// --container ID names, and whether a process lies under it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace xtrace {

struct Cgroup2Mount {
  std::string mount_point;  // e.g. /sys/fs/cgroup, or /sys/fs/cgroup/unified on hybrid hosts
  std::string root;         // the hierarchy path mounted there ("/" normally)
};

struct CgroupScope {
  std::string dir;   // the directory to open (on the cgroup2 filesystem)
  std::string path;  // its path in the hierarchy, as /proc/PID/cgroup shows it ("/a/b")
  uint64_t id = 0;   // cgroup id: what bpf_get_current_cgroup_id() returns for its members
};

// The first cgroup2 filesystem in `mountinfo_text` (the text of /proc/self/mountinfo).
Result<Cgroup2Mount> ParseCgroup2Mount(std::string_view mountinfo_text);
Result<Cgroup2Mount> FindCgroup2Mount();

// --cgroup PATH: a directory on a cgroup2 filesystem, or a path inside the hierarchy
// ("/kubepods.slice/...", as /proc/PID/cgroup shows it).
Result<CgroupScope> ResolveCgroup(const std::string& path);

// --container ID: the cgroup of the container whose id is (or starts with) `id`, found by
// walking the cgroup hierarchy for a directory named after it (ContainerIdFromCgroupPath).
Result<CgroupScope> ResolveContainer(const std::string& id);
// The same in a hierarchy mounted at `mount`; exposed for tests.
Result<CgroupScope> ResolveContainerIn(const Cgroup2Mount& mount, const std::string& id);

// Whether cgroup path `member` is `scope` or lies below it.
bool CgroupPathContains(std::string_view scope, std::string_view member);

// The cgroup v2 path of process `pid` ("" if it has none or is gone).
std::string CgroupPathOfProcess(uint32_t pid);

}  // namespace xtrace
