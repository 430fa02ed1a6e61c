// ptrace mechanics of a call in another process's thread. Everything RecoverRemoteCall
// reaches is a system call or plain arithmetic (no allocation, no stdio, no locks): the hold
// guardian runs it in a forked copy of xtrace.
#include "capture/holds/remote_call.h"

#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
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

enum class Wait { kStopped, kNotYet, kGone };

// Waits until the thread reports a ptrace stop (any kind: each lets us read and set its
// registers), until `deadline` (0: looks once). A signal the thread was about to receive is
// added to t->signals, to be delivered when the thread is let go (restarting it now, with 0,
// suppresses it), except a stop signal: a process held by xtrace is continued by xtrace, and
// a stop delivered after that would leave it stopped for good (a stop sent during a hold is
// undone with the hold, as for every hold).
Wait WaitStop(RemoteTracee* t, uint64_t deadline) {
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(t->tid, &status, __WALL | WNOHANG);
    if (r == t->tid) {
      if (!WIFSTOPPED(status)) return Wait::kGone;  // exited or killed
      const int sig = WSTOPSIG(status);
      if ((status >> 16) == 0 && sig != SIGTRAP && !IsStopSignal(sig) && sig < 64)
        t->signals |= uint64_t{1} << sig;
      t->stopped = true;
      // Any stop answers the interrupt as far as we go: one still owed after a signal's stop
      // comes right after the next restart, is collected the same way, and a detach from a
      // stop drops whatever is still owed.
      t->interrupt_pending = false;
      return Wait::kStopped;
    }
    if (r < 0 && errno != EINTR) return Wait::kGone;  // not ours any more
    if (NowNs() >= deadline) return Wait::kNotYet;
    SleepNs(20'000);
  }
}

// Asks the thread to stop (unless it was asked already or is stopped) and waits for the stop
// until `deadline`. Never interrupts a stopped thread: the interrupt would stay pending and
// stop it again as soon as it is restarted, before it runs a single instruction.
Wait StopThread(RemoteTracee* t, uint64_t deadline) {
  if (t->stopped) return Wait::kStopped;
  if (!t->interrupt_pending) {
    if (WaitStop(t, 0) == Wait::kStopped) return Wait::kStopped;  // it stopped by itself
    if (ptrace(PTRACE_INTERRUPT, t->tid, nullptr, nullptr) != 0) return Wait::kGone;
    t->interrupt_pending = true;
  }
  return WaitStop(t, deadline);
}

bool Restart(RemoteTracee* t);

// Lets the thread go (it must be in a ptrace stop) with the signals it missed meanwhile.
// They are sent to it again after the detach rather than passed to PTRACE_DETACH: the kernel
// delivers PTRACE_DETACH's signal only from a signal-delivery stop and drops it silently from
// the other stops (an interrupt's or a group stop's), which is where a call ends. Sent to the
// thread that was about to take each of them, it takes them as it would have.
bool DetachWithSignals(RemoteTracee* t) {
  const bool ok = ptrace(PTRACE_DETACH, t->tid, nullptr, nullptr) == 0;
  for (int sig = 1; sig < 64; ++sig)
    if (t->signals & (uint64_t{1} << sig))
      syscall(SYS_tgkill, static_cast<pid_t>(t->pid), t->tid, sig);
  t->signals = 0;
  t->stopped = false;
  return ok;
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

// Restarts the stopped thread, noting its CPU time so far (RunToLoop looks at it again once
// it has run for a while).
bool Restart(RemoteTracee* t) {
  bool runnable = true;
  t->cpu_known = ThreadProgress(t->pid, t->tid, &t->cpu_mark, &runnable);
  if (ptrace(PTRACE_CONT, t->tid, nullptr, nullptr) != 0) return false;
  t->stopped = false;
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

CallProgress RunToLoop(RemoteTracee* t, uint64_t loop, uint64_t deadline) {
  constexpr uint64_t kRanEnoughNs = 20'000;
  constexpr uint64_t kLongestPauseNs = 1'000'000;
  for (;;) {
    if (!t->stopped) {
      if (!t->interrupt_pending) {
        // Running: let it have the CPU for a while (or fall asleep in the call) before a look.
        for (;;) {
          if (WaitStop(t, 0) != Wait::kNotYet) break;  // it stopped by itself (a signal), or went
          if (NowNs() >= deadline) return CallProgress::kRunning;
          uint64_t cpu_now = 0;
          bool runnable = true;
          if (!t->cpu_known || !ThreadProgress(t->pid, t->tid, &cpu_now, &runnable)) break;
          if (!runnable || cpu_now - t->cpu_mark >= kRanEnoughNs) break;
          t->pause_ns = t->pause_ns ? std::min(t->pause_ns * 2, kLongestPauseNs) : 5'000;
          SleepNs(t->pause_ns);
        }
      }
      const Wait w = StopThread(t, deadline);
      if (w == Wait::kGone) return CallProgress::kGone;
      if (w == Wait::kNotYet) return CallProgress::kRunning;  // the stop is collected later
    }
    user_regs_struct regs{};
    if (!GetRegs(t->tid, &regs)) return CallProgress::kGone;
    if (regs.rip == loop) return CallProgress::kReturned;
    if (!Restart(t)) return CallProgress::kGone;
    if (NowNs() >= deadline) return CallProgress::kRunning;
    // Asleep in the call, looked at again and again: the pause between looks grows.
    t->pause_ns = t->pause_ns ? std::min(t->pause_ns * 2, kLongestPauseNs) : 5'000;
    SleepNs(t->pause_ns);
  }
}

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
    RemoteCallSlot* slot, uint64_t timeout_ns, std::unique_ptr<RemoteCallSession>* unstopped) {
  const uint64_t deadline = NowNs() + timeout_ns;
  const pid_t t = static_cast<pid_t>(tid);
  if (ptrace(PTRACE_SEIZE, t, nullptr, nullptr) != 0)
    return Status::Error("ptrace(PTRACE_SEIZE) of thread " + std::to_string(tid) + ": " +
                         std::strerror(errno));
  std::unique_ptr<RemoteCallSession> s(new RemoteCallSession());
  s->slot_ = slot;
  s->t_.tid = t;
  s->t_.pid = pid;
  slot->pid = pid;
  slot->tid = tid;
  slot->loop_address = loop_address;
  slot->stack_len = 0;
  slot->errno_address = 0;
  slot->xstate_len = 0;
  // From here the destructor detaches (once the thread is in a stop).
  const Wait w = StopThread(&s->t_, deadline);
  if (w == Wait::kGone) {
    s->ended_ = true;
    return Status::Error("thread " + std::to_string(tid) + " exited as it was seized");
  }
  if (w == Wait::kNotYet) {
    // Asked to stop, not stopped yet: it cannot be let go before it does (Finish).
    const Status why = Status::Error("thread " + std::to_string(tid) + " did not stop for ptrace within " +
                                     std::to_string(timeout_ns / 1'000'000) + " ms");
    if (unstopped) *unstopped = std::move(s);
    return why;
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
  // An unfinished session is left as it stands: the thread is let go when the capture exits,
  // and the guardian finishes what the slot says (RecoverRemoteCall).
  if (!ended_ && !unfinished()) (void)End();
}

Status RemoteCallSession::Write(uint64_t address, const void* data, size_t size) {
  if (!WriteRemote(t_.pid, address, data, size))
    return Status::Error(std::string("process_vm_writev: ") + std::strerror(errno));
  return Status::Ok();
}

Status RemoteCallSession::Read(uint64_t address, void* data, size_t size) const {
  if (!ReadRemote(t_.pid, address, data, size))
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
  if (ended_) return Status::Error("the thread was let go");
  if (unfinished()) return Status::Error("an earlier call has not returned");
  if (timeout_ns == 0) return Status::Error("no time was left for the call");
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
  if (ptrace(PTRACE_SETREGS, t_.tid, nullptr, &regs) != 0)
    return Status::Error(std::string("PTRACE_SETREGS: ") + std::strerror(errno));
  t_.pause_ns = 0;
  in_call_ = true;
  const CallProgress p = RunToLoop(&t_, loop, deadline);
  if (p == CallProgress::kGone) {
    ended_ = true;
    return Status::Error("thread " + std::to_string(t_.tid) + " exited during the call");
  }
  if (p == CallProgress::kRunning) {
    // Never undone in the middle: it runs on, and Finish puts the thread back once it returned.
    char text[96];
    std::snprintf(text, sizeof(text), "did not return within %.0f ms (let finish)", timeout_ns / 1e6);
    return Status::Error(text);
  }
  in_call_ = false;
  user_regs_struct after{};
  if (!GetRegs(t_.tid, &after)) return Status::Error(std::string("PTRACE_GETREGS: ") + std::strerror(errno));
  return static_cast<uint64_t>(after.rax);
}

Status RemoteCallSession::End() {
  if (ended_) return Status::Ok();
  if (unfinished()) return Status::Error("thread " + std::to_string(t_.tid) + " is still in a call");
  return EndStopped();
}

Status RemoteCallSession::EndStopped() {
  ended_ = true;
  Status st = Status::Ok();
  if (slot_->state.load() != static_cast<uint32_t>(RemoteCallState::kOwned)) {
    // Restoring is idempotent: the guardian redoes it from the slot if we die here.
    SetState(slot_, RemoteCallState::kRestoring);
    if (!RestoreThread(slot_)) st = Status::Error("thread " + std::to_string(t_.tid) + " could not be restored");
  }
  if (!DetachWithSignals(&t_))
    st = Status::Error("thread " + std::to_string(t_.tid) + " could not be detached: " + std::strerror(errno));
  SetState(slot_, RemoteCallState::kOwned);
  return st;
}

bool RemoteCallSession::Finish(uint64_t timeout_ns) {
  if (ended_) return true;
  const uint64_t deadline = NowNs() + timeout_ns;
  if (in_call_) {
    const CallProgress p = RunToLoop(&t_, slot_->loop_address, deadline);
    if (p == CallProgress::kGone) {
      ended_ = true;
      return true;
    }
    if (p == CallProgress::kRunning) return false;
    in_call_ = false;
  } else if (!t_.stopped) {
    const Wait w = StopThread(&t_, deadline);
    if (w == Wait::kGone) {
      ended_ = true;
      return true;
    }
    if (w == Wait::kNotYet) return false;
  }
  (void)EndStopped();
  return true;
}

bool RemoteCallSession::HandOver(uint64_t timeout_ns) {
  if (ended_) return true;
  if (!in_call_) return Finish(timeout_ns);
  const Wait w = StopThread(&t_, NowNs() + timeout_ns);
  if (w == Wait::kGone) {
    ended_ = true;
    return true;
  }
  if (w == Wait::kNotYet) return false;
  // Detached in the function it was called into (the slot stays kModified): it returns to the
  // loop and waits there for the guardian, which seizes it as soon as we are gone.
  ended_ = true;
  return DetachWithSignals(&t_);
}

bool RecoverRemoteCall(RemoteCallSlot* slot, bool seize, uint64_t timeout_ns,
                       void (*between)(void*), void* arg) {
  const uint32_t state = slot->state.load();
  if (state == static_cast<uint32_t>(RemoteCallState::kFree)) return true;
  bool ok = true;
  const bool modified = state == static_cast<uint32_t>(RemoteCallState::kModified);
  if (modified || state == static_cast<uint32_t>(RemoteCallState::kRestoring)) {
    RemoteTracee t;
    t.tid = static_cast<pid_t>(slot->tid);
    t.pid = slot->pid;
    const uint64_t deadline = NowNs() + timeout_ns;
    if (seize) {
      // The capture's ptrace ends only once it has exited all the way: retry until then.
      while (ptrace(PTRACE_SEIZE, t.tid, nullptr, nullptr) != 0) {
        if (errno == ESRCH || NowNs() >= deadline) {
          ok = false;
          break;
        }
        SleepNs(1'000'000);
      }
      // Its stop is waited for however long it takes: a thread asked to stop cannot be let go
      // before it has.
      while (ok) {
        const Wait w = StopThread(&t, NowNs() + 100'000'000);
        if (w == Wait::kStopped) break;
        if (w == Wait::kGone) ok = false;
        else if (between) between(arg);
      }
      // Out of a group stop (the capture may have died before it ended it), or the call
      // could not run on.
      if (ok) kill(static_cast<pid_t>(slot->pid), SIGCONT);
    } else {
      t.stopped = true;  // the caller's own stopped thread
    }
    if (ok) {
      // A call in progress finishes first, however long it takes (it may hold a lock: undone
      // in the middle, it would deadlock its process). Once restoring began, the thread may be
      // back at its own code: never run it.
      CallProgress p = CallProgress::kReturned;
      if (modified) {
        while ((p = RunToLoop(&t, slot->loop_address, NowNs() + 100'000'000)) == CallProgress::kRunning)
          if (between) between(arg);
      }
      if (p == CallProgress::kGone) {
        ok = false;
      } else {
        ok = RestoreThread(slot);
        ok = DetachWithSignals(&t) && ok;
      }
    }
  }
  kill(static_cast<pid_t>(slot->pid), SIGCONT);
  SetState(slot, RemoteCallState::kFree);
  return ok;
}

}  // namespace xtrace
