// The command `xtrace record` runs, started held at a gate: it is forked at once (so its pid
// can be traced and probed) but execs only when released, once the probes are in place.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace xtrace {

class HeldCommand {
 public:
  // Forks a child that waits at the gate, then execs `command` (searched on PATH).
  static Result<HeldCommand> Spawn(const std::vector<std::string>& command);

  HeldCommand(HeldCommand&& other) noexcept;
  HeldCommand& operator=(HeldCommand&&) = delete;
  HeldCommand(const HeldCommand&) = delete;
  HeldCommand& operator=(const HeldCommand&) = delete;
  // A command never released has run nothing of its own: it is killed and reaped rather than
  // left to exec untraced when the gate closes.
  ~HeldCommand();

  pid_t pid() const { return pid_; }

  // Opens the gate and waits for the exec: an error naming the command when it could not run
  // (the child is reaped then). Afterwards the caller owns the running child.
  Status Release();

 private:
  HeldCommand(pid_t pid, std::string name, UniqueFd gate, UniqueFd exec_error)
      : pid_(pid), name_(std::move(name)), gate_(std::move(gate)),
        exec_error_(std::move(exec_error)) {}

  pid_t pid_ = -1;
  std::string name_;
  UniqueFd gate_;        // write end; closing it lets the child exec
  UniqueFd exec_error_;  // read end; the child writes errno here if exec fails, EOF if it worked
  bool released_ = false;
};

}  // namespace xtrace
