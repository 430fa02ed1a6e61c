// Many uprobes behind one BPF link (kernel 6.6+ "uprobe_multi"), each with its own cookie.
// Detaching a perf-event uprobe waits for an RCU grace period under a kernel-wide mutex
// (~80 ms here), so a hundred single probes take seconds to remove; one multi link pays once.
// libbpf 1.1 predates this link type, hence the raw bpf(2) call.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "base/status.h"
#include "base/unique_fd.h"

struct bpf_program;

namespace xtrace {

// Makes `prog` loadable as a uprobe_multi program. Call between open and load; a program so
// loaded can only be attached with AttachUprobeMulti.
void PrepareUprobeMulti(bpf_program* prog);

// Attaches `prog` at `offsets` (file offsets) of the ELF file `path` in process `pid`, on
// return if `retprobe`; the program reads cookies[i] at offsets[i]. Returns the link's fd.
Result<UniqueFd> AttachUprobeMulti(bpf_program* prog, int pid, const std::string& path,
                                   std::span<const uint64_t> offsets,
                                   std::span<const uint64_t> cookies, bool retprobe);

}  // namespace xtrace
