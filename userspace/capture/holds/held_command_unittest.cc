// Tests for capture/holds/held_command: the command waits at the gate, runs once released, says
// why it could not run, and leaves no descriptor or child behind.
#include "capture/holds/held_command.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <thread>

namespace xtrace {
namespace {

size_t OpenFds() {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) n += entry.is_symlink() ? 1 : 0;
  return n;
}

int WaitStatus(pid_t pid) {
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return status;
}

TEST(HeldCommand, RunsOnlyOnceReleased) {
  const std::string marker =
      (std::filesystem::temp_directory_path() / ("xtrace_held_" + std::to_string(getpid()))).string();
  std::filesystem::remove(marker);
  const size_t fds_before = OpenFds();
  auto cmd = HeldCommand::Spawn({"sh", "-c", "echo ran > " + marker});
  ASSERT_TRUE(cmd.ok()) << cmd.status().message();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the command ran before its release";
  ASSERT_TRUE(cmd->Release().ok());
  const int status = WaitStatus(cmd->pid());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(std::filesystem::exists(marker));
  std::filesystem::remove(marker);
  EXPECT_EQ(OpenFds(), fds_before);
}

TEST(HeldCommand, SaysWhyTheCommandCouldNotRun) {
  auto cmd = HeldCommand::Spawn({"/nonexistent/xtrace-no-such-program", "arg"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().message();
  const Status st = cmd->Release();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "cannot run '/nonexistent/xtrace-no-such-program': No such file or directory");
  // Reaped already: no child is left to wait for.
  EXPECT_EQ(waitpid(cmd->pid(), nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(HeldCommand, NeverReleasedIsKilledAndReaped) {
  const size_t fds_before = OpenFds();
  pid_t pid = -1;
  {
    auto cmd = HeldCommand::Spawn({"sleep", "30"});
    ASSERT_TRUE(cmd.ok()) << cmd.status().message();
    pid = cmd->pid();
  }
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
  EXPECT_EQ(OpenFds(), fds_before);
}

TEST(HeldCommand, EmptyCommandIsAnError) {
  EXPECT_FALSE(HeldCommand::Spawn({}).ok());
}

}  // namespace
}  // namespace xtrace
