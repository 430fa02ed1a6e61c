// Per-thread file-system identity.
#include "daemon/fs_identity.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace xtrace {

Status AssumeFsIdentity(uid_t uid, gid_t gid, std::span<const gid_t> groups) {
  // Groups and gid first: once the fsuid is not root's, changing them is no longer allowed.
  if (::syscall(SYS_setgroups, groups.size(), groups.data()) != 0)
    return Status::Error(std::string("setgroups: ") + std::strerror(errno));
  // setfsuid/setfsgid return the previous value and never fail loudly: ask again to know.
  ::syscall(SYS_setfsgid, gid);
  ::syscall(SYS_setfsuid, uid);
  const auto fsgid = static_cast<gid_t>(::syscall(SYS_setfsgid, static_cast<gid_t>(-1)));
  const auto fsuid = static_cast<uid_t>(::syscall(SYS_setfsuid, static_cast<uid_t>(-1)));
  if (fsuid != uid || fsgid != gid)
    return Status::Error("cannot take uid " + std::to_string(uid) + "'s file-system identity");
  return Status::Ok();
}

}  // namespace xtrace
