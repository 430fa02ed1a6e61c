// Integration tests of attaching to a process that made its kernels before the attach: every
// launch is named with the names the workload logs (xtrace asks the process's own loader,
// holding a thread a moment), one thread or eight launching at once; --no-query leaves them
// "kernel@0x..."; a parent that stops with its held child (nsenter) goes on with it; xtrace
// SIGKILLed in the middle of a query leaves the workload running with its results unchanged
// (the guardian finishes and undoes the call); a process another tracer (strace) holds is
// left alone, and the summary says why.
#include <gtest/gtest.h>
#include <signal.h>
#include <time.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "base/read_file.h"
#include "capture_reader.h"
#include "log_contents.h"
#include "root_fixture.h"
#include "subprocess.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
using testing::LogContents;
using testing::PidFromReadyLine;
using testing::ReadLaunchLog;
using testing::ReadLogContents;
using testing::RootTest;
using testing::Sorted;
using testing::Subprocess;

const std::string kXtrace = XTRACE_BIN;
const std::string kWorkload = ZE_WORKLOAD_BIN;
const std::string kSimDriver = "ZE_ENABLE_ALT_DRIVERS=" SIMZE_LIB;
constexpr int kKernelsPerThread = 5;  // the launched ones of ze_workload's catalog

// TracerPid of `pid` (0: none, or unreadable).
uint32_t TracerOf(uint32_t pid) {
  auto status = ReadWholeFile("/proc/" + std::to_string(pid) + "/status");
  if (!status) return 0;
  const size_t at = status->find("TracerPid:");
  return at == std::string::npos ? 0 : std::stoul(status->substr(at + 10));
}

class AttachQueryIntegrationTest : public RootTest {
 protected:
  AttachQueryIntegrationTest() : RootTest("attach query", "attachq") {}

  struct Run {
    LogContents log;
    std::vector<std::string> expected;  // the workload's launch log, "<name>\t<x>,<y>,<z>", sorted
    std::string xtrace_err, workload_out;
    uint32_t pid = 0;
  };

  // Starts ze_workload with `threads`, lets it make everything and say ready, attaches xtrace
  // (with `xtrace_args`), runs one round, stops both. `wrap` runs the workload under another
  // program (strace).
  Run AttachAndRunARound(int threads, const std::vector<std::string>& xtrace_args = {},
                         const std::vector<std::string>& wrap = {}) {
    Run run;
    std::vector<std::string> argv = wrap;
    for (const std::string& a : {kWorkload, std::string("--wait-for-signal"), std::string("--threads"),
                                 std::to_string(threads), std::string("--iterations"), std::string("3"),
                                 std::string("--launch-log"), Path("launches.tsv")})
      argv.push_back(a);
    Subprocess workload(argv, {kSimDriver});
    run.pid = PidFromReadyLine(workload.WaitStdout("ready", 60s));
    EXPECT_NE(run.pid, 0u) << workload.stderr_text();
    if (!run.pid) return run;
    // Behind a wrapper the workload is not our child: it must not outlive a failed test.
    struct KillAtEnd {
      pid_t pid;
      ~KillAtEnd() {
        auto cmdline = ReadWholeFile("/proc/" + std::to_string(pid) + "/cmdline");
        if (cmdline && cmdline->find("ze_workload") != std::string::npos) kill(pid, SIGKILL);
      }
    } kill_at_end{static_cast<pid_t>(run.pid)};
    std::vector<std::string> xargv = {kXtrace, "attach", "--pid", std::to_string(run.pid), "-o",
                                      Path("run.capnp")};
    xargv.insert(xargv.end(), xtrace_args.begin(), xtrace_args.end());
    Subprocess xtrace(xargv, {kSimDriver});
    EXPECT_TRUE(xtrace.WaitStderr("attached to pid " + std::to_string(run.pid), 30s)) << xtrace.stderr_text();
    kill(static_cast<pid_t>(run.pid), SIGUSR1);  // the workload, not a wrapper around it
    EXPECT_TRUE(workload.WaitStdout("round 1", 120s)) << workload.stderr_text();
    xtrace.Signal(SIGINT);
    EXPECT_TRUE(xtrace.Wait(60s).has_value());
    run.xtrace_err = xtrace.stderr_text();
    kill(static_cast<pid_t>(run.pid), SIGTERM);
    EXPECT_EQ(workload.Wait(30s), 0) << workload.stderr_text();
    run.workload_out = workload.stdout_text();
    run.log = ReadLogContents(Path("run.capnp"));
    run.expected = ReadLaunchLog(Path("launches.tsv"), /*strip_tid=*/true);
    return run;
  }

  // Every launch named as the workload logged it, none "kernel@", and the learned kernels in
  // the log as creations marked learned, one per kernel.
  void ExpectEveryLaunchNamed(const Run& run, int threads) {
    ASSERT_EQ(run.expected.size(), size_t(threads) * 3 * kKernelsPerThread);
    const auto got = Sorted(run.log.launches_no_tid.count(run.pid) ? run.log.launches_no_tid.at(run.pid)
                                                                   : std::vector<std::string>{});
    EXPECT_EQ(got, run.expected) << run.xtrace_err;
    for (const auto& launch : got) EXPECT_NE(launch.rfind("kernel@", 0), 0u) << launch;
    const testing::Capture c = testing::ReadWholeCapture(Path("run.capnp"));
    size_t learned = 0;
    for (const KernelCreate& k : c.creates) learned += k.learned ? 1 : 0;
    EXPECT_EQ(learned, size_t(threads) * kKernelsPerThread) << "one learned creation per kernel";
    // Lists and events made before the attach too: the one device, and the kernels whose
    // timestamps the workload reads (three of five) measured.
    size_t measured = 0, ops = 0;
    for (const DeviceOp& op : c.All<DeviceOp>()) {
      ++ops;
      EXPECT_EQ(op.device, 0u);
      measured += op.measured ? 1 : 0;
    }
    EXPECT_GT(ops, 0u);
    EXPECT_GE(measured, size_t(threads) * 3 * 3) << ops << " operations";
    EXPECT_NE(run.xtrace_err.find(std::to_string(threads * kKernelsPerThread) +
                                  " objects made before the attach were queried in the process"),
              std::string::npos)
        << run.xtrace_err;
  }
};

TEST_F(AttachQueryIntegrationTest, LaunchesOfKernelsMadeBeforeTheAttachAreNamed) {
  const Run run = AttachAndRunARound(1);
  ExpectEveryLaunchNamed(run, 1);
}

TEST_F(AttachQueryIntegrationTest, EightThreadsLaunchingAtOnceAreAllNamed) {
  const Run run = AttachAndRunARound(8);
  ExpectEveryLaunchNamed(run, 8);
}

// nsenter (like unshare --fork, sudo and su) stops itself when its child stops and continues
// it when continued: the hold of a thread to ask about a kernel is such a stop. nsenter goes on
// with its child, reaps it when it exits, and exits itself; every launch is named.
TEST_F(AttachQueryIntegrationTest, AParentThatStopsWithItsHeldChildGoesOnWithIt) {
  const Run run = AttachAndRunARound(
      1, {}, {"/usr/bin/nsenter", "--target", std::to_string(getpid()), "--pid", "--"});
  ExpectEveryLaunchNamed(run, 1);
}

// Kernels made again after the attach (a runtime compiling a new graph) were seen made: they are
// named from their creation and never asked about, and the process is never held for them.
TEST_F(AttachQueryIntegrationTest, KernelsMadeDuringTheCaptureAreNeverAsked) {
  Subprocess workload({kWorkload, "--wait-for-signal", "--recreate-kernels", "--threads", "2",
                       "--iterations", "3", "--launch-log", Path("launches.tsv")},
                      {kSimDriver});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 60s));
  ASSERT_NE(pid, 0u) << workload.stderr_text();
  Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(pid), "-o", Path("run.capnp")},
                    {kSimDriver});
  ASSERT_TRUE(xtrace.WaitStderr("attached to pid " + std::to_string(pid), 30s)) << xtrace.stderr_text();
  for (int round = 1; round <= 2; ++round) {
    workload.Signal(SIGUSR1);
    ASSERT_TRUE(workload.WaitStdout("round " + std::to_string(round), 60s)) << workload.stderr_text();
  }
  xtrace.Signal(SIGINT);
  ASSERT_TRUE(xtrace.Wait(60s).has_value());
  workload.Signal(SIGTERM);
  EXPECT_EQ(workload.Wait(30s), 0);
  const LogContents log = ReadLogContents(Path("run.capnp"));
  EXPECT_EQ(Sorted(log.launches_no_tid.at(pid)), ReadLaunchLog(Path("launches.tsv"), /*strip_tid=*/true));
  EXPECT_EQ(xtrace.stderr_text().find("queried"), std::string::npos) << xtrace.stderr_text();
  const testing::Capture c = testing::ReadWholeCapture(Path("run.capnp"));
  for (const KernelCreate& k : c.creates) EXPECT_FALSE(k.learned);
  EXPECT_EQ(c.creates.size(), 2u * 2 * 6) << "two rounds of two threads' six kernels";
}

TEST_F(AttachQueryIntegrationTest, NoQueryLeavesThemUnnamedAndTheProcessUntouched) {
  const Run run = AttachAndRunARound(1, {"--no-query"});
  const auto& got = run.log.launches_no_tid.at(run.pid);
  ASSERT_EQ(got.size(), run.expected.size());
  for (const auto& launch : got) EXPECT_EQ(launch.rfind("kernel@", 0), 0u) << launch;
  EXPECT_EQ(run.xtrace_err.find("queried"), std::string::npos) << run.xtrace_err;
}

TEST_F(AttachQueryIntegrationTest, AProcessUnderAnotherTracerIsLeftAlone) {
  const Run run = AttachAndRunARound(1, {}, {"/usr/bin/strace", "-f", "-o", "/dev/null"});
  EXPECT_NE(run.xtrace_err.find("pid " + std::to_string(run.pid) + " was not queried: it is traced by pid"),
            std::string::npos)
      << run.xtrace_err;
  EXPECT_NE(run.xtrace_err.find("(strace)"), std::string::npos) << run.xtrace_err;
  const auto& got = run.log.launches_no_tid.at(run.pid);
  EXPECT_EQ(got.size(), run.expected.size());
  for (const auto& launch : got) EXPECT_EQ(launch.rfind("kernel@", 0), 0u) << launch;
}

// The simulated driver's zeKernelGetName takes 150 ms; xtrace is SIGKILLed while the workload
// is traced by it (in the middle of the queries). The guardian lets the call finish, puts the
// thread back and continues the process: both rounds complete with every launch, the launch
// log holds what an untraced run logs, and nothing traces or stops the workload afterwards.
TEST_F(AttachQueryIntegrationTest, XtraceKilledMidQueryLeavesTheWorkloadRunning) {
  Subprocess workload({kWorkload, "--wait-for-signal", "--threads", "2", "--iterations", "3",
                       "--launch-log", Path("launches.tsv")},
                      {kSimDriver, "XTRACE_SIMZE_KERNEL_NAME_DELAY_MS=150"});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 60s));
  ASSERT_NE(pid, 0u) << workload.stderr_text();
  Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(pid), "-o", Path("run.capnp")},
                    {kSimDriver});
  ASSERT_TRUE(xtrace.WaitStderr("attached to pid " + std::to_string(pid), 30s)) << xtrace.stderr_text();
  workload.Signal(SIGUSR1);
  bool traced = false;
  for (auto deadline = std::chrono::steady_clock::now() + 20s;
       !traced && std::chrono::steady_clock::now() < deadline;)
    for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task"))
      if (TracerOf(static_cast<uint32_t>(std::stoul(entry.path().filename()))) == uint32_t(xtrace.pid()))
        traced = true;
  ASSERT_TRUE(traced) << "xtrace never queried the workload\n" << xtrace.stderr_text();
  std::this_thread::sleep_for(50ms);  // into zeKernelGetName's 150 ms
  xtrace.Signal(SIGKILL);
  ASSERT_TRUE(xtrace.Wait(30s).has_value());

  ASSERT_TRUE(workload.WaitStdout("round 1 launches=30", 60s)) << workload.stdout_text() << workload.stderr_text();
  workload.Signal(SIGUSR1);
  ASSERT_TRUE(workload.WaitStdout("round 2 launches=30", 60s)) << workload.stdout_text() << workload.stderr_text();
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task"))
    EXPECT_EQ(TracerOf(static_cast<uint32_t>(std::stoul(entry.path().filename()))), 0u);
  workload.Signal(SIGTERM);
  EXPECT_EQ(workload.Wait(30s), 0) << workload.stderr_text();
  EXPECT_NE(workload.stdout_text().find("exit rounds=2 launches=60"), std::string::npos)
      << workload.stdout_text();
  EXPECT_EQ(ReadLaunchLog(Path("launches.tsv")).size(), 60u);
}

}  // namespace
}  // namespace xtrace
