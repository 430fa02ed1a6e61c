// Tests for launched_command.cc: record's exit code is its command's, and waiting for a
// command reaps it whether it ended before or after the capture.
#include "cli/launched_command.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "log_test_util.h"

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

// A command is looked up as execvp would, and one that cannot run is named with why.
TEST(LaunchedCommandTest, FindCommandSearchesThePathAndSaysWhyNot) {
  test_util::ScratchDir dir;
  const std::string bin = dir.File("bin");
  std::filesystem::create_directories(bin);
  const std::string tool = bin + "/tool";
  std::ofstream(tool) << "#!/bin/sh\n";
  ASSERT_EQ(::chmod(tool.c_str(), 0755), 0);
  const std::string data = bin + "/data";
  std::ofstream(data) << "x";
  ASSERT_EQ(::chmod(data.c_str(), 0644), 0);
  const std::string path = "/nonexistent-dir:" + bin;

  auto found = FindCommand("tool", path.c_str());
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, tool);
  found = FindCommand(tool, nullptr);
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, tool);
  found = FindCommand("sh", nullptr);  // execvp's default search path
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, "/bin/sh");

  EXPECT_EQ(FindCommand("no-such-tool", path.c_str()).status().message(),
            "cannot run 'no-such-tool': not found in PATH (" + path + ")");
  EXPECT_EQ(FindCommand(bin + "/no-such-tool", path.c_str()).status().message(),
            "cannot run '" + bin + "/no-such-tool': No such file or directory");
  EXPECT_EQ(FindCommand(bin, path.c_str()).status().message(), "cannot run '" + bin + "': it is a directory");
  // Root too executes only what has an x bit.
  EXPECT_EQ(FindCommand("data", path.c_str()).status().message(),
            "cannot run 'data': " + data + ": not executable (Permission denied)");
}

}  // namespace
}  // namespace xtrace
