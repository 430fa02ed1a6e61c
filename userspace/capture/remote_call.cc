// ptrace mechanics of a call in another process's thread. Everything RecoverRemoteCall
// reaches is a system call or plain arithmetic (no allocation, no stdio, no locks): the hold
// guardian runs it in a forked copy of xtrace.
#include "capture/remote_call.h"

#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "base/read_file.h"

namespace xtrace {
namespace {

constexpr uint64_t kRflagsTrap = 1u << 8;       // TF: single-step
constexpr uint64_t kRflagsDirection = 1u << 10;  // DF: must be clear at a call (System V ABI)

uint64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

void SleepNs(uint64_t ns) {
  timespec ts{static_cast<time_t>(ns / 1000000000ull), static_cast<long>(ns % 1000000000ull)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

bool IsStopSignal(int sig) { return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU; }

// Waits until `tid` reports a ptrace stop (any kind: each lets us read and set its registers),
// until `deadline`. A signal the thread was about to receive is added to *signals, to be
// delivered when the thread is let go (restarting it now, with 0, suppresses it), except a
// stop signal: a process held by xtrace is continued by xtrace, and a stop delivered after
// that would leave it stopped for good (a stop sent during a hold is undone with the hold, as
// for every hold). Returns false if the thread is gone or the deadline passed.
bool WaitStop(pid_t tid, uint64_t* signals, uint64_t deadline, bool poll_once = false) {
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(tid, &status, __WALL | WNOHANG);
    if (r == tid) {
      if (!WIFSTOPPED(status)) return false;  // exited or killed
      const int sig = WSTOPSIG(status);
      if ((status >> 16) == 0 && sig != SIGTRAP && !IsStopSignal(sig) && sig < 64)
        *signals |= uint64_t{1} << sig;
      return true;
    }
    if (r < 0 && errno != EINTR) return false;
    if (poll_once || NowNs() >= deadline) return false;
    SleepNs(20'000);
  }
}

// Stops the running thread: takes the stop it reported by itself if it did, else interrupts
// it. Never interrupts a stopped thread: the interrupt would stay pending and stop it again as
// soon as it is restarted, before it runs a single instruction.
bool StopThread(pid_t tid, uint64_t* signals, uint64_t deadline) {
  if (WaitStop(tid, signals, deadline, /*poll_once=*/true)) return true;
  if (ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) return false;
  return WaitStop(tid, signals, deadline);
}

// Lets the thread go (it must be in a ptrace stop) with the signals it missed meanwhile.
void DetachWithSignals(pid_t tid, uint32_t pid, uint64_t signals) {
  int first = 0;
  for (int sig = 1; sig < 64 && !first; ++sig)
    if (signals & (uint64_t{1} << sig)) first = sig;
  ptrace(PTRACE_DETACH, tid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(first)));
  for (int sig = first + 1; sig < 64; ++sig)
    if (signals & (uint64_t{1} << sig)) kill(static_cast<pid_t>(pid), sig);
}

bool GetRegs(pid_t tid, user_regs_struct* regs) {
  return ptrace(PTRACE_GETREGS, tid, nullptr, regs) == 0;
}

bool WriteRemote(uint32_t pid, uint64_t address, const void* data, size_t size) {
  iovec local{const_cast<void*>(data), size};
  iovec remote{reinterpret_cast<void*>(address), size};
  return process_vm_writev(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0) ==
         static_cast<ssize_t>(size);
}

bool ReadRemote(uint32_t pid, uint64_t address, void* data, size_t size) {
  iovec local{data, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  return process_vm_readv(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0) ==
         static_cast<ssize_t>(size);
}

// Reads a small /proc file of thread `tid` into `buf` (NUL-terminated); false if unreadable.
// open/read/close only, no allocation: the guardian calls this.
bool ReadThreadFile(uint32_t pid, pid_t tid, const char* name, char* buf, size_t size) {
  char path[64];
  char* at = path;
  auto put = [&](const char* text) {
    while (*text && at < path + sizeof(path) - 1) *at++ = *text++;
  };
  auto put_number = [&](uint64_t v) {
    char digits[24];
    int n = 0;
    do digits[n++] = static_cast<char>('0' + v % 10); while ((v /= 10) && n < 24);
    while (n && at < path + sizeof(path) - 1) *at++ = digits[--n];
  };
  put("/proc/");
  put_number(pid);
  put("/task/");
  put_number(static_cast<uint64_t>(tid));
  put("/");
  put(name);
  *at = '\0';
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = read(fd, buf, size - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  return true;
}

// The CPU time thread `tid` has had (schedstat's first field), and whether it is runnable.
bool ThreadProgress(uint32_t pid, pid_t tid, uint64_t* cpu_ns, bool* runnable) {
  char buf[512];
  if (!ReadThreadFile(pid, tid, "schedstat", buf, sizeof(buf))) return false;
  *cpu_ns = std::strtoull(buf, nullptr, 10);
  if (!ReadThreadFile(pid, tid, "stat", buf, sizeof(buf))) return false;
  const char* paren = std::strrchr(buf, ')');
  *runnable = paren && paren[1] == ' ' && paren[2] == 'R';
  return true;
}

// Runs the stopped thread until it reaches the slot's loop (the call returned) or `deadline`;
// it is stopped again either way. True when it reached the loop. The thread is looked at
// (stopped with PTRACE_INTERRUPT) only once it has had the CPU for a while or is asleep in the
// call: on a loaded machine a woken thread may wait milliseconds for a CPU, and stopping it
// before it ran would look at the same instruction forever.
bool RunToLoop(uint32_t pid, pid_t tid, uint64_t loop, uint64_t* signals, uint64_t deadline) {
  constexpr uint64_t kRanEnoughNs = 20'000;
  user_regs_struct regs{};
  if (!GetRegs(tid, &regs)) return false;
  while (regs.rip != loop) {
    if (NowNs() >= deadline) return false;
    uint64_t cpu_at_start = 0, cpu_now = 0;
    bool runnable = true;
    const bool progress_known = ThreadProgress(pid, tid, &cpu_at_start, &runnable);
    if (ptrace(PTRACE_CONT, tid, nullptr, nullptr) != 0) return false;
    uint64_t pause = 5'000;
    for (;;) {
      SleepNs(pause);
      pause = pause < 1'000'000 ? pause * 2 : pause;
      if (NowNs() >= deadline || !progress_known) break;
      if (!ThreadProgress(pid, tid, &cpu_now, &runnable)) break;
      if (!runnable || cpu_now - cpu_at_start >= kRanEnoughNs) break;
    }
    if (!StopThread(tid, signals, deadline + 100'000'000)) return false;
    if (!GetRegs(tid, &regs)) return false;
  }
  return true;
}

// Writes back what the slot saved: stack bytes, errno, extended state, registers.
bool RestoreThread(const RemoteCallSlot* slot) {
  const pid_t tid = static_cast<pid_t>(slot->tid);
  bool ok = true;
  if (slot->stack_len) ok = WriteRemote(slot->pid, slot->stack_address, slot->stack, slot->stack_len) && ok;
  if (slot->errno_address)
    ok = WriteRemote(slot->pid, slot->errno_address, &slot->errno_value, sizeof(slot->errno_value)) && ok;
  if (slot->xstate_len) {
    iovec iov{const_cast<uint8_t*>(slot->xstate), slot->xstate_len};
    ok = ptrace(PTRACE_SETREGSET, tid, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) == 0 && ok;
  }
  ok = ptrace(PTRACE_SETREGS, tid, nullptr, &slot->regs) == 0 && ok;
  return ok;
}

void SetState(RemoteCallSlot* slot, RemoteCallState s) {
  slot->state.store(static_cast<uint32_t>(s), std::memory_order_seq_cst);
}

// The mapping of /proc/PID/maps that contains `address`: its start, or 0.
uint64_t MappingStart(uint32_t pid, uint64_t address) {
  auto maps = ReadWholeFile("/proc/" + std::to_string(pid) + "/maps");
  if (!maps) return 0;
  size_t pos = 0;
  while (pos < maps->size()) {
    size_t eol = maps->find('\n', pos);
    if (eol == std::string::npos) eol = maps->size();
    unsigned long long start = 0, end = 0;
    if (std::sscanf(maps->c_str() + pos, "%llx-%llx", &start, &end) == 2 && address >= start &&
        address < end)
      return start;
    pos = eol + 1;
  }
  return 0;
}

}  // namespace

std::string OtherTracer(uint32_t pid, uint32_t self_pid) {
  auto status = ReadWholeFile("/proc/" + std::to_string(pid) + "/status");
  if (!status) return "";
  const size_t at = status->find("TracerPid:");
  if (at == std::string::npos) return "";
  const unsigned long tracer = std::strtoul(status->c_str() + at + 10, nullptr, 10);
  if (tracer == 0 || tracer == self_pid) return "";
  std::string comm = ReadWholeFile("/proc/" + std::to_string(tracer) + "/comm").value_or("");
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  return "it is traced by pid " + std::to_string(tracer) + (comm.empty() ? "" : " (" + comm + ")");
}

Result<std::unique_ptr<RemoteCallSession>> RemoteCallSession::Begin(
    uint32_t pid, uint32_t tid, uint64_t ip_low, uint64_t ip_high, uint64_t loop_address,
    RemoteCallSlot* slot, uint64_t timeout_ns) {
  const uint64_t deadline = NowNs() + timeout_ns;
  const pid_t t = static_cast<pid_t>(tid);
  if (ptrace(PTRACE_SEIZE, t, nullptr, nullptr) != 0)
    return Status::Error("ptrace(PTRACE_SEIZE) of thread " + std::to_string(tid) + ": " +
                         std::strerror(errno));
  std::unique_ptr<RemoteCallSession> s(new RemoteCallSession());
  s->slot_ = slot;
  s->tid_ = t;
  s->pid_ = pid;
  slot->pid = pid;
  slot->tid = tid;
  slot->loop_address = loop_address;
  slot->stack_len = 0;
  slot->errno_address = 0;
  slot->xstate_len = 0;
  // From here the destructor detaches.
  if (ptrace(PTRACE_INTERRUPT, t, nullptr, nullptr) != 0 || !WaitStop(t, &s->pending_signals_, deadline)) {
    s->ended_ = true;
    ptrace(PTRACE_DETACH, t, nullptr, nullptr);
    return Status::Error("thread " + std::to_string(tid) + " did not stop for ptrace");
  }
  if (!GetRegs(t, &slot->regs)) return Status::Error(std::string("PTRACE_GETREGS: ") + std::strerror(errno));
  if (slot->regs.rip < ip_low || slot->regs.rip >= ip_high) {
    char where[96];
    std::snprintf(where, sizeof(where), "at 0x%llx, not at the call it was held in (0x%" PRIx64 ")",
                  static_cast<unsigned long long>(slot->regs.rip), ip_low);
    return Status::Error(std::string("thread ") + std::to_string(tid) + " is " + where);
  }
  // The rest of the process goes on: a thread seized with PTRACE_SEIZE does not leave a group
  // stop when restarted (it traps again at once), and the other threads need not wait. This
  // one stays in its ptrace stop until we restart it.
  kill(static_cast<pid_t>(pid), SIGCONT);
  iovec iov{slot->xstate, kXstateBytes};
  if (ptrace(PTRACE_GETREGSET, t, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) != 0)
    return Status::Error(std::string("PTRACE_GETREGSET(NT_X86_XSTATE): ") + std::strerror(errno));
  slot->xstate_len = static_cast<uint32_t>(iov.iov_len);

  // The frame: scratch space 16-aligned below the red zone, the return address under it;
  // never below the start of the stack's mapping (ptrace does not grow a stack).
  const uint64_t top = slot->regs.rsp - kRedZoneBytes;
  const uint64_t floor = MappingStart(pid, slot->regs.rsp);
  if (floor == 0 || top <= floor + 64)
    return Status::Error("no room on thread " + std::to_string(tid) + "'s stack");
  const uint64_t room = std::min<uint64_t>(kRemoteScratchBytes, (top - floor - 32) & ~uint64_t{15});
  const uint64_t base = (top - room) & ~uint64_t{15};
  s->scratch_ = base;
  s->scratch_bytes_ = static_cast<uint32_t>(top - base) & ~15u;
  slot->stack_address = base - 8;
  slot->stack_len = static_cast<uint32_t>(top - slot->stack_address);
  if (slot->stack_len > sizeof(slot->stack) ||
      !ReadRemote(pid, slot->stack_address, slot->stack, slot->stack_len)) {
    slot->stack_len = 0;
    return Status::Error("cannot read thread " + std::to_string(tid) + "'s stack");
  }
  return s;
}

RemoteCallSession::~RemoteCallSession() {
  if (!ended_) (void)End();
}

Status RemoteCallSession::Write(uint64_t address, const void* data, size_t size) {
  if (!WriteRemote(pid_, address, data, size))
    return Status::Error(std::string("process_vm_writev: ") + std::strerror(errno));
  return Status::Ok();
}

Status RemoteCallSession::Read(uint64_t address, void* data, size_t size) const {
  if (!ReadRemote(pid_, address, data, size))
    return Status::Error(std::string("process_vm_readv: ") + std::strerror(errno));
  return Status::Ok();
}

Status RemoteCallSession::SaveErrno(uint64_t errno_location, uint64_t timeout_ns) {
  if (errno_location == 0) return Status::Ok();
  auto address = Call(errno_location, {}, timeout_ns);
  if (!address.ok()) return address.status().WithContext("__errno_location");
  int32_t value = 0;
  if (Status st = Read(*address, &value, sizeof(value)); !st.ok()) return st.WithContext("errno");
  slot_->errno_value = value;
  slot_->errno_address = *address;
  return Status::Ok();
}

Result<uint64_t> RemoteCallSession::Call(uint64_t function, std::initializer_list<uint64_t> args,
                                         uint64_t timeout_ns) {
  if (args.size() > 6) return Status::Error("more than six arguments");
  const uint64_t deadline = NowNs() + timeout_ns;
  user_regs_struct regs = slot_->regs;
  const uint64_t ret_slot = scratch_ - 8;
  const uint64_t loop = slot_->loop_address;
  unsigned long long* argument_registers[] = {&regs.rdi, &regs.rsi, &regs.rdx,
                                              &regs.rcx, &regs.r8,  &regs.r9};
  size_t i = 0;
  for (uint64_t a : args) *argument_registers[i++] = a;
  regs.rip = function;
  regs.rsp = ret_slot;
  regs.rax = 0;                  // no vector registers for a variadic callee
  regs.orig_rax = ~0ull;         // not in a system call: nothing to restart
  regs.eflags &= ~(kRflagsTrap | kRflagsDirection);
  SetState(slot_, RemoteCallState::kModified);
  if (Status st = Write(ret_slot, &loop, sizeof(loop)); !st.ok()) return st;
  if (ptrace(PTRACE_SETREGS, tid_, nullptr, &regs) != 0)
    return Status::Error(std::string("PTRACE_SETREGS: ") + std::strerror(errno));
  if (!RunToLoop(pid_, tid_, loop, &pending_signals_, deadline)) {
    // Still inside the function (or gone): it is abandoned where it is, the thread put back.
    SetState(slot_, RemoteCallState::kRestoring);
    (void)RestoreThread(slot_);
    char text[64];
    std::snprintf(text, sizeof(text), "did not return within %.0f ms", timeout_ns / 1e6);
    return Status::Error(text);
  }
  user_regs_struct after{};
  if (!GetRegs(tid_, &after)) return Status::Error(std::string("PTRACE_GETREGS: ") + std::strerror(errno));
  return static_cast<uint64_t>(after.rax);
}

Status RemoteCallSession::End() {
  if (ended_) return Status::Ok();
  ended_ = true;
  Status st = Status::Ok();
  if (slot_->state.load() != static_cast<uint32_t>(RemoteCallState::kOwned)) {
    // Restoring is idempotent: the guardian redoes it from the slot if we die here.
    SetState(slot_, RemoteCallState::kRestoring);
    if (!RestoreThread(slot_)) st = Status::Error("thread " + std::to_string(tid_) + " could not be restored");
  }
  DetachWithSignals(tid_, pid_, pending_signals_);
  SetState(slot_, RemoteCallState::kOwned);
  return st;
}

bool RecoverRemoteCall(RemoteCallSlot* slot, bool seize, uint64_t timeout_ns) {
  const uint32_t state = slot->state.load();
  if (state == static_cast<uint32_t>(RemoteCallState::kFree)) return true;
  bool ok = true;
  const bool modified = state == static_cast<uint32_t>(RemoteCallState::kModified);
  if (modified || state == static_cast<uint32_t>(RemoteCallState::kRestoring)) {
    const pid_t tid = static_cast<pid_t>(slot->tid);
    const uint64_t deadline = NowNs() + timeout_ns;
    uint64_t signals = 0;
    if (seize) {
      // The capture's ptrace ends only once it has exited all the way: retry until then.
      while (ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) {
        if (errno == ESRCH || NowNs() >= deadline) {
          ok = false;
          break;
        }
        SleepNs(1'000'000);
      }
      if (ok) ok = ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) == 0 && WaitStop(tid, &signals, deadline);
      // Out of a group stop (the capture may have died before it ended it), or the call
      // could not run on.
      if (ok) kill(static_cast<pid_t>(slot->pid), SIGCONT);
    }
    if (ok) {
      // A call in progress finishes first (it may hold a lock); one that does not is
      // abandoned. Once restoring began, the thread may be back at its own code: never run it.
      if (modified) (void)RunToLoop(slot->pid, tid, slot->loop_address, &signals, deadline);
      ok = RestoreThread(slot);
      DetachWithSignals(tid, slot->pid, signals);
    }
  }
  kill(static_cast<pid_t>(slot->pid), SIGCONT);
  SetState(slot, RemoteCallState::kFree);
  return ok;
}

}  // namespace xtrace
