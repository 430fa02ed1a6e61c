// Calls a function inside a stopped thread of another process, as a debugger's `call` does:
// the thread's registers, extended state, errno and the stack bytes used are saved, the call
// runs on the thread's own stack below its red zone and returns to a `jmp .` in the process's
// own code, where xtrace finds it by looking (no breakpoint, no signal), and everything is put
// back before the thread is let go. Used to ask a process's own Level Zero loader about
// objects it made before xtrace attached (capture/sources/ze_query.h).
//
// What was saved lives in a RemoteCallSlot on a page shared with the hold guardian, so a
// process is never left changed: if xtrace dies in the middle, the guardian finishes the call
// and restores the thread from the slot (RecoverRemoteCall is async-signal-safe for that).
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

#include "base/status.h"

namespace xtrace {

// Stack bytes a call may use below the red zone: a kernel name up to XT_MAX_NAME plus the
// size word and alignment.
inline constexpr uint32_t kRemoteScratchBytes = 4096 + 64;
// The System V x86-64 red zone: 128 bytes below rsp that a leaf function may use unannounced.
inline constexpr uint64_t kRedZoneBytes = 128;
// Room for the thread's extended register state (XSAVE area; AVX-512 needs ~2.7 KiB).
inline constexpr uint32_t kXstateBytes = 8192;

// Where a call in a thread stands, as the guardian must know it if xtrace vanishes.
enum class RemoteCallState : uint32_t {
  kFree = 0,      // nothing in progress
  kOwned = 2,     // the capture owns the hold: the process must be continued (SIGCONT) at the end
  kModified = 3,  // and the thread's registers or stack may differ from the saved ones
  kRestoring = 4, // and they are being put back: the thread must not run before they are
};

// Everything needed to put a thread back. Plain data on a shared page.
struct RemoteCallSlot {
  std::atomic<uint32_t> state{0};  // RemoteCallState
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t xstate_len = 0;
  uint64_t loop_address = 0;  // a `jmp .` (EB FE) in the process's executable code
  user_regs_struct regs{};
  uint64_t stack_address = 0;  // saved stack bytes: where they were
  uint32_t stack_len = 0;
  int32_t errno_value = 0;
  uint64_t errno_address = 0;  // 0: not saved
  // The query hold the capture is serving (capture/sources/ze_query.h), kept fresh for the guardian's
  // bound here rather than in its `held` entry: user space never writes an entry, since the
  // one it means to rewrite may be another thread's hold by the time it writes. The process,
  // the time BPF took that hold (its entry's since_ns, which identifies it) and when the
  // capture was last at work on it; lease_pid 0: none. The guardian's bound counts from the
  // lease for that one entry only (HoldBoundFrom).
  std::atomic<uint32_t> lease_pid{0};
  std::atomic<uint64_t> lease_since_ns{0};
  std::atomic<uint64_t> lease_ns{0};
  alignas(64) uint8_t xstate[kXstateBytes];
  uint8_t stack[kRemoteScratchBytes + 16];
};

// A traced thread as far as its ptrace stops go. A PTRACE_INTERRUPT is answered by a stop
// only once the thread next runs (at once if idle, but a loaded machine can keep a runnable
// thread off the CPU for long), and a thread can be let go (PTRACE_DETACH) only from a stop:
// one left with an interrupt it has not answered stops by itself later, traced by nobody
// who looks, and its process hangs. So every stop asked for is collected before detaching.
struct RemoteTracee {
  pid_t tid = 0;
  uint32_t pid = 0;
  bool stopped = false;            // in a ptrace stop we collected: registers can be used
  bool interrupt_pending = false;  // PTRACE_INTERRUPT sent, its stop not collected yet
  uint64_t signals = 0;            // signals it was about to receive, delivered when let go
  // While it runs a call: its CPU time at its last restart and the pause between looks.
  uint64_t cpu_mark = 0;
  bool cpu_known = false;
  uint64_t pause_ns = 0;
};

// Where a call stands after a wait for it (RunToLoop).
enum class CallProgress {
  kReturned,  // at the slot's loop, stopped: the call is over
  kRunning,   // still inside the function (or its stop not in yet): wait again later
  kGone,      // the thread exited (or is no longer ours)
};

// One stopped thread, from seizing it to letting it go. Begin/Call/End are the capture's;
// a session that is destroyed without End restores and detaches as End does.
//
// A call is never abandoned inside the function it called: it may hold a lock there, a
// static-initialisation guard or malloc's arena, and a thread put back at its own code
// with that taken deadlocks its process at the next use. A call that has not returned when
// its bound passes is left running (unfinished()), and Finish puts the thread back once it
// has returned.
class RemoteCallSession {
 public:
  // Seizes thread `tid` of process `pid` (ptrace, PTRACE_INTERRUPT) and waits up to
  // `timeout_ns` for it to stop; the process is expected to be stopped already (a hold). Its
  // instruction pointer must lie in [ip_low, ip_high) — where it was held — or the session is
  // refused. `slot` must be in state kOwned; it receives the saved state. Once the thread is
  // in its ptrace stop, the process is continued (SIGCONT): its other threads run meanwhile.
  // When the thread was seized but its stop did not come in time, the session is refused and
  // handed back in *unstopped, to be let go with Finish once the stop is in.
  static Result<std::unique_ptr<RemoteCallSession>> Begin(uint32_t pid, uint32_t tid,
                                                          uint64_t ip_low, uint64_t ip_high,
                                                          uint64_t loop_address,
                                                          RemoteCallSlot* slot, uint64_t timeout_ns,
                                                          std::unique_ptr<RemoteCallSession>* unstopped = nullptr);
  ~RemoteCallSession();
  RemoteCallSession(const RemoteCallSession&) = delete;
  RemoteCallSession& operator=(const RemoteCallSession&) = delete;

  // Saves errno (through the process's own __errno_location at `errno_location`) so End
  // puts it back; 0 skips.
  Status SaveErrno(uint64_t errno_location, uint64_t timeout_ns);

  // The scratch area the calls may use (kRemoteScratchBytes, 16-byte aligned) and its size,
  // which may be less than kRemoteScratchBytes when the stack's mapping ends sooner.
  uint64_t scratch() const { return scratch_; }
  uint32_t scratch_bytes() const { return scratch_bytes_; }
  Status Write(uint64_t address, const void* data, size_t size);
  Status Read(uint64_t address, void* data, size_t size) const;

  // Calls `function` with up to six integer arguments; its rax. A call that has not returned
  // after `timeout_ns` is an error and runs on: unfinished() is true from then, no other call
  // can be made, and the session must be ended with Finish.
  Result<uint64_t> Call(uint64_t function, std::initializer_list<uint64_t> args, uint64_t timeout_ns);
  bool unfinished() const { return in_call_ || !t_.stopped; }

  // Puts everything back and detaches; signals the thread received meanwhile are delivered.
  // Only for a session that is not unfinished() (an error otherwise, and nothing is done).
  Status End();

  // Waits up to `timeout_ns` for an unfinished call to return (or for the stop asked of the
  // thread to come in), then ends the session as End does: true once it is over (or the
  // thread is gone), false while the call still runs.
  bool Finish(uint64_t timeout_ns);

  // For a session still unfinished when the capture ends: stops the thread where it is (in
  // the function it was called into: its call is not undone) and detaches without putting
  // anything back, leaving the slot kModified: the hold guardian, which outlives the capture,
  // seizes the thread again, lets the call return and puts the thread back
  // (RecoverRemoteCall). False if the thread did not stop within `timeout_ns` (it is then
  // detached when the capture exits, and the guardian takes it the same way).
  bool HandOver(uint64_t timeout_ns);

 private:
  RemoteCallSession() = default;
  Status EndStopped();

  RemoteCallSlot* slot_ = nullptr;
  RemoteTracee t_;
  uint64_t scratch_ = 0;
  uint32_t scratch_bytes_ = 0;
  bool in_call_ = false;  // a call has not returned yet
  bool ended_ = false;
};

// Runs or waits for the traced thread until it reaches `loop` (the call returned) or
// `deadline` (CLOCK_MONOTONIC ns) passes. The thread may start stopped or running; it is
// looked at (stopped with PTRACE_INTERRUPT) only once it has had the CPU for a while or is
// asleep in the call: on a loaded machine a woken thread may wait milliseconds for a CPU,
// and stopping it before it ran would look at the same instruction forever. On kReturned it
// is stopped at the loop; on kRunning it runs on (or its stop is still to come).
// Async-signal-safe (the guardian uses it).
CallProgress RunToLoop(RemoteTracee* t, uint64_t loop, uint64_t deadline);

// Puts back the thread a slot describes, detaches from it, and continues the process if the
// slot owned its hold. Called by the guardian when the capture is gone, in which case the
// thread is first seized again (for up to `timeout_ns`: the capture's ptrace ends only once
// it has exited). A call in progress (state kModified) is let finish however long it takes:
// it is never undone in the middle (see RemoteCallSession); `between`, if given, is called
// with `arg` about every 100 ms meanwhile (the guardian continues its other holds there).
// Async-signal-safe; returns false if something could not be undone.
bool RecoverRemoteCall(RemoteCallSlot* slot, bool seize, uint64_t timeout_ns,
                       void (*between)(void*) = nullptr, void* arg = nullptr);

// Why another tracer stops us from using ptrace on `pid`, or "" (TracerPid in
// /proc/PID/status, with the tracer's name when readable).
std::string OtherTracer(uint32_t pid, uint32_t self_pid);

}  // namespace xtrace
