// RAII ownership of libbpf links, and a uprobe helper every library-probing source uses.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>

#include "base/status.h"
#include "base/unique_fd.h"

struct bpf_link;
struct bpf_program;

namespace xtrace {

struct BpfLinkDeleter {
  void operator()(bpf_link* link) const;
};
using BpfLink = std::unique_ptr<bpf_link, BpfLinkDeleter>;

// A probe attachment a capture owns: a libbpf link, or the fd of a link libbpf 1.1 cannot
// make (uprobe_multi, see uprobe_multi.h). Destroying it detaches the probes.
using ProbeLink = std::variant<BpfLink, UniqueFd>;

// Attaches `prog` to `symbol` (`offset` bytes into it) in the ELF file at `path` for process
// `pid` (-1: every process that maps it), on return if `retprobe`. The program reads `cookie`
// with bpf_get_attach_cookie (one program can then serve several functions).
Result<BpfLink> AttachUprobe(bpf_program* prog, int pid, const std::string& path,
                             const std::string& symbol, bool retprobe, uint64_t cookie = 0,
                             uint64_t offset = 0);

// The same at a file offset of `path` (a function the file need not name).
Result<BpfLink> AttachUprobeAt(bpf_program* prog, int pid, const std::string& path,
                               uint64_t file_offset, bool retprobe, uint64_t cookie);

}  // namespace xtrace

