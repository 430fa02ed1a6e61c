// Who may drive the daemon: root, and the members of one group when the daemon was given
// `--group NAME`. Both ends use it: the daemon to admit or refuse a peer, `xtrace ctl` to
// say who may when it is refused.
//
// The rule is enforced twice, because each check alone has a hole:
// - the socket file's owner and mode (root:root 0600, or root:GROUP 0660): connect(2) needs
//   write permission on it, so others are stopped by the kernel before the daemon reads a
//   byte. But the mode is only as good as whoever last ran chmod, a bind mount into a
//   container can expose it under other permissions, and a connected descriptor can be
//   handed to another process;
// - the peer's credentials (SO_PEERCRED: uid and primary gid at connect time; SO_PEERGROUPS:
//   its supplementary groups), checked by the daemon on every connection, whatever the path
//   it came through. Credentials alone would leave the socket open to anyone to connect,
//   hold a descriptor and send bytes at the daemon; the mode keeps them out entirely.
#pragma once

#include <sys/types.h>

#include <optional>
#include <span>
#include <string>

#include "base/status.h"

namespace xtrace {

struct ControlAccess {
  std::optional<gid_t> group;  // members may control captures too; none: root only
  std::string group_name;
  // `--allow-users`: anybody else may capture their own processes (CaptureController::Start
  // says what that means); the socket is then open to all (0666), and the peer's
  // credentials, which the kernel vouches for, decide what they may do.
  bool users = false;

  // "only root" or "only root or group xtrace", for messages.
  std::string Who() const;
};

// Root only for an empty `group_name`; otherwise the group of that name (or number).
Result<ControlAccess> ResolveControlAccess(const std::string& group_name);

// Whether a peer with these credentials may control any capture (root or --group).
bool PeerAllowed(const ControlAccess& access, uid_t uid, gid_t gid,
                 std::span<const gid_t> supplementary_groups);

// What a refused peer is told (the client prints it after "xtrace ctl: ").
std::string PermissionDeniedMessage(const ControlAccess& access, uid_t uid);

}  // namespace xtrace
