// Tests for launched_command.cc: record's exit code is its command's, and waiting for a
// command reaps it whether it ended before or after the capture.
#include "cli/launched_command.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace xtrace {
namespace {

pid_t ForkExiting(int code, int delay_ms) {
  const pid_t pid = fork();
  if (pid == 0) {
    usleep(static_cast<useconds_t>(delay_ms) * 1000);
    _exit(code);
  }
  return pid;
}

TEST(LaunchedCommandTest, ShellExitCodeIsTheStatusOr128PlusTheSignal) {
  EXPECT_EQ(ShellExitCode(0), 0);
  EXPECT_EQ(ShellExitCode(3 << 8), 3);
  EXPECT_EQ(ShellExitCode(SIGKILL), 128 + SIGKILL);
  EXPECT_EQ(ShellExitCode(SIGSEGV | 0x80), 128 + SIGSEGV);  // with a core dump
}

TEST(LaunchedCommandTest, WaitsForACommandStillRunningAndReturnsItsStatus) {
  const pid_t pid = ForkExiting(7, 200);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(WaitForLaunchedCommand(pid, "sleeper", true), 7);
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1);  // reaped
}

TEST(LaunchedCommandTest, ACommandThatEndedAlreadyIsReapedWithItsStatus) {
  const pid_t pid = ForkExiting(0, 0);
  ASSERT_GT(pid, 0);
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT), 0);  // a zombie now
  EXPECT_EQ(WaitForLaunchedCommand(pid, "quick", true), 0);
}

TEST(LaunchedCommandTest, ACommandKilledBySignalGives128PlusIt) {
  const pid_t pid = ForkExiting(0, 10000);
  ASSERT_GT(pid, 0);
  kill(pid, SIGKILL);
  EXPECT_EQ(WaitForLaunchedCommand(pid, "victim", true), 128 + SIGKILL);
}

TEST(LaunchedCommandTest, NotAChildIsAnErrorNotAHang) {
  EXPECT_EQ(WaitForLaunchedCommand(getpid(), "self", true), 1);
}

}  // namespace
}  // namespace xtrace
