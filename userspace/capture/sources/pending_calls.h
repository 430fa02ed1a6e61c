// The calls a process's threads are inside when the capture stops. A probe records a call at
// its return, so a call still running then (a synchronize waiting on a GPU that hangs, which
// is why the user stopped the capture) would leave no trace; its entry is still in the
// thread's BPF state, which user space reads through a pidfd of the thread and decodes as the
// record a thread that exits inside a call leaves (decode/record_decoder.h DecodePendingCall).
#pragma once

#include <cstdint>
#include <vector>

#include "decode/record_decoder.h"

namespace xtrace {

// The pending call of each thread of `pid` (pid and tids as /proc numbers them, which are the
// capture's numbers), decoded as unfinished calls ending at `now_ns` and flagged
// capture_ended, or the decoder's error for a call no record could hold. A call entered while
// the process was paused (recorded for its name alone) is left out; threads that exit
// meanwhile and threads without state are skipped.
std::vector<Result<DecodedRecord>> PendingCalls(int thread_state_fd, uint32_t pid, uint64_t now_ns);

}  // namespace xtrace
