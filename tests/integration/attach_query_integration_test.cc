// Integration tests of attaching to a process that made its kernels before the attach: every
// launch is named with the names the workload logs (xtrace asks the process's own loader,
// holding a thread a moment), one thread or eight launching at once; --no-query leaves them
// "kernel@0x..."; a parent that stops with its held child (nsenter) goes on with it; xtrace
// SIGKILLed in the middle of a query leaves the workload running with its results unchanged
// (the guardian finishes and undoes the call); a process another tracer (strace, gdb) holds is
// left alone, and the summary says why. On trixie's loader (Level Zero 1.20, under chroot) the
// lists, queues and events made before the attach are asked about too: every launch on its
// device and engine (an answer a driver does not write is none); on the host's (1.8) their
// engine is said unknown, not guessed. A regular list recorded before the attach and executed
// after it is counted and said. A query that is slow and holds the driver's lock is answered,
// never undone in the middle.
#include <gtest/gtest.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/read_file.h"
#include "capture_reader.h"
#include "log/log_reader.h"
#include "log_contents.h"
#include "root_fixture.h"
#include "subprocess.h"
#include "trace_checks.h"
#include "trixie_tree.h"
#include "xtrace/records.h"

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
const std::string kMirrorParent = MIRROR_PARENT_BIN;
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
  // program (strace). With `stall`, xtrace is stopped (SIGSTOP) from just before the workload
  // is let go until that long after: a capture off its CPU while the first launches hold.
  // `workload_args` go after the workload's own.
  Run AttachAndRunARound(int threads, const std::vector<std::string>& xtrace_args = {},
                         const std::vector<std::string>& wrap = {},
                         const std::vector<std::string>& workload_env = {}, int iterations = 3,
                         std::chrono::milliseconds stall = 0ms,
                         const std::vector<std::string>& workload_args = {}) {
    Run run;
    std::vector<std::string> argv = wrap;
    for (const std::string& a : {kWorkload, std::string("--wait-for-signal"), std::string("--threads"),
                                 std::to_string(threads), std::string("--iterations"), std::to_string(iterations),
                                 std::string("--launch-log"), Path("launches.tsv")})
      argv.push_back(a);
    argv.insert(argv.end(), workload_args.begin(), workload_args.end());
    std::vector<std::string> env = {kSimDriver};
    env.insert(env.end(), workload_env.begin(), workload_env.end());
    Subprocess workload(argv, env);
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
    if (stall > 0ms) xtrace.Signal(SIGSTOP);
    kill(static_cast<pid_t>(run.pid), SIGUSR1);  // the workload, not a wrapper around it
    if (stall > 0ms) {
      std::this_thread::sleep_for(stall);
      xtrace.Signal(SIGCONT);
    }
    EXPECT_TRUE(workload.WaitStdout("round 1", 120s))
        << workload.stderr_text() << "\nxtrace so far:\n" << xtrace.stderr_text();
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

  // Attaches to a workload with `threads` threads on trixie's loader (below).
  void AttachOnTrixiesLoader(int threads);

  // The trixie tree in `root`, or "" once the test is skipped (failed under CI) for want of it.
  void FindTrixieTree(std::string* root) {
    *root = testing::TrixieRoot();
    if (!root->empty()) return;
    if (std::getenv("CI")) FAIL() << "no Debian trixie tree in " << testing::TrixieDir() << ": " << testing::WhyNoTrixie();
    GTEST_SKIP() << "no Debian trixie tree in " << testing::TrixieDir() << " (XTRACE_TRIXIE_ROOT): "
                 << testing::WhyNoTrixie();
  }

  // ze_workload and the simulated GPU copied into a directory of the trixie tree at `root`,
  // removed when the test ends; its path inside the tree.
  std::string CopyIntoTrixieTree(const std::string& root) {
    std::string dir = root + "/tmp/xtrace-attachq-XXXXXX";
    if (!mkdtemp(dir.data())) {
      ADD_FAILURE() << "mkdtemp in " << root << "/tmp: " << std::strerror(errno);
      return "";
    }
    tree_dirs_.push_back(dir);
    std::filesystem::copy_file(kWorkload, dir + "/ze_workload");
    std::filesystem::copy_file(SIMZE_LIB, dir + "/libxtrace_simze.so");
    return dir.substr(root.size());
  }

  // Runs ze_workload copied `inside` the trixie tree at `root` under chroot, with `env` and
  // then `args` after its own, attaches xtrace (its environment `xtrace_env`) once it is
  // ready, runs a round (3 iterations) and stops both. Returns xtrace's standard error; the
  // workload's pid in `pid`, 0 if it never got ready.
  std::string AttachToARoundInTheTree(const std::string& root, const std::string& inside,
                                      const std::vector<std::string>& env,
                                      const std::vector<std::string>& args,
                                      const std::vector<std::string>& xtrace_env, uint32_t* pid) {
    std::vector<std::string> argv = {"/usr/sbin/chroot", root, "/usr/bin/env",
                                     "ZE_ENABLE_ALT_DRIVERS=" + inside + "/libxtrace_simze.so"};
    argv.insert(argv.end(), env.begin(), env.end());
    for (const std::string& a : {inside + "/ze_workload", std::string("--wait-for-signal"), std::string("--iterations"),
                                 std::string("3"), std::string("--launch-log"), inside + "/launches.tsv"})
      argv.push_back(a);
    argv.insert(argv.end(), args.begin(), args.end());
    Subprocess workload(argv, {});
    *pid = PidFromReadyLine(workload.WaitStdout("ready", 60s));
    if (*pid == 0) {
      ADD_FAILURE() << workload.stderr_text();
      return "";
    }
    Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(*pid), "-o", Path("run.capnp")}, xtrace_env);
    if (!xtrace.WaitStderr("attached to pid " + std::to_string(*pid), 30s)) {
      ADD_FAILURE() << xtrace.stderr_text();
      return "";
    }
    kill(static_cast<pid_t>(*pid), SIGUSR1);
    EXPECT_TRUE(workload.WaitStdout("round 1", 120s)) << workload.stderr_text();
    xtrace.Signal(SIGINT);
    EXPECT_TRUE(xtrace.Wait(60s).has_value());
    kill(static_cast<pid_t>(*pid), SIGTERM);
    EXPECT_EQ(workload.Wait(30s), 0) << workload.stderr_text();
    return xtrace.stderr_text();
  }

  ~AttachQueryIntegrationTest() override {
    for (const std::string& d : tree_dirs_) std::filesystem::remove_all(d);
  }

 private:
  std::vector<std::string> tree_dirs_;

 protected:

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
  // The host's loader (1.8) cannot say more: said once, naming what it lacks.
  EXPECT_NE(run.xtrace_err.find("has no zeCommandListGetDeviceHandle (Level Zero 1.9"), std::string::npos)
      << run.xtrace_err;
}

// xtrace's holds as the log says them, one record each whatever it learned: how much of
// [start, end) thread `tid` of `pid` stood still for them, held itself or with its whole
// process (a query hold stops the process until the held thread is seized).
struct LoggedHolds {
  std::vector<XtraceHold> holds;

  explicit LoggedHolds(const testing::Capture& c) : holds(c.All<XtraceHold>()) {}
  uint64_t Within(uint32_t pid, uint32_t tid, uint64_t start, uint64_t end) const {
    std::vector<std::pair<uint64_t, uint64_t>> parts;
    for (const XtraceHold& h : holds) {
      if (h.pid != pid) continue;
      const uint64_t lo = std::max(h.start_ns, start);
      const uint64_t hi = std::min(h.tid == tid ? h.end_ns : h.process_end_ns, end);
      if (hi > lo) parts.emplace_back(lo, hi);
    }
    std::sort(parts.begin(), parts.end());
    uint64_t held = 0, reached = 0;
    for (const auto& [lo, hi] : parts) {
      if (hi > std::max(lo, reached)) held += hi - std::max(lo, reached);
      reached = std::max(reached, hi);
    }
    return held;
  }
};

// The report leaves every hold the log records out of the program's time: the launches' Max is
// the longest launch less the holds in it, as the log says them, every gap mostly under a hold
// says so, and the holds are said once with the log's facts, counted as the log has them.
// Computed from the log itself, whatever the machine's load made the holds last.
void ExpectTheReportLeavesTheHoldsOut(const std::string& log, uint32_t pid) {
  const testing::Capture c = testing::ReadWholeCapture(log);
  const LoggedHolds holds(c);
  ASSERT_GT(holds.holds.size(), 0u) << "every hold has a record";
  uint64_t longest_own = 0, held_launches = 0;
  for (const KernelLaunch& l : c.launches) {
    if (l.pid != pid) continue;
    const uint64_t in_it = holds.Within(pid, l.tid, l.start_ns, l.end_ns);
    held_launches += in_it ? 1 : 0;
    longest_own = std::max(longest_own, l.end_ns - l.start_ns - in_it);
  }
  ASSERT_GT(held_launches, 0u) << "a launch of a kernel made before the attach is held in it";

  const auto report = testing::RunCommand({kXtrace, "report", "--format", "json", log}, {}, 60s);
  ASSERT_EQ(report.exit_code(), 0) << report.err;
  const nlohmann::json j = nlohmann::json::parse(report.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << report.out;
  const nlohmann::json& tables = j["sections"][0]["tables"];
  bool found = false;
  for (const auto& row : tables["host_calls"]) {
    if (row["name"] != "zeCommandListAppendLaunchKernel") continue;
    found = true;
    EXPECT_EQ(row["max_ns"].get<uint64_t>(), longest_own) << row.dump();
  }
  EXPECT_TRUE(found) << tables["host_calls"].dump();
  // A gap more than half under a hold of its submitting thread is the hold's; busy and the
  // idle causes still make up each engine's span.
  auto origin = LogReader::Open(log);
  ASSERT_TRUE(origin.ok());
  const uint64_t start_ns = origin->header().start_clock.monotonic_ns;
  for (const auto& gap : tables["gaps"]) {
    const uint64_t from = start_ns + gap["start_ns"].get<uint64_t>();
    const uint64_t length = gap["duration_ns"].get<uint64_t>();
    if (holds.Within(pid, gap["submit_tid"].get<uint32_t>(), from, from + length) * 2 > length) {
      EXPECT_EQ(gap["cause"], "held by xtrace") << gap.dump();
    }
  }
  uint64_t held_in_all = 0;
  for (const XtraceHold& h : holds.holds) held_in_all += h.end_ns - h.start_ns;
  for (const auto& e : tables["engines"]) {
    uint64_t parts = e["busy_ns"].get<uint64_t>();
    for (const char* cause : {"idle_launch_ns", "idle_sync_ns", "idle_waiting_ns", "idle_unknown_ns", "idle_held_ns"})
      parts += e[cause].get<uint64_t>();
    EXPECT_EQ(parts, e["span_ns"].get<uint64_t>()) << e.dump();
    EXPECT_LE(e["idle_held_ns"].get<uint64_t>(), held_in_all) << e.dump();
  }
  // Said once, with how many holds the log has.
  const std::string said = "xtrace held the traced threads ";
  ASSERT_EQ(j["warnings"].dump().find(said), j["warnings"].dump().rfind(said)) << j["warnings"].dump();
  bool told = false;
  const size_t count = holds.holds.size();
  for (const auto& w : j["warnings"]) {
    const std::string text = w.get<std::string>();
    if (text.find(said) == std::string::npos) continue;
    told = true;
    EXPECT_NE(text.find("(" + std::to_string(count) + (count == 1 ? " hold)" : " holds)")), std::string::npos)
        << text;
  }
  EXPECT_TRUE(told) << j["warnings"].dump();
}

// xtrace's holds are not the program's time. The workload's first launch of each kernel made
// before the attach is held while xtrace asks its name: milliseconds, in a launch that takes
// microseconds, and `xtrace report` used to show it as the launches' Max (19 ms on the host's
// loader) and the engine's gap under it as "waiting" or "unknown".
TEST_F(AttachQueryIntegrationTest, TheReportLeavesXtracesHoldsOutOfTheProgramsTime) {
  const Run run = AttachAndRunARound(1);
  ExpectEveryLaunchNamed(run, 1);
  const testing::Capture c = testing::ReadWholeCapture(Path("run.capnp"));
  // What each hold learned is written before its record, with its span.
  for (const KernelCreate& k : c.creates) {
    if (!k.learned) continue;
    bool spanned = false;
    for (const XtraceHold& h : c.All<XtraceHold>())
      spanned = spanned || (h.tid == k.tid && h.start_ns == k.start_ns && h.end_ns == k.end_ns && h.learned > 0);
    EXPECT_TRUE(spanned) << "kernel " << std::hex << k.kernel << " learned outside a hold's record";
  }
  ExpectTheReportLeavesTheHoldsOut(Path("run.capnp"), run.pid);
}

// A hold that learns nothing is a hold all the same. The simulated driver answers no
// zeKernelGetName: every hold asks and fails, and used to leave no trace in the log, so the
// report counted those milliseconds as the launches' own (and the trace showed nothing under
// them). Two threads: the other one stands still too while the held one is being seized.
TEST_F(AttachQueryIntegrationTest, AHoldThatLearnsNothingIsStillLeftOutOfTheProgramsTime) {
  const Run run = AttachAndRunARound(2, {}, {}, {"XTRACE_SIMZE_KERNEL_NAME_UNSUPPORTED=1"});
  const testing::Capture c = testing::ReadWholeCapture(Path("run.capnp"));
  for (const KernelCreate& k : c.creates) EXPECT_FALSE(k.learned) << "nothing was learned";
  const std::vector<XtraceHold> holds = c.All<XtraceHold>();
  ASSERT_FALSE(holds.empty()) << run.xtrace_err;
  uint64_t failed = 0;
  for (const XtraceHold& h : holds) {
    EXPECT_EQ(h.pid, run.pid);
    EXPECT_EQ(h.cause, HoldCause::kAttachQueries);
    EXPECT_EQ(h.learned, 0u);
    EXPECT_LE(h.start_ns, h.process_end_ns);
    EXPECT_LE(h.process_end_ns, h.end_ns);
    failed += h.failed;
  }
  EXPECT_EQ(failed, uint64_t{2} * kKernelsPerThread) << "each kernel asked once, in some hold";
  EXPECT_NE(run.xtrace_err.find("could not be queried in the process"), std::string::npos) << run.xtrace_err;
  ExpectTheReportLeavesTheHoldsOut(Path("run.capnp"), run.pid);
  // The trace draws each hold once, on its thread, with what it came to.
  const auto convert = testing::RunCommand({kXtrace, "convert", Path("run.capnp"), "-o", Path("run.json")}, {}, 60s);
  ASSERT_EQ(convert.exit_code(), 0) << convert.err;
  const auto convert_pf =
      testing::RunCommand({kXtrace, "convert", Path("run.capnp"), "-o", Path("run.pftrace")}, {}, 60s);
  ASSERT_EQ(convert_pf.exit_code(), 0) << convert_pf.err;
  for (const std::string& problem : test_util::CheckEveryFormat(Path("run.json"), Path("run.pftrace")))
    ADD_FAILURE() << problem;
  const nlohmann::json trace = nlohmann::json::parse(ReadWholeFile(Path("run.json")).value_or(""), nullptr, false);
  ASSERT_FALSE(trace.is_discarded());
  size_t slices = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("name", "") != "xtrace: held (attach queries)") continue;
    ++slices;
    EXPECT_EQ(e["args"]["learned"], 0) << e.dump();
    EXPECT_GE(e["args"]["failed"].get<uint64_t>(), 1u) << e.dump();
  }
  EXPECT_EQ(slices, holds.size());
}

// The host's loader (1.8) cannot say on which engine a queue or list made before the attach
// runs. The workload's run on engine index 2; they used to be drawn and reported as engine
// 0.0 all the same ("queue 0x... (ordinal 0, index 0)", "GPU 0 compute 0.0"). Now the log
// says their engine is unknown, the trace's tracks say so, and the report names them by handle.
TEST_F(AttachQueryIntegrationTest, OnAnOlderLoaderEnginesMadeBeforeTheAttachAreNotGuessed) {
  const Run run = AttachAndRunARound(1, {}, {}, {}, 3, 0ms, {"--queue-index", "2"});
  ExpectEveryLaunchNamed(run, 1);
  const testing::Capture c = testing::ReadWholeCapture(Path("run.capnp"));
  const auto queues = c.All<DeviceQueue>();
  EXPECT_EQ(queues.size(), 2u) << "the thread's queue and immediate list";
  for (const DeviceQueue& q : queues) EXPECT_TRUE(q.engine_unknown) << std::hex << q.handle;

  const auto conv = testing::RunCommand({kXtrace, "convert", "-q", Path("run.capnp"), "-o", Path("run.json")});
  ASSERT_EQ(conv.exit_code(), 0) << conv.err;
  const std::string json = ReadWholeFile(Path("run.json")).value_or("");
  EXPECT_NE(json.find("(engine unknown: made before the attach) of pid " + std::to_string(run.pid)),
            std::string::npos);
  EXPECT_EQ(json.find("(ordinal "), std::string::npos) << "no track claims an engine";

  const auto report = testing::RunCommand({kXtrace, "report", Path("run.capnp")}, {}, 60s);
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_NE(report.out.find("GPU 0 queue 0x"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("GPU 0 immediate list 0x"), std::string::npos) << report.out;
  EXPECT_EQ(report.out.find("compute 0."), std::string::npos) << report.out;
}

// A regular list recorded before the attach and only executed after it: what it runs is
// unknown, so its executions yield no operations; the summary and the report count them.
// The capture off its CPU for longer than --hold-max (500 ms) as the first launches hold, as on
// a busy node: the held threads wait for it (up to --query-max) and every launch is named. They
// used to be continued by the guardian at 500 ms, and the launch held ran on unnamed.
TEST_F(AttachQueryIntegrationTest, ACaptureOffItsCpuPastTheHoldBoundStillNamesEveryLaunch) {
  const Run run = AttachAndRunARound(2, {}, {}, {}, 3, 1500ms);
  ExpectEveryLaunchNamed(run, 2);
  EXPECT_EQ(run.xtrace_err.find("could not be used"), std::string::npos) << run.xtrace_err;
}

TEST_F(AttachQueryIntegrationTest, ExecutionsOfListsRecordedBeforeTheAttachAreCounted) {
  Subprocess workload({kWorkload, "--wait-for-signal", "--record-once", "--iterations", "3",
                       "--launch-log", Path("launches.tsv")},
                      {kSimDriver});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 60s));
  ASSERT_NE(pid, 0u) << workload.stderr_text();
  Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(pid), "-o", Path("run.capnp")},
                    {kSimDriver});
  ASSERT_TRUE(xtrace.WaitStderr("attached to pid " + std::to_string(pid), 30s)) << xtrace.stderr_text();
  workload.Signal(SIGUSR1);
  ASSERT_TRUE(workload.WaitStdout("round 1 launches=6", 60s)) << workload.stdout_text() << workload.stderr_text();
  xtrace.Signal(SIGINT);
  ASSERT_TRUE(xtrace.Wait(60s).has_value());
  workload.Signal(SIGTERM);
  EXPECT_EQ(workload.Wait(30s), 0);
  const std::string said = "3 executions of command lists recorded before the attach: their contents are unknown";
  EXPECT_NE(xtrace.stderr_text().find(said), std::string::npos) << xtrace.stderr_text();
  const auto report = testing::RunCommand({kXtrace, "report", Path("run.capnp")}, {}, 60s);
  EXPECT_EQ(report.status, 0) << report.err;
  EXPECT_NE(report.err.find(said), std::string::npos) << report.err;
  // The immediate list's launches are all there, named.
  const LogContents log = ReadLogContents(Path("run.capnp"));
  EXPECT_EQ(Sorted(log.launches_no_tid.at(pid)), ReadLaunchLog(Path("launches.tsv"), /*strip_tid=*/true));
}

// Attaches to ze_workload with `threads` launching threads under chroot in the trixie tree
// (Level Zero 1.20), after it made everything, runs a round, and checks every launch named, on
// device 1 and engine (compute, 2), measured exactly where the workload read its event's kernel
// timestamps, and the lists, queues, events and device learned as creations.
void AttachQueryIntegrationTest::AttachOnTrixiesLoader(int threads) {
  std::string root;
  FindTrixieTree(&root);
  if (root.empty()) return;
  const std::string inside = CopyIntoTrixieTree(root);
  ASSERT_FALSE(inside.empty());
  const std::string dir = root + inside;
  uint32_t pid = 0;
  // xtrace's own view: both devices, in number order (its device 1 is the workload's first).
  const std::string err = AttachToARoundInTheTree(
      root, inside, {"XTRACE_SIMZE_DEVICES=2", "XTRACE_SIMZE_DEVICE_ORDER=1,0"},
      {"--threads", std::to_string(threads), "--queue-index", "2"}, {kSimDriver, "XTRACE_SIMZE_DEVICES=2"}, &pid);
  ASSERT_NE(pid, 0u);

  const LogContents log = ReadLogContents(Path("run.capnp"));
  ASSERT_TRUE(log.launches_no_tid.count(pid)) << err;
  const auto expected = ReadLaunchLog(dir + "/launches.tsv", /*strip_tid=*/true);
  ASSERT_EQ(expected.size(), size_t(threads) * 3 * kKernelsPerThread);
  EXPECT_EQ(Sorted(log.launches_no_tid.at(pid)), expected) << err;
  const testing::Capture c = testing::ReadWholeCapture(Path("run.capnp"));
  // Each thread's queue and immediate list, learned: on device 1, compute ordinal 0, index 2.
  int queues = 0, immediate = 0;
  std::set<uint32_t> engines;  // their tracks
  for (const DeviceQueue& q : c.All<DeviceQueue>()) {
    if (q.pid != pid) continue;
    EXPECT_EQ(q.device, 1u) << "engine 0x" << std::hex << q.handle;
    EXPECT_EQ(q.ordinal, 0u);
    EXPECT_EQ(q.index, 2u);
    ++(q.immediate ? immediate : queues);
    engines.insert(q.track);
  }
  EXPECT_EQ(queues, threads);
  EXPECT_EQ(immediate, threads);
  // The events whose kernel timestamps the workload read.
  std::set<uint64_t> read;
  for (const ApiCall& call : c.Calls(XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP))
    if (call.pid == pid && call.result == 0) read.insert(call.arg[0]);
  EXPECT_EQ(read.size(), size_t(threads) * 3) << "three events a thread";
  size_t kernels = 0, measured = 0;
  for (const DeviceOp& op : c.All<DeviceOp>()) {
    if (op.pid != pid) continue;
    EXPECT_EQ(op.device, 1u);
    EXPECT_TRUE(engines.count(op.track)) << "op on track " << op.track;
    if (op.kind != DeviceOpKind::kKernel) continue;
    ++kernels;
    EXPECT_NE(c.strings.Get(op.name).rfind("kernel@", 0), 0u) << c.strings.Get(op.name);
    EXPECT_EQ(op.measured, read.count(op.signal_event) == 1) << c.strings.Get(op.name);
    measured += op.measured ? 1 : 0;
  }
  EXPECT_EQ(kernels, expected.size());
  // Three of each iteration's five kernels signal a timestamp event the workload reads.
  EXPECT_EQ(measured, size_t(threads) * 3 * 3) << kernels << " kernels\n" << err;
  // In the log as creations marked learned: per thread a list of each kind, a queue, a pool
  // with kernel timestamps and the three signal events; the one device once.
  std::map<uint16_t, int> learned;
  for (const ApiCall& call : c.All<ApiCall>()) {
    if (!call.learned) continue;
    ++learned[call.fn];
    if (call.fn == XT_ZE_EVENT_POOL_CREATE) {
      EXPECT_NE(call.arg[1] & 4u, 0u) << "kernel timestamps";
    }
  }
  EXPECT_EQ(learned[XT_ZE_COMMAND_LIST_CREATE], threads);
  EXPECT_EQ(learned[XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE], threads);
  EXPECT_EQ(learned[XT_ZE_COMMAND_QUEUE_CREATE], threads);
  EXPECT_EQ(learned[XT_ZE_EVENT_POOL_CREATE], threads);
  EXPECT_EQ(learned[XT_ZE_EVENT_CREATE], threads * 3);
  EXPECT_EQ(learned[XT_ZE_DEVICE_GET_PROPERTIES], 1);
  // Objects: 5 kernels, 2 lists, a queue and 3 events per thread.
  EXPECT_NE(err.find(std::to_string(threads * 11) + " objects made before the attach were queried"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("Level Zero 1.9"), std::string::npos) << err;
  EXPECT_EQ(err.find("waited for a later hold"), std::string::npos) << err;
}

// Trixie's loader (Level Zero 1.20) has the questions for lists, queues and event pools. The
// workload runs under chroot in the trixie tree, on the second of two simulated devices (it
// lists them the other way round, as an affinity mask can) and on engine index 2; it made
// everything before "ready". Every launch after the attach is named, on device 1 and engine
// (compute, 2), and those whose events carry kernel timestamps are measured.
TEST_F(AttachQueryIntegrationTest, OnTrixiesLoaderListsQueuesAndEventsMadeBeforeTheAttachAreLearned) {
  AttachOnTrixiesLoader(2);
}

// The same with eight threads launching at once, each on its own lists, queue and events: one
// hold asks about whatever the others use meanwhile (88 objects), and their launches, which
// ride on it, are read only after it. On a loaded machine those calls outlasted a fixed bound
// of 2 s for the hold: the rest waited for a later hold, and the launches read before it were
// "kernel@0x...". A hold now asks on while the process answers (HoldBound).
TEST_F(AttachQueryIntegrationTest, OnTrixiesLoaderEightThreadsLaunchingAtOnceAreAllOnTheirDeviceAndEngine) {
  AttachOnTrixiesLoader(8);
}

// A driver that answers Level Zero 1.9's object queries with success and writes nothing, as
// Level Zero's own null driver does (XTRACE_SIMZE_SILENT_QUERIES), on trixie's loader. Its
// immediate list used to be taken for a regular one (the unwritten answer read as "false"),
// and every launch on it, never executed by a queue, was dropped; its events were taken to
// have no kernel timestamps. An answer not written is none: the lists, queue and events are
// rebuilt from what the process does with them, as on an older loader, and said so.
TEST_F(AttachQueryIntegrationTest, OnTrixiesLoaderQueriesADriverLeavesUnansweredAreNotTakenAsAnswers) {
  std::string root;
  FindTrixieTree(&root);
  if (root.empty()) return;
  const std::string inside = CopyIntoTrixieTree(root);
  ASSERT_FALSE(inside.empty());
  uint32_t pid = 0;
  const std::string err =
      AttachToARoundInTheTree(root, inside, {"XTRACE_SIMZE_SILENT_QUERIES=1"}, {}, {kSimDriver}, &pid);
  ASSERT_NE(pid, 0u);

  const auto expected = ReadLaunchLog(root + inside + "/launches.tsv", /*strip_tid=*/true);
  ASSERT_EQ(expected.size(), size_t(3 * kKernelsPerThread));
  const testing::Capture c = testing::ReadWholeCapture(Path("run.capnp"));
  // No learned creation claims what the driver never said.
  for (const ApiCall& call : c.All<ApiCall>())
    EXPECT_TRUE(!call.learned || call.fn == XT_ZE_DEVICE_GET_PROPERTIES) << "learned call " << call.fn;
  // Every launch is a device operation: those on the immediate list too.
  size_t kernels = 0, measured = 0;
  for (const DeviceOp& op : c.All<DeviceOp>()) {
    if (op.pid != pid || op.kind != DeviceOpKind::kKernel) continue;
    ++kernels;
    measured += op.measured ? 1 : 0;
  }
  EXPECT_EQ(kernels, expected.size()) << err;
  // The three events a round's iteration reads, measured from the process reading them.
  EXPECT_GE(measured, size_t(3 * 3)) << err;
  for (const DeviceQueue& q : c.All<DeviceQueue>()) EXPECT_TRUE(q.engine_unknown) << std::hex << q.handle;
  EXPECT_NE(err.find("returned success without writing its answer"), std::string::npos) << err;
}

TEST_F(AttachQueryIntegrationTest, EightThreadsLaunchingAtOnceAreAllNamed) {
  const Run run = AttachAndRunARound(8);
  ExpectEveryLaunchNamed(run, 8);
}

// The simulated driver's zeKernelGetName takes 120 ms holding the driver's device-state lock
// (its engine and every host wait take it), as a real driver's query may hold its own. Calls
// used to be undone after 100 ms each, the thread put back at its launch with that lock
// taken: the process hung at its next wait. A hold is bounded as a whole now (seconds), and
// a call is never undone inside the callee: every launch is named and the round completes.
TEST_F(AttachQueryIntegrationTest, ASlowQueryThatHoldsTheDriversLockIsAnsweredWithoutAHang) {
  const Run run = AttachAndRunARound(2, {}, {},
                                     {"XTRACE_SIMZE_KERNEL_NAME_DELAY_MS=120", "XTRACE_SIMZE_KERNEL_NAME_LOCKED=1"});
  ExpectEveryLaunchNamed(run, 2);
  EXPECT_EQ(run.xtrace_err.find("could not be:"), std::string::npos) << run.xtrace_err;
}

// The simulated driver's zeKernelGetName takes 300 ms (two calls a kernel): while the first
// thread is held at its first launch the second one launches its five kernels, all asked in
// that hold, which so lasts past 2 s. A hold asks on while the process answers: nothing waits
// for a later hold, and every launch, those that rode on the hold included, is named.
TEST_F(AttachQueryIntegrationTest, AHoldAsksOnWhileTheProcessAnswers) {
  const Run run = AttachAndRunARound(2, {}, {}, {"XTRACE_SIMZE_KERNEL_NAME_DELAY_MS=300"});
  ExpectEveryLaunchNamed(run, 2);
  EXPECT_EQ(run.xtrace_err.find("waited for a later hold"), std::string::npos) << run.xtrace_err;
  EXPECT_EQ(run.xtrace_err.find("could not be:"), std::string::npos) << run.xtrace_err;
}

// More to ask than one hold's cap (--query-max 2000) allows: the simulated driver's
// zeKernelGetName takes 450 ms, and while the first thread is held at its first launch the
// second one launches its five kernels, all asked in that hold. What is not asked when the cap
// passes stays asked for and is asked at the next hold (the first thread's next launch of a
// kernel it had not used): once settled unasked, it was never asked again, and its launches
// stayed unnamed for good. Every kernel ends learned, or failed by its own call (the one under
// way at the cap is let finish, its answer unused); none is left unasked.
TEST_F(AttachQueryIntegrationTest, WhatOneHoldsCapLeavesUnaskedIsAskedAtTheNextHold) {
  const Run run = AttachAndRunARound(2, {"--query-max", "2000"}, {}, {"XTRACE_SIMZE_KERNEL_NAME_DELAY_MS=450"});
  ASSERT_EQ(run.expected.size(), size_t(2) * 3 * kKernelsPerThread) << run.workload_out;
  EXPECT_NE(run.xtrace_err.find("waited for a later hold"), std::string::npos) << run.xtrace_err;
  EXPECT_EQ(run.xtrace_err.find("not asked"), std::string::npos) << run.xtrace_err;
  const testing::Capture c = testing::ReadWholeCapture(Path("run.capnp"));
  size_t learned = 0;
  for (const KernelCreate& k : c.creates) learned += k.learned ? 1 : 0;
  size_t failed = 0;
  if (const size_t at = run.xtrace_err.find(" could not be:"); at != std::string::npos) {
    const size_t start = run.xtrace_err.rfind(' ', at - 1) + 1;
    failed = std::stoul(run.xtrace_err.substr(start, at - start));
  }
  EXPECT_EQ(learned + failed, size_t(2) * kKernelsPerThread) << run.xtrace_err;
  EXPECT_GE(learned, size_t(2) * kKernelsPerThread - 2) << run.xtrace_err;
}

// nsenter (like unshare --fork, sudo and su) stops itself when its child stops and continues
// it when continued: the hold of a thread to ask about a kernel is such a stop. nsenter goes on
// with its child, reaps it when it exits, and exits itself; every launch is named.
TEST_F(AttachQueryIntegrationTest, AParentThatStopsWithItsHeldChildGoesOnWithIt) {
  const Run run = AttachAndRunARound(
      1, {}, {"/usr/bin/nsenter", "--target", std::to_string(getpid()), "--pid", "--"});
  ExpectEveryLaunchNamed(run, 1);
}

// The same parent slowed down: once continued it sends its child's SIGCONT up to 5 ms later
// (a delay drawn anew each time), as nsenter waiting for a CPU on a loaded machine does. Such
// an echo of one hold could land in the middle of the next, before xtrace had the held thread
// in its ptrace stop, and end it: that launch ran unnamed. A hold now lets its thread go only
// once the echo has landed.
TEST_F(AttachQueryIntegrationTest, AParentThatContinuesItsChildLateEndsNoLaterHold) {
  const Run run = AttachAndRunARound(1, {}, {kMirrorParent, "5000"});
  ExpectEveryLaunchNamed(run, 1);
  EXPECT_EQ(run.xtrace_err.find("could not be:"), std::string::npos) << run.xtrace_err;
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

// The same under gdb, which passes the workload's signals on: its TracerPid is gdb, so it is
// never held or asked, and the summary names gdb.
TEST_F(AttachQueryIntegrationTest, AProcessUnderADebuggerIsLeftAlone) {
  if (!std::filesystem::exists("/usr/bin/gdb")) GTEST_SKIP() << "no /usr/bin/gdb";
  const Run run = AttachAndRunARound(1, {},
                                     {"/usr/bin/gdb", "-q", "-batch", "-nx", "-ex", "handle SIGUSR1 nostop noprint pass",
                                      "-ex", "handle SIGTERM nostop noprint pass", "-ex", "run", "--args"});
  EXPECT_NE(run.xtrace_err.find("pid " + std::to_string(run.pid) + " was not queried: it is traced by pid"),
            std::string::npos)
      << run.xtrace_err;
  EXPECT_NE(run.xtrace_err.find("(gdb)"), std::string::npos) << run.xtrace_err;
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
