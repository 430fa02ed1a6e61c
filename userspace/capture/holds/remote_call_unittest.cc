// Tests for capture/holds/remote_call: a call into a stopped child returns its result and leaves the
// child exactly as it was (registers, errno, stack bytes below the red zone: it goes on and
// checks itself); a call that does not return within its bound is never undone in the middle
// but let finish, its thread put back once it returned (a lock it takes stays usable); a call whose
// caller dies in the middle is finished and undone by RecoverRemoteCall, as the hold
// guardian does when xtrace is SIGKILLed. Also FindSelfLoop on libc.
#include "capture/holds/remote_call.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "base/read_file.h"
#include "capture/sources/ze_query.h"

namespace xtrace {
namespace {

constexpr int kChildErrno = 1234;
volatile uint64_t g_spins = 0;
volatile uint64_t g_slow_calls = 0;
volatile uint64_t g_usr1 = 0;  // SIGUSR1s the child took

extern "C" __attribute__((noinline, used)) uint64_t RemoteCallTestMultiply(uint64_t a, uint64_t b,
                                                                           uint64_t* out) {
  errno = 77;  // the call clobbers errno: the session must put the child's back
  if (out) *out = a * b + 1;
  return a * b;
}

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

// Takes a lock of the child's, holds it for `ms`, lets it go: a call undone in the middle
// would leave it taken (the child checks it is free as it ends: exit 5 if not).
extern "C" __attribute__((noinline, used)) uint64_t RemoteCallTestSlowLocked(uint64_t ms) {
  pthread_mutex_lock(&g_lock);
  g_slow_calls = g_slow_calls + 1;
  const timespec pause{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
  nanosleep(&pause, nullptr);
  pthread_mutex_unlock(&g_lock);
  return 9;
}

extern "C" __attribute__((noinline, used)) uint64_t RemoteCallTestSlow(uint64_t ms) {
  g_slow_calls = g_slow_calls + 1;
  const timespec pause{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
  nanosleep(&pause, nullptr);
  return 5;
}

// Spins with errno set and checks it on SIGTERM: exit 0 if errno and the spinning survived.
// (errno through a volatile pointer: a plain store before an endless loop is dropped.) Says
// on `ready` when its handlers are in place, just before its loop.
[[noreturn]] void ChildMain(int ready) {
  signal(SIGUSR1, [](int) { g_usr1 = g_usr1 + 1; });
  signal(SIGTERM, [](int) {
    if (pthread_mutex_trylock(&g_lock) != 0) _exit(5);  // a call left the lock taken
    _exit(*static_cast<volatile int*>(&errno) != kChildErrno ? 3 : g_spins > 0 ? 0 : 4);
  });
  *static_cast<volatile int*>(&errno) = kChildErrno;  // a write or close that succeeds keeps it
  const char byte = 1;
  if (write(ready, &byte, 1) != 1) _exit(6);
  close(ready);
  for (;;) g_spins = g_spins + 1;
}

// A spinning child, stopped with SIGSTOP as a hold stops a process. Stopped only once it said
// it is ready: stopped earlier (a fork's child waits long for a core on a loaded machine), a
// SIGUSR1 sent before its handler is in kills it, and errno is not yet the one it checks.
pid_t StartStoppedChild() {
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(ready[0]);
    ChildMain(ready[1]);
  }
  close(ready[1]);
  char byte = 0;
  const ssize_t n = read(ready[0], &byte, 1);
  close(ready[0]);
  if (n != 1) return -1;  // the child died before it was ready
  // A moment to reach the loop: the tests call into a thread stopped in its own code, not in
  // the pipe's syscalls. (Stopped sooner, the checks at the end still hold: errno was set
  // before the pipe, and EndChild waits for the loop to spin.)
  timespec pause{0, 2'000'000};
  nanosleep(&pause, nullptr);
  kill(pid, SIGSTOP);
  int status = 0;
  waitpid(pid, &status, WUNTRACED);
  return pid;
}

uint64_t ChildWord(pid_t pid, const volatile uint64_t* at) {
  uint64_t v = 0;
  iovec local{&v, sizeof(v)}, remote{const_cast<uint64_t*>(at), sizeof(v)};
  process_vm_readv(pid, &local, 1, &remote, 1, 0);
  return v;
}

// Continues the child, waits (up to 5 s: a loaded machine is slow to give it a core) until
// its loop spins on, and ends it: its exit status says whether it went on as it was (128 + 9:
// it did not spin on).
int EndChild(pid_t pid) {
  const uint64_t spins = ChildWord(pid, &g_spins);
  kill(pid, SIGCONT);
  bool spun = false;
  for (int i = 0; i < 500 && !spun; ++i) {
    timespec pause{0, 10'000'000};
    nanosleep(&pause, nullptr);
    spun = ChildWord(pid, &g_spins) != spins;
  }
  kill(pid, spun ? SIGTERM : SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

uint64_t Address(const void* p) { return reinterpret_cast<uint64_t>(p); }

// libc's `jmp .`, at the same address in a forked child.
uint64_t LibcLoop() {
  auto maps = ReadWholeFile("/proc/self/maps");
  if (!maps) return 0;
  size_t pos = 0;
  while (pos < maps->size()) {
    size_t eol = maps->find('\n', pos);
    if (eol == std::string::npos) eol = maps->size();
    const std::string line = maps->substr(pos, eol - pos);
    pos = eol + 1;
    unsigned long long start = 0, end = 0, offset = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx", &start, &end, perms, &offset) != 4) continue;
    const size_t slash = line.find('/');
    if (offset != 0 || slash == std::string::npos || line.find("/libc.so") == std::string::npos) continue;
    auto loop = FindSelfLoop(line.substr(slash));
    return loop.ok() ? start + *loop : 0;
  }
  return 0;
}

uint64_t StackWord(pid_t pid, uint64_t at) {
  uint64_t v = 0;
  iovec local{&v, sizeof(v)}, remote{reinterpret_cast<void*>(at), sizeof(v)};
  process_vm_readv(pid, &local, 1, &remote, 1, 0);
  return v;
}

// A spinning child stopped as a hold stops it, with a call session begun on it (its slot
// owned by this process): what most tests here start from.
class RemoteCallTest : public ::testing::Test {
 protected:
  void BeginOnStoppedChild() {
    loop = LibcLoop();
    ASSERT_NE(loop, 0u);
    child = StartStoppedChild();
    ASSERT_GT(child, 0) << "the child died before it was ready";
    slot.state = static_cast<uint32_t>(RemoteCallState::kOwned);
    auto begun = RemoteCallSession::Begin(child, child, 0, UINT64_MAX, loop, &slot, 1'000'000'000);
    ASSERT_TRUE(begun.ok()) << begun.status().message();
    session = std::move(*begun);
  }

  uint64_t loop = 0;
  pid_t child = 0;
  RemoteCallSlot slot;
  std::unique_ptr<RemoteCallSession> session;
};

TEST_F(RemoteCallTest, CallsAFunctionInAStoppedChildAndPutsEverythingBack) {
  ASSERT_NO_FATAL_FAILURE(BeginOnStoppedChild());
  const uint64_t return_slot = slot.stack_address;  // the lowest word the calls write
  ASSERT_LT(return_slot, slot.regs.rsp - kRedZoneBytes);
  const uint64_t stack_before = StackWord(child, return_slot);
  ASSERT_TRUE(session->SaveErrno(Address(reinterpret_cast<void*>(&__errno_location)), 1'000'000'000).ok());
  EXPECT_EQ(slot.errno_value, kChildErrno);
  EXPECT_EQ(session->scratch() % 16, 0u);
  EXPECT_LE(session->scratch() + session->scratch_bytes(), slot.regs.rsp - kRedZoneBytes);

  const uint64_t out_at = session->scratch();
  auto r = session->Call(Address(reinterpret_cast<void*>(&RemoteCallTestMultiply)), {6, 7, out_at},
                            1'000'000'000);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, 42u);
  uint64_t out = 0;
  ASSERT_TRUE(session->Read(out_at, &out, sizeof(out)).ok());
  EXPECT_EQ(out, 43u);
  EXPECT_EQ(StackWord(child, return_slot), loop) << "the call returned through that word";
  ASSERT_TRUE(session->End().ok());
  EXPECT_EQ(StackWord(child, return_slot), stack_before);
  EXPECT_EQ(slot.state.load(), static_cast<uint32_t>(RemoteCallState::kOwned));
  EXPECT_EQ(EndChild(child), 0) << "the child did not go on as it was (errno or registers)";
}

// The call holds a lock of the child's and outlasts its bound (50 ms of 300): it is not
// undone there (the old way: the child put back with the lock taken, exit 5 at its end) but
// let finish; Finish puts the child back once it returned, and the child goes on.
TEST_F(RemoteCallTest, ACallPastItsBoundIsLetFinishAndThenTheChildPutBack) {
  ASSERT_NO_FATAL_FAILURE(BeginOnStoppedChild());
  auto r = session->Call(Address(reinterpret_cast<void*>(&RemoteCallTestSlowLocked)), {300}, 50'000'000);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("did not return within 50 ms (let finish)"), std::string::npos)
      << r.status().message();
  EXPECT_TRUE(session->unfinished());
  EXPECT_FALSE(session->End().ok()) << "a session is never ended in the middle of a call";
  EXPECT_FALSE(session->Call(Address(reinterpret_cast<void*>(&RemoteCallTestMultiply)), {1, 2, 0},
                                1'000'000'000)
                   .ok());
  EXPECT_EQ(slot.state.load(), static_cast<uint32_t>(RemoteCallState::kModified));
  bool finished = false;
  for (int i = 0; i < 500 && !finished; ++i) finished = session->Finish(10'000'000);
  ASSERT_TRUE(finished);
  EXPECT_EQ(slot.state.load(), static_cast<uint32_t>(RemoteCallState::kOwned));
  EXPECT_EQ(ChildWord(child, &g_slow_calls), 1u) << "the call ran once, to its end";
  EXPECT_EQ(EndChild(child), 0) << "5: the call's lock was left taken";
}

// A signal sent to the thread while xtrace holds it in a ptrace stop comes to the thread as
// it restarts for the call; xtrace keeps it from the call and gives it back at the end. The
// end is an interrupt's stop, from which PTRACE_DETACH drops a signal it is given: the child
// must still take it, once.
TEST_F(RemoteCallTest, ASignalThatCameDuringACallIsTakenAfterTheEnd) {
  ASSERT_NO_FATAL_FAILURE(BeginOnStoppedChild());
  ASSERT_EQ(syscall(SYS_tgkill, child, child, SIGUSR1), 0);
  auto r = session->Call(Address(reinterpret_cast<void*>(&RemoteCallTestSlow)), {20}, 1'000'000'000);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, 5u);
  EXPECT_EQ(ChildWord(child, &g_usr1), 0u) << "the handler ran inside the call";
  ASSERT_TRUE(session->End().ok());
  uint64_t taken = 0;
  for (int i = 0; i < 200 && taken == 0; ++i) {
    timespec pause{0, 5'000'000};
    nanosleep(&pause, nullptr);
    taken = ChildWord(child, &g_usr1);
  }
  EXPECT_EQ(taken, 1u) << "the signal that came during the call was lost";
  EXPECT_EQ(EndChild(child), 0) << "the child did not go on as it was";
}

TEST_F(RemoteCallTest, TheGuardianFinishesAndUndoesACallWhoseCallerDied) {
  loop = LibcLoop();
  ASSERT_NE(loop, 0u);
  child = StartStoppedChild();
  ASSERT_GT(child, 0) << "the child died before it was ready";
  void* page = mmap(nullptr, sizeof(RemoteCallSlot), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  auto* shared = new (page) RemoteCallSlot();  // shared with the caller, another process
  shared->state = static_cast<uint32_t>(RemoteCallState::kOwned);
  // The caller: another process that starts a 300 ms call and dies 50 ms into it, as xtrace
  // SIGKILLed mid-query.
  const pid_t caller = fork();
  if (caller == 0) {
    auto begun = RemoteCallSession::Begin(child, child, 0, UINT64_MAX, loop, shared, 1'000'000'000);
    if (!begun.ok()) _exit(2);
    if (!(*begun)->SaveErrno(Address(reinterpret_cast<void*>(&__errno_location)), 1'000'000'000).ok()) _exit(3);
    const pid_t killer = fork();
    if (killer == 0) {
      timespec pause{0, 50'000'000};
      nanosleep(&pause, nullptr);
      kill(getppid(), SIGKILL);
      _exit(0);
    }
    (void)(*begun)->Call(Address(reinterpret_cast<void*>(&RemoteCallTestSlow)), {300}, 10'000'000'000);
    _exit(4);  // not reached: killed mid-call
  }
  int status = 0;
  waitpid(caller, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
    EndChild(child);
    GTEST_SKIP() << "a process may not ptrace its sibling here (Yama's ptrace_scope; root may)";
  }
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_EQ(shared->state.load(), static_cast<uint32_t>(RemoteCallState::kModified));
  EXPECT_TRUE(RecoverRemoteCall(shared, /*seize=*/true, 2'000'000'000));
  EXPECT_EQ(shared->state.load(), static_cast<uint32_t>(RemoteCallState::kFree));
  uint64_t calls = 0;
  iovec local{&calls, sizeof(calls)}, remote{const_cast<uint64_t*>(&g_slow_calls), sizeof(calls)};
  process_vm_readv(child, &local, 1, &remote, 1, 0);
  EXPECT_EQ(calls, 1u) << "the call in progress ran once, to its end";
  EXPECT_EQ(EndChild(child), 0) << "the child did not go on as it was";
  shared->~RemoteCallSlot();
  munmap(page, sizeof(RemoteCallSlot));
}

TEST_F(RemoteCallTest, OtherTracerNamesNoneForAProcessNobodyTraces) {
  EXPECT_EQ(OtherTracer(static_cast<uint32_t>(getpid()), 0), "");
}

TEST(FindSelfLoopTest, RefusesAFileThatIsNotElf) {
  EXPECT_FALSE(FindSelfLoop("/proc/self/status").ok());
}

}  // namespace
}  // namespace xtrace
