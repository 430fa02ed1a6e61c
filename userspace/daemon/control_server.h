// The daemon's end of the control socket: a Unix socket that only root (or the group given
// to --group) can open, whose connections are served with Cap'n Proto RPC by a Control
// object over a CaptureController. Every peer's credentials are checked as well
// (control_access.h says why both); a peer that fails the check gets an object that refuses
// every call with a message saying who may.
//
// Hostile or broken clients cannot stop the daemon or its capture: the socket is read
// without blocking (a client that stalls mid-message holds nothing but its own connection),
// a message larger than kMaxControlMessageBytes is refused from its frame header with an
// error sent back, garbage ends its own connection only, and at most kMaxControlConnections
// are open at once (a new one closes the oldest).
#pragma once

#include <kj/async-io.h>

#include <cstdint>
#include <string>

#include "base/status.h"
#include "base/unique_fd.h"
#include "daemon/capture_controller.h"
#include "daemon/control_access.h"

namespace xtrace {

// Control messages are small: a request is a capture's options, a reply one line per traced
// process. 1 MiB holds a status of thousands of processes and bounds what a client can make
// the daemon buffer.
inline constexpr uint64_t kMaxControlMessageBytes = 1u << 20;

// `xtrace ctl` holds its connection for one call; 32 leaves room for many at once, and bounds
// the descriptors and memory that clients which connect and never finish can hold.
inline constexpr size_t kMaxControlConnections = 32;

// Creates the listening socket at `path`, owned by root and `access`'s group, mode 0600
// (0660 with a group); its directory, if missing, is made with mode 0700 (0710 with a
// group). A stale socket is replaced; one a live daemon answers on is an error.
Result<UniqueFd> ListenOnControlSocket(const std::string& path, const ControlAccess& access);

// Serves connections from `listener` until the returned promise is dropped.
kj::Promise<void> ServeControl(kj::ConnectionReceiver& listener, kj::Timer& timer,
                               CaptureController& controller, const ControlAccess& access);

}  // namespace xtrace
