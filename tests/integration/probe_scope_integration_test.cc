// Integration tests of where a capture's probes go by default (docs/design-notes.md, "Probes
// per process"): every scope that finds its processes itself puts them into the selected
// processes alone, so a process outside the selection that maps the same loader file holds no
// breakpoint (--comm, --cgroup and a launched command's children here; --container between
// two containers in container_integration_test.cc, --probes-per-file's contrast in
// system_capture_integration_test.cc); and a process that starts during a --comm or `record`
// capture is traced from its first call all the same, because it is held until its own probes
// are in, which a start while xtrace is stopped shows without a race (its calls are lost with
// --no-hold, and kept with --no-hold --probes-per-file). Breakpoint counts say something only
// while no other capture runs: these tests run alone (CMakeLists.txt). Real BPF, the real
// loader, the simulated GPU; checked against the workloads' own launch logs. Needs root; skips
// with the reason elsewhere, fails under CI.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "capture_steps.h"
#include "log_contents.h"
#include "root_fixture.h"
#include "scratch_cgroup.h"
#include "subprocess.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
using testing::InCgroup;
using testing::LoaderBreakpoints;
using testing::LoaderPathOf;
using testing::LogContents;
using testing::PidFromReadyLine;
using testing::ProcessState;
using testing::ReadLaunchLog;
using testing::ReadLogContents;
using testing::RootTest;
using testing::RunCommand;
using testing::ScratchCgroup;
using testing::Sorted;
using testing::StopCapture;
using testing::Subprocess;
using testing::WaitAttached;
using testing::WaitState;

const std::string kXtrace = XTRACE_BIN;
const std::string kWorkload = ZE_WORKLOAD_BIN;
const std::string kSimDriver = "ZE_ENABLE_ALT_DRIVERS=" SIMZE_LIB;

class ProbeScopeTest : public RootTest {
 protected:
  ProbeScopeTest() : RootTest("capture", "scopetest") {}

  // A copy of ze_workload under a name no other process has (its comm), so a --comm capture
  // of it selects this test's processes alone; the original keeps the name ze_workload.
  std::string UniqueWorkload() {
    const std::string path = Path("xtw" + std::to_string(getpid()));
    if (!std::filesystem::exists(path)) {
      std::filesystem::copy_file(kWorkload, path);
      ::chmod(path.c_str(), 0755);
    }
    return path;
  }

  // A workload that waits for SIGUSR1 to run one round of 2 iterations, logging its launches.
  static std::vector<std::string> Waiting(const std::string& binary, const std::string& log) {
    return {binary, "--wait-for-signal", "--recreate-kernels", "--iterations", "2", "--launch-log", log};
  }

  // A capture has started and `in_pid` is a process it selects, waiting for a signal: a
  // process outside the scope that maps the same loader file holds none of the breakpoints
  // the inside one holds, and is not traced, while the inside one is captured whole. The
  // inside process is `inside`, or (null) xtrace's command, whose end ends the capture.
  void ExpectOutsideUntouched(Subprocess& xtrace, Subprocess* inside, uint32_t in_pid,
                              const std::string& in_log, const std::string& out) {
    const std::string out_log = Path("outside.tsv");
    Subprocess outside(Waiting(kWorkload, out_log), {kSimDriver});
    const uint32_t out_pid = PidFromReadyLine(outside.WaitStdout("ready", 30s));
    ASSERT_GT(in_pid, 0u) << xtrace.stderr_text();
    ASSERT_GT(out_pid, 0u) << outside.stderr_text();
    ASSERT_TRUE(WaitAttached(xtrace, {in_pid}, 30s)) << xtrace.stderr_text();
    ASSERT_EQ(LoaderPathOf(in_pid), LoaderPathOf(out_pid));

    auto in_bps = LoaderBreakpoints(in_pid);
    auto out_bps = LoaderBreakpoints(out_pid);
    ASSERT_TRUE(in_bps.ok()) << in_bps.status().message();
    ASSERT_TRUE(out_bps.ok()) << out_bps.status().message();
    EXPECT_GT(*in_bps, 0u) << "the process in scope holds no probe";
    EXPECT_EQ(*out_bps, 0u) << "a process outside the scope holds probes";

    ::kill(static_cast<pid_t>(in_pid), SIGUSR1);
    outside.Signal(SIGUSR1);
    ASSERT_TRUE(outside.WaitStdout("round 1", 60s)) << outside.stderr_text();
    // The command's output is xtrace's.
    ASSERT_TRUE((inside ? *inside : xtrace).WaitStdout("round 1", 60s)) << xtrace.stderr_text();
    testing::EndWorkloads({&outside});
    ::kill(static_cast<pid_t>(in_pid), SIGTERM);
    if (inside) {
      inside->Wait(30s);
      ASSERT_TRUE(StopCapture(xtrace)) << xtrace.stderr_text();
    } else {
      const auto status = xtrace.Wait(60s);
      ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << xtrace.stderr_text();
    }

    const LogContents c = ReadLogContents(out);
    ASSERT_TRUE(c.readable) << c.error;
    ASSERT_EQ(ReadLaunchLog(out_log).size(), 10u);
    EXPECT_EQ(c.launches.count(out_pid), 0u) << "a process outside the scope was traced";
    const auto expected = ReadLaunchLog(in_log);
    ASSERT_EQ(expected.size(), 10u);
    EXPECT_EQ(Sorted(c.launches.count(in_pid) ? c.launches.at(in_pid) : std::vector<std::string>{}),
              expected);
  }

  // The process of capture `c` that ran with launch log `log` was traced from its first call:
  // its zeInit, and every launch with its kernel's name (created right at its start), exactly
  // as it logged them (`launches` of them).
  static void ExpectTracedFromTheFirstCall(const LogContents& c, const std::string& log, size_t launches) {
    SCOPED_TRACE(log);
    const auto expected = ReadLaunchLog(log, /*strip_tid=*/true);
    ASSERT_EQ(expected.size(), launches);
    uint32_t pid = 0;
    for (const auto& [p, identity] : c.processes)
      if (identity.command_line.find(log) != std::string::npos) pid = p;
    ASSERT_GT(pid, 0u) << "the process is not in the log";
    const auto got = Sorted(c.launches_no_tid.count(pid) ? c.launches_no_tid.at(pid)
                                                         : std::vector<std::string>{});
    EXPECT_EQ(got, expected);
    for (const auto& launch : got)
      EXPECT_NE(launch.rfind("kernel@", 0), 0u) << "a kernel created before the probes: " << launch;
    const auto& calls = c.api_calls.count(pid) ? c.api_calls.at(pid) : std::vector<uint16_t>{};
    EXPECT_NE(std::find(calls.begin(), calls.end(), XT_ZE_INIT), calls.end())
        << "its first call, zeInit, is missing (" << calls.size() << " calls captured)";
  }
};

TEST_F(ProbeScopeTest, CommByDefaultLeavesAProcessOutsideTheScopeUntouched) {
  const std::string workload = UniqueWorkload(), name = std::filesystem::path(workload).filename();
  const std::string out = Path("comm.capnp"), in_log = Path("inside.tsv");
  Subprocess xtrace({kXtrace, "attach", "--comm", name, "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("tracing every process named " + name, 60s)) << xtrace.stderr_text();
  Subprocess inside(Waiting(workload, in_log), {kSimDriver});
  ExpectOutsideUntouched(xtrace, &inside, PidFromReadyLine(inside.WaitStdout("ready", 30s)), in_log, out);
}

TEST_F(ProbeScopeTest, CgroupByDefaultLeavesAProcessOutsideTheScopeUntouched) {
  ScratchCgroup cgroup("xtrace-itest-scope-" + std::to_string(getpid()));
  if (cgroup.path().empty()) GTEST_SKIP() << "cgroup v2 not usable here: " << cgroup.why_not();
  const std::string out = Path("cgroup.capnp"), in_log = Path("inside.tsv");
  Subprocess xtrace({kXtrace, "attach", "--cgroup", cgroup.path(), "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("tracing every process in cgroup", 60s)) << xtrace.stderr_text();
  Subprocess inside(InCgroup(cgroup.path(), Waiting(kWorkload, in_log)), {kSimDriver});
  ExpectOutsideUntouched(xtrace, &inside, PidFromReadyLine(inside.WaitStdout("ready", 30s)), in_log, out);
}

// `record`'s command is given, and its children are found: the command's own child is the
// process in scope here, the outside one the same program started by the test.
TEST_F(ProbeScopeTest, RecordChildrenByDefaultLeaveAProcessOutsideTheScopeUntouched) {
  const std::string out = Path("children.capnp"), in_log = Path("inside.tsv");
  std::string command;
  for (const auto& a : Waiting(kWorkload, in_log)) command += " '" + a + "'";
  Subprocess xtrace({kXtrace, "record", "-o", out, "--", "/bin/sh", "-c", command + "; true"},
                    {kSimDriver});
  ExpectOutsideUntouched(xtrace, nullptr, PidFromReadyLine(xtrace.WaitStdout("ready", 60s)), in_log, out);
}

// Short runs started during a --comm capture, three in a row: each held at its exec and at
// its linker's report until its own probes are in, so each is whole from its zeInit.
TEST_F(ProbeScopeTest, ProcessesStartedDuringACommCaptureAreTracedFromTheirFirstCall) {
  const std::string workload = UniqueWorkload(), name = std::filesystem::path(workload).filename();
  const std::string out = Path("started.capnp");
  Subprocess xtrace({kXtrace, "attach", "--comm", name, "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("tracing every process named " + name, 60s)) << xtrace.stderr_text();
  std::vector<std::string> logs;
  for (int i = 0; i < 3; ++i) {
    logs.push_back(Path("run" + std::to_string(i) + ".tsv"));
    auto run = RunCommand({workload, "--iterations", "2", "--threads", "2", "--launch-log", logs.back()},
                          {kSimDriver}, 60s);
    ASSERT_EQ(run.exit_code(), 0) << run.err;
  }
  ASSERT_TRUE(StopCapture(xtrace)) << xtrace.stderr_text();
  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  SCOPED_TRACE("xtrace said:\n" + xtrace.stderr_text());
  for (const std::string& log : logs) ExpectTracedFromTheFirstCall(c, log, 20);
}

// The same for the children a `record`ed command starts after a pause, three in a row.
TEST_F(ProbeScopeTest, ChildrenStartedDuringARecordAreTracedFromTheirFirstCall) {
  const std::string out = Path("record.capnp");
  std::vector<std::string> logs;
  std::string script = "sleep 0.5";
  for (int i = 0; i < 3; ++i) {
    logs.push_back(Path("child" + std::to_string(i) + ".tsv"));
    script += " && " + kWorkload + " --iterations 2 --threads 2 --launch-log " + logs.back();
  }
  auto r = RunCommand({kXtrace, "record", "-o", out, "--", "/bin/sh", "-c", script}, {kSimDriver}, 120s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  SCOPED_TRACE("xtrace said:\n" + r.err);
  for (const std::string& log : logs) ExpectTracedFromTheFirstCall(c, log, 20);
}

// Without a race: xtrace cannot run at all (it is stopped) while a second process of its
// scope starts, on a loader file already probed for the first. Its own probes can only go in
// once xtrace runs again: held, it waits for them and is whole; with --no-hold it runs through
// unprobed and is lost; with --no-hold --probes-per-file the file's probes are in every
// process that maps it already, and it is whole. The holds are what makes probes per process
// complete.
TEST_F(ProbeScopeTest, AStartWhileXtraceIsStoppedWaitsForItsOwnProbes) {
  const std::string workload = UniqueWorkload(), name = std::filesystem::path(workload).filename();
  struct Case {
    std::string tag;
    std::vector<std::string> options;
    bool held, whole;
  };
  for (const Case& k : {Case{"held", {}, true, true}, Case{"unheld", {"--no-hold"}, false, false},
                        Case{"per-file", {"--no-hold", "--probes-per-file"}, false, true}}) {
    SCOPED_TRACE(k.tag);
    const std::string out = Path(k.tag + ".capnp"), first_log = Path(k.tag + "-first.tsv"),
                      log = Path(k.tag + ".tsv");
    std::vector<std::string> argv = {kXtrace, "attach", "--comm", name, "--hold-max", "60000", "-o", out};
    argv.insert(argv.end(), k.options.begin(), k.options.end());
    Subprocess xtrace(argv);
    ASSERT_TRUE(xtrace.WaitStderr("tracing every process named " + name, 60s)) << xtrace.stderr_text();
    Subprocess first(Waiting(workload, first_log), {kSimDriver});
    const uint32_t first_pid = PidFromReadyLine(first.WaitStdout("ready", 30s));
    ASSERT_GT(first_pid, 0u) << first.stderr_text();
    ASSERT_TRUE(WaitAttached(xtrace, {first_pid}, 30s)) << xtrace.stderr_text();

    xtrace.Signal(SIGSTOP);
    Subprocess second({workload, "--iterations", "1", "--launch-log", log}, {kSimDriver});
    std::optional<int> status;
    if (k.held) {
      ASSERT_TRUE(WaitState(second.pid(), 'T', 30s)) << "not held: state " << ProcessState(second.pid());
      std::this_thread::sleep_for(300ms);
      EXPECT_EQ(ProcessState(second.pid()), 'T') << "a held process went on before it was probed";
      xtrace.Signal(SIGCONT);
      status = second.Wait(60s);
    } else {
      status = second.Wait(60s);  // all of it while xtrace is stopped
      xtrace.Signal(SIGCONT);
    }
    ASSERT_TRUE(status.has_value() && WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
        << second.stderr_text();
    testing::EndWorkloads({&first});
    ASSERT_TRUE(StopCapture(xtrace)) << xtrace.stderr_text();
    const LogContents c = ReadLogContents(out);
    ASSERT_TRUE(c.readable) << c.error;
    const auto made = ReadLaunchLog(log, /*strip_tid=*/true);
    ASSERT_EQ(made.size(), 5u);
    const auto second_pid = static_cast<uint32_t>(second.pid());
    const auto got = Sorted(c.launches_no_tid.count(second_pid) ? c.launches_no_tid.at(second_pid)
                                                                : std::vector<std::string>{});
    if (k.whole)
      EXPECT_EQ(got, made) << xtrace.stderr_text();
    else
      EXPECT_TRUE(got.empty()) << got.size() << " launches captured from a process xtrace could not probe";
  }
}

}  // namespace
}  // namespace xtrace
