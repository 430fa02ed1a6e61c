// PendingCalls (pending_calls.h).
#include "capture/sources/pending_calls.h"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/unique_fd.h"
#include "xtrace/thread_state.h"

namespace xtrace {
namespace {

// pidfd_open(2) of a thread rather than a process: PIDFD_THREAD (O_EXCL), Linux 6.9+. A task
// storage map is keyed by the pidfd of the very task whose storage it is.
constexpr unsigned kPidfdThread = O_EXCL;

UniqueFd OpenThread(uint32_t tid) {
  return UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(tid), kPidfdThread)));
}

}  // namespace

std::vector<DecodedCallUnfinished> PendingCalls(int thread_state_fd, uint32_t pid, uint64_t now_ns) {
  std::vector<DecodedCallUnfinished> pending;
  std::error_code ec;
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  for (auto it = std::filesystem::directory_iterator(tasks, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const uint32_t tid = static_cast<uint32_t>(std::strtoul(it->path().filename().c_str(), nullptr, 10));
    if (tid == 0) continue;
    const UniqueFd pidfd = OpenThread(tid);
    if (!pidfd.valid()) continue;  // gone meanwhile, or a kernel without PIDFD_THREAD
    const int key = pidfd.get();
    xt_thread_state state{};
    if (bpf_map_lookup_elem(thread_state_fd, &key, &state) != 0) continue;  // never traced
    const xt_call_slot& call = state.call;
    if (call.start_ns == 0 || (call.flags & XT_FLAG_PAUSED) || call.start_ns > now_ns) continue;
    DecodedCallUnfinished u{};
    u.hdr.type = XT_REC_CALL_UNFINISHED;
    u.hdr.size = sizeof(xt_call_unfinished);
    u.hdr.pid = pid;
    u.hdr.tid = tid;
    u.hdr.start_ns = call.start_ns;
    u.hdr.end_ns = now_ns;
    u.fn = call.fn;
    u.capture_ended = true;
    pending.push_back(u);
  }
  return pending;
}

}  // namespace xtrace
