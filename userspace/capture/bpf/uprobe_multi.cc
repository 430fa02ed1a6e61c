// uprobe_multi links through bpf(2) (see uprobe_multi.h).
#include "capture/bpf/uprobe_multi.h"

#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace xtrace {
namespace {

// From the kernel's uapi bpf.h (6.6+); Debian's 6.1 headers predate them.
constexpr uint32_t kAttachTypeUprobeMulti = 48;  // BPF_TRACE_UPROBE_MULTI
constexpr uint32_t kUprobeMultiReturn = 1;       // BPF_F_UPROBE_MULTI_RETURN

// union bpf_attr as BPF_LINK_CREATE reads it for uprobe_multi (the per-type union starts at
// byte 16). The kernel requires every byte past what it knows to be zero, so no padding is
// left uninitialised.
struct LinkCreateUprobeMulti {
  uint32_t prog_fd;
  uint32_t target_fd;
  uint32_t attach_type;
  uint32_t flags;
  uint64_t path;
  uint64_t offsets;
  uint64_t ref_ctr_offsets;
  uint64_t cookies;
  uint32_t cnt;
  uint32_t multi_flags;
  uint32_t pid;
  uint32_t pad;
};

}  // namespace

void PrepareUprobeMulti(bpf_program* prog) {
  bpf_program__set_expected_attach_type(prog, static_cast<bpf_attach_type>(kAttachTypeUprobeMulti));
}

Result<UniqueFd> AttachUprobeMulti(bpf_program* prog, int pid, const std::string& path,
                                   std::span<const uint64_t> offsets,
                                   std::span<const uint64_t> cookies, bool retprobe) {
  if (offsets.size() != cookies.size() || offsets.empty())
    return Status::Error("uprobe_multi: " + std::to_string(offsets.size()) + " offsets and " +
                         std::to_string(cookies.size()) + " cookies");
  LinkCreateUprobeMulti attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.prog_fd = static_cast<uint32_t>(bpf_program__fd(prog));
  attr.attach_type = kAttachTypeUprobeMulti;
  attr.path = reinterpret_cast<uint64_t>(path.c_str());
  attr.offsets = reinterpret_cast<uint64_t>(offsets.data());
  attr.cookies = reinterpret_cast<uint64_t>(cookies.data());
  attr.cnt = static_cast<uint32_t>(offsets.size());
  attr.multi_flags = retprobe ? kUprobeMultiReturn : 0;
  attr.pid = static_cast<uint32_t>(pid);
  const long fd = ::syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
  if (fd < 0) return Status::Error(std::string("uprobe_multi link: ") + std::strerror(errno));
  return UniqueFd(static_cast<int>(fd));
}

}  // namespace xtrace
