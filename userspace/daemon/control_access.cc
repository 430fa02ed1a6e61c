// The daemon's access rule and its messages.
#include "daemon/control_access.h"

#include <grp.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <vector>

namespace xtrace {

std::string ControlAccess::Who() const {
  if (users)
    return std::string("root") + (group ? " and group " + group_name : "") +
           " (any process), anybody else (their own processes)";
  return group ? "only root or group " + group_name : "only root";
}

Result<ControlAccess> ResolveControlAccess(const std::string& group_name) {
  ControlAccess access;
  if (group_name.empty()) return access;
  std::vector<char> buffer(16384);
  group entry{};
  group* found = nullptr;
  int err = getgrnam_r(group_name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  gid_t gid = 0;
  if (found) {
    gid = found->gr_gid;
  } else {
    const char* end = group_name.data() + group_name.size();
    auto [ptr, ec] = std::from_chars(group_name.data(), end, gid);
    if (ec != std::errc() || ptr != end)
      return Status::Error("--group: no group named '" + group_name + "'" +
                           (err ? std::string(" (") + std::strerror(err) + ")" : ""));
  }
  if (gid == 0) return access;  // root's group: root alone, as without --group
  access.group = gid;
  access.group_name = group_name;
  return access;
}

bool PeerAllowed(const ControlAccess& access, uid_t uid, gid_t gid,
                 std::span<const gid_t> supplementary_groups) {
  if (uid == 0) return true;
  if (!access.group) return false;
  return gid == *access.group ||
         std::find(supplementary_groups.begin(), supplementary_groups.end(), *access.group) !=
             supplementary_groups.end();
}

std::string PermissionDeniedMessage(const ControlAccess& access, uid_t uid) {
  return "permission denied: uid " + std::to_string(uid) +
         " may not control this xtrace daemon: " + access.Who() + " may";
}

}  // namespace xtrace
