// A capture asked for by a user writes its files as that user: the daemon's capture thread
// takes the user's file-system identity (fsuid, fsgid, supplementary groups) for everything
// it opens, so that it creates files the user owns, where the user may write, and reads
// nothing through paths the user could not (an NFS home with root squash included). Its other
// credentials stay root's: it keeps CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE, which are not
// file-system capabilities. Per thread: raw system calls, not glibc's wrappers, which apply a
// change to every thread of the process.
#pragma once

#include <sys/types.h>

#include <span>

#include "base/status.h"

namespace xtrace {

// Makes the calling thread's file-system identity uid/gid/groups'. For a thread of its own:
// there is no way back (a thread that is done with it ends).
Status AssumeFsIdentity(uid_t uid, gid_t gid, std::span<const gid_t> groups);

}  // namespace xtrace
