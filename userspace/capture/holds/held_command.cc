// Forking the held command and releasing it.
#include "capture/holds/held_command.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace xtrace {

Result<HeldCommand> HeldCommand::Spawn(const std::vector<std::string>& command) {
  if (command.empty()) return Status::Error("no command to run");
  int gate[2], err_pipe[2];
  if (pipe2(gate, O_CLOEXEC) != 0) return Status::Error(std::string("pipe: ") + std::strerror(errno));
  UniqueFd gate_read(gate[0]), gate_write(gate[1]);
  if (pipe2(err_pipe, O_CLOEXEC) != 0)
    return Status::Error(std::string("pipe: ") + std::strerror(errno));
  UniqueFd err_read(err_pipe[0]), err_write(err_pipe[1]);
  // Built before fork: the child only calls async-signal-safe functions.
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return Status::Error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // The gate opens at EOF, which needs every write end closed, the child's copy included.
    close(gate_write.get());
    close(err_read.get());
    char c;
    while (read(gate_read.get(), &c, 1) < 0 && errno == EINTR) {
    }
    execvp(argv[0], argv.data());
    const int err = errno;
    (void)!write(err_write.get(), &err, sizeof(err));
    _exit(127);
  }
  return HeldCommand(pid, command[0], std::move(gate_write), std::move(err_read));
}

HeldCommand::HeldCommand(HeldCommand&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      name_(std::move(other.name_)),
      gate_(std::move(other.gate_)),
      exec_error_(std::move(other.exec_error_)),
      released_(std::exchange(other.released_, true)) {}

HeldCommand::~HeldCommand() {
  if (released_ || pid_ <= 0) return;
  kill(pid_, SIGKILL);
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

Status HeldCommand::Release() {
  released_ = true;
  gate_.Reset();
  int err = 0;
  ssize_t n;
  while ((n = read(exec_error_.get(), &err, sizeof(err))) < 0 && errno == EINTR) {
  }
  exec_error_.Reset();
  if (n == sizeof(err)) {
    waitpid(pid_, nullptr, 0);
    return Status::Error("cannot run '" + name_ + "': " + std::strerror(err));
  }
  return Status::Ok();
}

}  // namespace xtrace
