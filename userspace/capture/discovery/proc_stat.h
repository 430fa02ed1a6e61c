// The one reader of /proc/PID/stat: the fields the capture needs (state, parent, start time),
// parsed from after the last ')' because the command name in parentheses may itself hold
// spaces and parentheses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace xtrace {

struct ProcStat {
  std::string comm;          // field 2, without its parentheses (at most 15 bytes)
  char state = '?';          // field 3: R, S, D, T, Z (zombie), X (dead), ...
  uint32_t ppid = 0;         // field 4
  uint64_t start_ticks = 0;  // field 22: clock ticks after boot; a reused pid has another
  uint32_t flags = 0;        // field 9: the kernel's PF_* flags

  // A zombie or dead process has exited; only its parent's wait is missing.
  bool alive() const { return state != 'Z' && state != 'X'; }
  // A kernel thread (PF_KTHREAD) runs no user-space code: nothing of it can be traced.
  bool kernel_thread() const { return flags & 0x00200000u; }
};

// Parses the text of /proc/PID/stat; nullopt when it is truncated or malformed.
std::optional<ProcStat> ParseProcStat(std::string_view text);

// Reads /proc/PID/stat; nullopt when the process is gone (or the file is unreadable).
std::optional<ProcStat> ReadProcStat(uint32_t pid);

// True while /proc/PID exists and is not a zombie.
bool ProcessAlive(uint32_t pid);

}  // namespace xtrace
