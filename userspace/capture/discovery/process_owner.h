// Who owns a process, as /proc/PID/status says it (its real, effective and saved uid), and
// what a user name or number given on the command line stands for. The user-space side of
// XT_SCOPE_OWNER (include/xtrace/capture_config.h): a capture asked for by a user covers the
// processes whose uids are all theirs.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace xtrace {

struct ProcessUids {
  uid_t real = 0, effective = 0, saved = 0;
  bool AllAre(uid_t uid) const { return real == uid && effective == uid && saved == uid; }
};

// The "Uid:" line of a /proc/PID/status text; nullopt if there is none.
std::optional<ProcessUids> ParseProcessUids(std::string_view status_text);
// Of a running process; nullopt if it is gone.
std::optional<ProcessUids> ReadProcessUids(uint32_t pid);

// A user name, or a number ("1000"), to its uid.
Result<uid_t> ResolveUser(const std::string& user);
// "alice (uid 1000)", or "uid 1000" for a uid without a name.
std::string DescribeUser(uid_t uid);

}  // namespace xtrace
