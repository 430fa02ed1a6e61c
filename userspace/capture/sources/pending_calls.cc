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

std::vector<Result<DecodedRecord>> PendingCalls(int thread_state_fd, uint32_t pid, uint64_t now_ns) {
  std::vector<Result<DecodedRecord>> pending;
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
    auto call = DecodePendingCall(state.call, pid, tid, now_ns);
    if (!call.ok()) pending.push_back(call.status());
    else if (*call) pending.push_back(DecodedRecord(**call));
  }
  return pending;
}

}  // namespace xtrace
