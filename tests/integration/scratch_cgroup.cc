// Scratch cgroups for integration tests; see scratch_cgroup.h.
#include "scratch_cgroup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "capture/discovery/cgroup.h"

namespace xtrace::testing {

ScratchCgroup::ScratchCgroup(const std::string& name) {
  auto mount = FindCgroup2Mount();
  if (!mount.ok()) {
    why_not_ = mount.status().message();
    return;
  }
  const std::string dir = mount->mount_point + "/" + name;
  if (::mkdir(dir.c_str(), 0755) != 0) {
    why_not_ = "cannot create a cgroup under " + mount->mount_point + ": " + std::strerror(errno);
    return;
  }
  path_ = dir;
  mount_root_ = mount->root;
  mount_point_ = mount->mount_point;
}

ScratchCgroup::~ScratchCgroup() {
  if (path_.empty()) return;
  // Children first; a cgroup can be removed once its processes have exited.
  std::vector<std::string> dirs;
  for (auto& e : std::filesystem::recursive_directory_iterator(path_))
    if (e.is_directory()) dirs.push_back(e.path());
  dirs.push_back(path_);
  std::sort(dirs.rbegin(), dirs.rend());
  for (const auto& d : dirs)
    for (int i = 0; i < 50 && ::rmdir(d.c_str()) != 0 && errno == EBUSY; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

std::string ScratchCgroup::HierarchyPath(const std::string& dir) const {
  const std::string rest = dir.substr(mount_point_.size());
  return mount_root_ == "/" ? rest : mount_root_ + rest;
}

std::vector<std::string> InCgroup(const std::string& cgroup, const std::vector<std::string>& argv) {
  std::string cmd = "echo $$ > " + cgroup + "/cgroup.procs && exec";
  for (const auto& a : argv) cmd += " '" + a + "'";
  return {"/bin/sh", "-c", cmd};
}

}  // namespace xtrace::testing
