// The daemon's end of the control socket: a Unix socket that only root can open (mode 0600,
// owned by root), whose connections are served with Cap'n Proto RPC by a Control object over a
// CaptureController. A peer that is not root anyway (the socket's mode loosened by hand, or an
// inherited descriptor) is checked with SO_PEERCRED and given an object that refuses every call.
#pragma once

#include <kj/async-io.h>

#include <string>

#include "base/status.h"
#include "base/unique_fd.h"
#include "daemon/capture_controller.h"

namespace xtrace {

// Creates the listening socket at `path` (its directory, if missing, with mode 0700). A stale
// socket is replaced; one a live daemon answers on is an error.
Result<UniqueFd> ListenOnControlSocket(const std::string& path);

// Serves connections from `listener` until the returned promise is dropped.
kj::Promise<void> ServeControl(kj::ConnectionReceiver& listener, CaptureController& controller);

}  // namespace xtrace
