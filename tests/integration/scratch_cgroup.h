// A cgroup v2 directory made for one test and removed after it, and a command that runs a
// program inside it: for the tests of captures scoped to a cgroup.
#pragma once

#include <string>
#include <vector>

namespace xtrace::testing {

class ScratchCgroup {
 public:
  // Empty path() with a reason when cgroup v2 is not usable here.
  explicit ScratchCgroup(const std::string& name);
  // Removed once its processes (and its children's) have exited.
  ~ScratchCgroup();
  ScratchCgroup(const ScratchCgroup&) = delete;
  ScratchCgroup& operator=(const ScratchCgroup&) = delete;

  const std::string& path() const { return path_; }
  const std::string& why_not() const { return why_not_; }
  // The path as /proc/PID/cgroup shows it.
  std::string HierarchyPath(const std::string& dir) const;

 private:
  std::string path_, why_not_, mount_root_, mount_point_;
};

// A shell command that moves itself into `cgroup`, then execs `argv`.
std::vector<std::string> InCgroup(const std::string& cgroup, const std::vector<std::string>& argv);

}  // namespace xtrace::testing
