// Calls a function inside a stopped thread of another process, as a debugger's `call` does:
// the thread's registers, extended state, errno and the stack bytes used are saved, the call
// runs on the thread's own stack below its red zone and returns to a `jmp .` in the process's
// own code, where xtrace finds it by looking (no breakpoint, no signal), and everything is put
// back before the thread is let go. Used to ask a process's own Level Zero loader about
// objects it made before xtrace attached (capture/ze_query.h).
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
  alignas(64) uint8_t xstate[kXstateBytes];
  uint8_t stack[kRemoteScratchBytes + 16];
};

// One stopped thread, from seizing it to letting it go. Begin/Call/End are the capture's;
// a session that is destroyed without End restores and detaches as End does.
class RemoteCallSession {
 public:
  // Seizes thread `tid` of process `pid` (ptrace, PTRACE_INTERRUPT) and waits up to
  // `timeout_ns` for it to stop; the process is expected to be stopped already (a hold). Its
  // instruction pointer must lie in [ip_low, ip_high) — where it was held — or the session is
  // refused. `slot` must be in state kOwned; it receives the saved state. Once the thread is
  // in its ptrace stop, the process is continued (SIGCONT): its other threads run meanwhile.
  static Result<std::unique_ptr<RemoteCallSession>> Begin(uint32_t pid, uint32_t tid,
                                                          uint64_t ip_low, uint64_t ip_high,
                                                          uint64_t loop_address,
                                                          RemoteCallSlot* slot, uint64_t timeout_ns);
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
  // after `timeout_ns` is abandoned (the thread is put back as it was) and is an error.
  Result<uint64_t> Call(uint64_t function, std::initializer_list<uint64_t> args, uint64_t timeout_ns);

  // Puts everything back and detaches; signals the thread received meanwhile are delivered.
  Status End();

 private:
  RemoteCallSession() = default;

  RemoteCallSlot* slot_ = nullptr;
  pid_t tid_ = 0;
  uint32_t pid_ = 0;
  uint64_t scratch_ = 0;
  uint32_t scratch_bytes_ = 0;
  uint64_t pending_signals_ = 0;  // signals the thread got during the calls, delivered at detach
  bool ended_ = false;
};

// Puts back the thread a slot describes (state kModified: lets a call in progress finish
// first, for up to `timeout_ns`), detaches from it, and continues the process if the slot
// owned its hold. Called by the guardian when the capture is gone, in which case the thread
// is first seized again. Async-signal-safe; returns false if something could not be undone.
bool RecoverRemoteCall(RemoteCallSlot* slot, bool seize, uint64_t timeout_ns);

// Why another tracer stops us from using ptrace on `pid`, or "" (TracerPid in
// /proc/PID/status, with the tracer's name when readable).
std::string OtherTracer(uint32_t pid, uint32_t self_pid);

}  // namespace xtrace
