// libbpf link ownership and uprobe attachment.
#include "capture/bpf/bpf_link.h"

#include <bpf/libbpf.h>

#include <cerrno>

#include "capture/bpf/capture_maps.h"

namespace xtrace {

void BpfLinkDeleter::operator()(bpf_link* link) const { bpf_link__destroy(link); }

Result<BpfLink> AttachUprobe(bpf_program* prog, int pid, const std::string& path,
                             const std::string& symbol, bool retprobe, uint64_t cookie,
                             uint64_t offset) {
  LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = cookie, .retprobe = retprobe,
              .func_name = symbol.c_str());
  // With func_name set, libbpf takes the offset as relative to the function.
  bpf_link* link = bpf_program__attach_uprobe_opts(prog, pid, path.c_str(), offset, &opts);
  if (!link) return Status::Error(symbol + ": " + BpfErrorText(errno));
  return BpfLink(link);
}

Result<BpfLink> AttachUprobeAt(bpf_program* prog, int pid, const std::string& path,
                               uint64_t file_offset, bool retprobe, uint64_t cookie) {
  LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = cookie, .retprobe = retprobe);
  bpf_link* link = bpf_program__attach_uprobe_opts(prog, pid, path.c_str(), file_offset, &opts);
  if (!link) return Status::Error("offset " + std::to_string(file_offset) + ": " + BpfErrorText(errno));
  return BpfLink(link);
}

}  // namespace xtrace

