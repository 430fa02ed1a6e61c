// The guardian runs in a forked copy of xtrace that may have had other threads: between fork
// and exit it calls only async-signal-safe functions and system calls (no allocation, no
// stdio, no locks), and it keeps no descriptor but the pipe and the map, so that it never
// holds xtrace's probes or files alive after xtrace is gone.
#include "capture/holds/hold_guardian.h"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "xtrace/hold.h"

namespace xtrace {
namespace {

// Descriptor numbers inside the guardian.
constexpr int kGuardPipe = 3;
constexpr int kGuardMap = 4;

// After the capture is gone, the longest the guardian waits for the programs that take holds
// to go too (the kernel frees them once their last link and descriptor are closed: at once,
// or after an RCU grace period).
constexpr uint64_t kProgramsGoneTimeoutNs = 10'000'000'000ull;

// The longest the guardian tries to seize again a thread the capture was calling into (the
// capture's ptrace ends only once it has exited). The call itself is let finish however long
// it takes (remote_call.h): it is never undone in the middle.
constexpr uint64_t kCallRecoveryTimeoutNs = 10'000'000'000ull;

volatile sig_atomic_t g_guard_terminate = 0;
extern "C" void OnGuardTerminate(int) { g_guard_terminate = 1; }

uint64_t GuardNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// Continues every hold older than `older_than_ns` before now (all of them with 0), counting
// each in `released` before its SIGCONT goes out: whoever sees the process run again must
// also see it counted. The hold the capture serves is as old as its lease in `served`.
void ReleaseExpired(int map_fd, uint64_t now_ns, uint64_t older_than_ns, uint64_t query_wait_ns,
                    std::atomic<uint64_t>& released, const RemoteCallSlot* served) {
  // Collect first, then delete: deleting while walking a hash map can restart the walk. Each
  // hold is named by when and why it was taken: one released meanwhile (by the capture) and
  // taken anew is fresh, not due.
  struct Due {
    uint32_t pid;
    uint32_t reason;
    uint64_t since_ns;
  };
  static Due due[XT_MAX_HELD];  // the guardian is single-threaded; too large for its stack
  uint32_t n = 0;
  uint32_t key = 0, next = 0;
  const void* prev = nullptr;
  while (n < XT_MAX_HELD && bpf_map_get_next_key(map_fd, prev, &next) == 0) {
    xt_hold hold{};
    if (bpf_map_lookup_elem(map_fd, &next, &hold) == 0) {
      const uint64_t from_ns = HoldBoundFrom(next, hold.since_ns, hold.reason, served);
      if (HoldDue(from_ns, now_ns,
                  HoldBoundOf(from_ns, hold.since_ns, hold.reason, older_than_ns, query_wait_ns)))
        due[n++] = Due{next, hold.reason, hold.since_ns};
    }
    key = next;
    prev = &key;
  }
  for (uint32_t i = 0; i < n; ++i) ContinueHeldIf(map_fd, due[i].pid, due[i].since_ns, due[i].reason, &released);
}

// Whether a loaded BPF program still uses map `map_id`: while one does, a process can still be
// held (a capture SIGKILLed takes its links with it, but not necessarily at once).
bool MapInUse(uint32_t map_id) {
  uint32_t id = 0;
  while (bpf_prog_get_next_id(id, &id) == 0) {
    const int fd = bpf_prog_get_fd_by_id(id);
    if (fd < 0) continue;  // gone meanwhile
    uint32_t map_ids[64] = {};
    bpf_prog_info info{};
    info.nr_map_ids = 64;
    info.map_ids = reinterpret_cast<uint64_t>(map_ids);
    uint32_t len = sizeof(info);
    bool uses = false;
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
      for (uint32_t i = 0; i < info.nr_map_ids && i < 64; ++i) uses = uses || map_ids[i] == map_id;
    close(fd);
    if (uses) return true;
  }
  return false;
}

uint32_t MapId(int map_fd) {
  bpf_map_info info{};
  uint32_t len = sizeof(info);
  return bpf_obj_get_info_by_fd(map_fd, &info, &len) == 0 ? info.id : 0;
}

// The guardian's first steps, before it tells the capture it is there: whatever signals
// xtrace's process group or terminal gets must not reach it.
void DetachFromCapture() {
  prctl(PR_SET_NAME, "xtrace-guard", 0, 0, 0);
  // A session of its own: whatever kills xtrace's whole process group (a terminal's hangup, a
  // supervisor's `kill -KILL -PGID`, a test runner's timeout) must not take the guardian with
  // it, or what the capture held at that moment stays stopped for good.
  setsid();
  // Ctrl-C and the terminal's other signals go to the whole process group: the guardian
  // outlives xtrace on purpose, so it ignores them; a SIGTERM of its own (systemd stopping
  // the unit) makes it finish now, continuing everything still held.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  for (int sig : {SIGINT, SIGQUIT, SIGHUP, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU})
    sigaction(sig, &ignore, nullptr);
  struct sigaction term {};
  term.sa_handler = OnGuardTerminate;
  sigaction(SIGTERM, &term, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

// While a call the capture left is let finish, every other hold goes on.
struct ReleaseAll {
  std::atomic<uint64_t>* released;
};
void ReleaseAllBetween(void* arg) {
  ReleaseExpired(kGuardMap, GuardNowNs(), 0, 0, *static_cast<ReleaseAll*>(arg)->released, nullptr);
}

[[noreturn]] void GuardianMain(const HoldGuardian::Options& options, HoldGuardian::Tally* tally,
                               RemoteCallSlot* call_slot) {
  const uint32_t map_id = MapId(kGuardMap);
  pollfd pfd{kGuardPipe, POLLIN, 0};
  while (!g_guard_terminate) {
    const int r = poll(&pfd, 1, options.check_interval_ms);
    if (r > 0) {
      char buf[64];
      const ssize_t n = read(kGuardPipe, buf, sizeof(buf));
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) break;  // the capture is gone
    }
    ReleaseExpired(kGuardMap, GuardNowNs(), options.bound_ns, options.query_wait_ns,
                   tally->released_by_bound, call_slot);
  }
  // A thread the capture was calling into is put back first (its process is held meanwhile).
  ReleaseAll release_all{&tally->released_at_end};
  RecoverRemoteCall(call_slot, /*seize=*/true, kCallRecoveryTimeoutNs, ReleaseAllBetween, &release_all);
  // Everything still held goes on, and so does whatever the programs hold until they are gone.
  const uint64_t gone_by = GuardNowNs() + kProgramsGoneTimeoutNs;
  for (;;) {
    ReleaseExpired(kGuardMap, GuardNowNs(), 0, 0, tally->released_at_end, nullptr);
    if (!map_id || !MapInUse(map_id) || GuardNowNs() >= gone_by) break;
    const timespec pause{0, options.check_interval_ms * 1'000'000L};
    nanosleep(&pause, nullptr);
  }
  ReleaseExpired(kGuardMap, GuardNowNs(), 0, 0, tally->released_at_end, nullptr);
  _exit(0);
}

}  // namespace

bool HoldDue(uint64_t since_ns, uint64_t now_ns, uint64_t bound_ns) {
  // Further ahead than this, a hold's time is no reading of our clock: released, never kept.
  constexpr uint64_t kFutureSlackNs = 10'000'000'000ull;
  if (bound_ns == 0) return true;
  if (since_ns > now_ns) return since_ns - now_ns > kFutureSlackNs;
  return now_ns - since_ns >= bound_ns;
}

bool ContinueHeld(int held_map_fd, uint32_t pid, std::atomic<uint64_t>* count) {
  if (bpf_map_delete_elem(held_map_fd, &pid) != 0) return false;
  if (count) count->fetch_add(1);
  kill(static_cast<pid_t>(pid), SIGCONT);
  return true;
}

bool TakeHoldIf(int held_map_fd, uint32_t pid, uint64_t since_ns, uint32_t reason, uint32_t tid) {
  xt_hold taken{};
  if (bpf_map_lookup_and_delete_elem(held_map_fd, &pid, &taken) != 0) return false;
  if (taken.since_ns == since_ns && taken.reason == reason && (tid == 0 || taken.tid == tid)) return true;
  (void)bpf_map_update_elem(held_map_fd, &pid, &taken, BPF_NOEXIST);
  return false;
}

bool ContinueHeldIf(int held_map_fd, uint32_t pid, uint64_t since_ns, uint32_t reason,
                    std::atomic<uint64_t>* count) {
  if (!TakeHoldIf(held_map_fd, pid, since_ns, reason)) return false;
  if (count) count->fetch_add(1);
  kill(static_cast<pid_t>(pid), SIGCONT);
  return true;
}

uint64_t HoldBoundFrom(uint32_t pid, uint64_t since_ns, uint32_t reason, const RemoteCallSlot* slot) {
  if (!slot || reason != XT_HOLD_QUERY || pid == 0) return since_ns;
  // The capture clears lease_pid before it moves the lease to another hold: read around it.
  if (slot->lease_pid.load() != pid || slot->lease_since_ns.load() != since_ns) return since_ns;
  const uint64_t lease = slot->lease_ns.load();
  if (slot->lease_pid.load() != pid || slot->lease_since_ns.load() != since_ns) return since_ns;
  return lease > since_ns ? lease : since_ns;
}

uint64_t HoldBoundOf(uint64_t from_ns, uint64_t since_ns, uint32_t reason, uint64_t bound_ns,
                     uint64_t query_wait_ns) {
  if (bound_ns == 0 || reason != XT_HOLD_QUERY || query_wait_ns <= bound_ns) return bound_ns;
  // Taken up: the lease the capture renews is what the bound counts from.
  if (from_ns != since_ns) return bound_ns;
  return query_wait_ns;
}

void HoldGuardian::TallyUnmapper::operator()(Tally* t) const {
  t->~Tally();
  munmap(t, sizeof(Tally));
}

void HoldGuardian::SlotUnmapper::operator()(RemoteCallSlot* s) const {
  s->~RemoteCallSlot();
  munmap(s, sizeof(RemoteCallSlot));
}

Result<std::unique_ptr<HoldGuardian>> HoldGuardian::Start(int held_map_fd, const Options& options) {
  void* page = mmap(nullptr, sizeof(Tally), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return Status::Error(std::string("hold guardian: mmap: ") + std::strerror(errno));
  std::unique_ptr<HoldGuardian> g(new HoldGuardian());
  g->tally_.reset(new (page) Tally());
  void* slot_page = mmap(nullptr, sizeof(RemoteCallSlot), PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (slot_page == MAP_FAILED)
    return Status::Error(std::string("hold guardian: mmap: ") + std::strerror(errno));
  g->call_slot_.reset(new (slot_page) RemoteCallSlot());
  g->map_fd_ = held_map_fd;

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return Status::Error(std::string("hold guardian: pipe: ") + std::strerror(errno));
  UniqueFd read_end(fds[0]);
  g->pipe_write_.Reset(fds[1]);
  // The guardian says when it is out of xtrace's process group: until then a group kill
  // would take it along, so no hold may be taken before.
  if (pipe2(fds, O_CLOEXEC) != 0)
    return Status::Error(std::string("hold guardian: pipe: ") + std::strerror(errno));
  UniqueFd ready_read(fds[0]), ready_write(fds[1]);

  const pid_t pid = fork();
  if (pid < 0) return Status::Error(std::string("hold guardian: fork: ") + std::strerror(errno));
  if (pid == 0) {
    DetachFromCapture();
    const char ready = 1;
    if (write(ready_write.get(), &ready, 1) != 1) _exit(1);
    // Move the two descriptors it keeps to known numbers (above the ones in use, then down),
    // and close every other one.
    const int pipe_tmp = fcntl(read_end.get(), F_DUPFD, 1024);
    const int map_tmp = fcntl(held_map_fd, F_DUPFD, 1024);
    if (pipe_tmp < 0 || map_tmp < 0 || dup2(pipe_tmp, kGuardPipe) < 0 || dup2(map_tmp, kGuardMap) < 0)
      _exit(1);
    close_range(kGuardMap + 1, ~0u, 0);
    GuardianMain(options, g->tally_.get(), g->call_slot_.get());
  }
  g->pid_ = pid;
  ready_write.Reset();
  char ready = 0;
  ssize_t n;
  while ((n = read(ready_read.get(), &ready, 1)) < 0 && errno == EINTR) {
  }
  if (n != 1) return Status::Error("hold guardian: it exited before it was ready");
  return g;
}

HoldGuardian::~HoldGuardian() {
  pipe_write_.Reset();
  // A call the capture handed over, still running in the process, is the guardian's to let
  // finish however long it takes (remote_call.h): the capture does not wait for it, and must
  // not (the guardian can seize the thread only once the capture is gone).
  if (call_slot_ && call_slot_->state.load() == static_cast<uint32_t>(RemoteCallState::kModified)) return;
  if (pid_ > 0) {
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

bool HoldGuardian::Release(uint32_t pid) { return ContinueHeld(map_fd_, pid); }

bool HoldGuardian::ReleaseIf(uint32_t pid, uint64_t since_ns, uint32_t reason) {
  return ContinueHeldIf(map_fd_, pid, since_ns, reason);
}

}  // namespace xtrace
