// Faults in a capture's targets, with real BPF: a target SIGKILLed in the middle of its calls,
// threads that end inside a call (alone, with their process's exit, or killed), and a target
// that forks 500 children that each exec. The capture must end or go on cleanly,
// see every process, and hold no more descriptors or BPF links afterwards than before.
// Needs root.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>

#include "capture_reader.h"
#include "log_contents.h"
#include "root_fixture.h"
#include "subprocess.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
using testing::CountOpenFds;
using testing::LogContents;
using testing::PidFromReadyLine;
using testing::ReadLogContents;
using testing::RootTest;
using testing::RunCommand;
using testing::SettledFdCount;
using testing::Subprocess;

const std::string kXtrace = XTRACE_BIN;
const std::string kWorkload = ZE_WORKLOAD_BIN;
const std::string kDrmIoctls = DRM_IOCTLS_BIN;
const std::string kUnfinished = ZE_UNFINISHED_BIN;
const std::string kSimDriver = "ZE_ENABLE_ALT_DRIVERS=" SIMZE_LIB;

// DRM ioctls drm_ioctls issues per repetition (its --help lists them).
constexpr uint64_t kDrmIoctlsPerRun = 16;

class TargetFaultTest : public RootTest {
 protected:
  TargetFaultTest() : RootTest("target fault", "tgtfault") {}
};

// BPF links among `pid`'s descriptors.
size_t BpfLinks(uint32_t pid) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    std::error_code ec;
    n += std::filesystem::read_symlink(e.path(), ec).string() == "anon_inode:bpf_link";
  }
  return n;
}

TEST_F(TargetFaultTest, TargetSigkilledMidCallEndsTheCaptureCleanly) {
  // The workload spends most of its time inside traced synchronize calls, waiting for the
  // simulated GPU: SIGKILL lands in one of them (or between two).
  const std::string out = Path("killed-target.capnp");
  Subprocess workload({kWorkload, "--duration", "60", "--threads", "2", "--iterations", "20"},
                      {kSimDriver});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u);
  Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(pid), "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("attached", 30s)) << xtrace.stderr_text();
  std::this_thread::sleep_for(1500ms);  // rounds under the capture (earlier lines may be old)
  workload.Signal(SIGKILL);
  workload.Wait(30s);
  // Its end ends the capture, which finishes its log as usual.
  auto status = xtrace.Wait(30s);
  ASSERT_TRUE(status.has_value()) << "xtrace kept waiting for a target that was killed";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << xtrace.stderr_text();
  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  EXPECT_TRUE(c.complete);
  ASSERT_TRUE(c.launches.count(pid));
  EXPECT_GT(c.launches.at(pid).size(), 0u);
  ASSERT_TRUE(c.summary.has_value());
  EXPECT_EQ(c.summary->dropped, 0u);
  auto conv = RunCommand({kXtrace, "convert", out, "-o", Path("killed-target.json")});
  EXPECT_EQ(conv.exit_code(), 0) << conv.err;
}

// The tids ze_unfinished printed as "waiting <tid>".
std::set<uint32_t> WaiterTids(const std::string& printed) {
  std::set<uint32_t> tids;
  const std::regex waiting("waiting ([0-9]+)");
  for (auto it = std::sregex_iterator(printed.begin(), printed.end(), waiting);
       it != std::sregex_iterator(); ++it)
    tids.insert(static_cast<uint32_t>(std::stoul((*it)[1])));
  return tids;
}

// The Chrome JSON slices `xtrace convert` makes of the log at `out` for unfinished
// zeEventHostSynchronize calls (into `json`), each checked to be a complete event on one of
// `tids` saying `how`; how many there are, or -1 if the conversion failed.
int UnfinishedSyncSlices(const std::string& out, const std::string& json,
                         const std::set<uint32_t>& tids, const std::string& how) {
  const auto conv = RunCommand({kXtrace, "convert", out, "-o", json});
  EXPECT_EQ(conv.exit_code(), 0) << conv.err;
  if (conv.exit_code() != 0) return -1;
  std::ifstream in(json);
  const auto trace = nlohmann::json::parse(in);
  int shown = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("name", "") != "zeEventHostSynchronize (unfinished)") continue;
    ++shown;
    EXPECT_EQ(e["ph"], "X");
    EXPECT_TRUE(tids.count(e["tid"].get<uint32_t>()));
    EXPECT_EQ(e["args"]["unfinished"], how);
  }
  return shown;
}

// The log at `out` holds exactly one unfinished zeEventHostSynchronize per thread of `tids`,
// each `signal`, `capture_ended` and at least `min_ns` long.
void ExpectUnfinishedSyncs(const std::string& out, const std::set<uint32_t>& tids, int32_t signal,
                           bool capture_ended, uint64_t min_ns) {
  const testing::Capture c = testing::ReadWholeCapture(out);
  ASSERT_TRUE(c.complete);
  const auto unfinished = c.All<UnfinishedCall>();
  ASSERT_EQ(unfinished.size(), tids.size());
  std::set<uint32_t> seen;
  for (const UnfinishedCall& u : unfinished) {
    seen.insert(u.tid);
    EXPECT_EQ(c.strings.Get(u.function), "zeEventHostSynchronize");
    EXPECT_EQ(u.signal, signal);
    EXPECT_EQ(u.capture_ended, capture_ended);
    EXPECT_GE(u.end_ns - u.start_ns, min_ns);
  }
  EXPECT_EQ(seen, tids);
  // No completed call stands in for them.
  for (const ApiCall& a : c.Calls(XT_ZE_EVENT_HOST_SYNCHRONIZE)) {
    EXPECT_FALSE(tids.count(a.tid));
  }
}

// Two threads block in zeEventHostSynchronize and end there, each way a thread can: alone (a
// raw exit from a handler), with their process's exit, and killed with it. Each call is in
// the log as unfinished, on its thread, from its entry to the thread's end, with the signal
// that killed it; the trace shows it as such, and the summary counts it.
TEST_F(TargetFaultTest, ACallWhoseThreadEndsInsideItIsShownUnfinished) {
  for (const std::string end : {"thread", "exit", "kill"}) {
    SCOPED_TRACE("--end " + end);
    const std::string out = Path("unfinished-" + end + ".capnp");
    const auto run = RunCommand({kXtrace, "record", "-o", out, "--", kUnfinished, "--end", end,
                                 "--waiters", "2"},
                                {kSimDriver}, 60s);
    const std::set<uint32_t> waiters = WaiterTids(run.out);
    ASSERT_EQ(waiters.size(), 2u) << run.out << run.err;
    if (end == "thread") {
      EXPECT_NE(run.out.find("alone 2"), std::string::npos) << run.out;
    }
    EXPECT_NE(run.err.find(" 2 calls never returned (the thread or its process exited inside "
                           "it): shown as unfinished."),
              std::string::npos)
        << run.err;

    // The waiters sat in the call for 300 ms.
    ExpectUnfinishedSyncs(out, waiters, end == "kill" ? SIGKILL : 0, false, 250'000'000);

    EXPECT_EQ(UnfinishedSyncSlices(out, Path("unfinished-" + end + ".json"), waiters,
                                   end == "kill" ? "its process was killed by SIGKILL inside the call"
                                                 : "its thread (or its process) exited inside the call"),
              2);
  }
}

// Two threads are still inside zeEventHostSynchronize when the capture stops (--duration):
// their calls are in the log as unfinished, from their entries to the stop, and said so.
TEST_F(TargetFaultTest, CallsStillRunningWhenTheCaptureStopsAreShownUnfinished) {
  const std::string out = Path("at-stop.capnp");
  Subprocess xtrace({kXtrace, "record", "--duration", "1500ms", "-o", out, "--", kUnfinished,
                     "--end", "never", "--waiters", "2"},
                    {kSimDriver});
  ASSERT_TRUE(xtrace.WaitStdout("blocked 2", 30s)) << xtrace.stderr_text();
  ASSERT_TRUE(xtrace.WaitStderr("still in progress", 30s)) << xtrace.stderr_text();
  xtrace.Signal(SIGTERM);  // passed on to the command, which record still waits for
  const auto status = xtrace.Wait(30s);
  ASSERT_TRUE(status.has_value());
  const std::set<uint32_t> waiters = WaiterTids(xtrace.stdout_text());
  ASSERT_EQ(waiters.size(), 2u) << xtrace.stdout_text();
  EXPECT_NE(xtrace.stderr_text().find(" 2 calls were still in progress when the capture stopped: "
                                      "shown as unfinished, to the stop."),
            std::string::npos)
      << xtrace.stderr_text();

  // In the call from before 1 s to the stop.
  ExpectUnfinishedSyncs(out, waiters, 0, true, 500'000'000);

  EXPECT_EQ(UnfinishedSyncSlices(out, Path("at-stop.json"), waiters,
                                 "still inside the call when the capture stopped"),
            2);
}

TEST_F(TargetFaultTest, FiveHundredChildrenThatExecAreAllSeenAndLeaveNothingBehind) {
  // Two storms of 250 children each, every one exec'ing a program that makes 16 DRM ioctls;
  // between them the capture's descriptors and links are counted, and once more after. The
  // script waits for a line on its stdin before each next step: counted against a timed sleep,
  // the last count could meet the capture already closing its links at the script's end.
  const std::string out = Path("storm.capnp");
  const std::string storm = "for i in $(seq 250); do " + kDrmIoctls + " >/dev/null & done; wait";
  const std::string script = "sleep 1; echo calm; read go; " + storm + "; echo storm 1; read go; " +
                             storm + "; echo storm 2; read go";
  const auto started = std::chrono::steady_clock::now();
  Subprocess xtrace({kXtrace, "record", "--drm-only", "-o", out, "--", "/bin/sh", "-c", script},
                    {}, /*pipe_stdin=*/true);
  const auto xtrace_pid = static_cast<uint32_t>(xtrace.pid());
  ASSERT_TRUE(xtrace.WaitStdout("calm", 30s)) << xtrace.stderr_text();
  const size_t fds_calm = SettledFdCount(xtrace_pid), links_calm = BpfLinks(xtrace_pid);
  ASSERT_TRUE(xtrace.Send("go"));
  ASSERT_TRUE(xtrace.WaitStdout("storm 1", 60s)) << xtrace.stderr_text();
  std::this_thread::sleep_for(1s);  // its last exits are read
  const size_t fds_1 = SettledFdCount(xtrace_pid), links_1 = BpfLinks(xtrace_pid);
  ASSERT_TRUE(xtrace.Send("go"));
  ASSERT_TRUE(xtrace.WaitStdout("storm 2", 60s)) << xtrace.stderr_text();
  std::this_thread::sleep_for(1s);
  const size_t fds_2 = SettledFdCount(xtrace_pid), links_2 = BpfLinks(xtrace_pid);
  ASSERT_TRUE(xtrace.Send("go"));
  auto status = xtrace.Wait(60s);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << xtrace.stderr_text();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("500 children: %.1f s in all; xtrace fds %zu calm, %zu after 250, %zu after 500; "
              "links %zu, %zu, %zu\n",
              seconds, fds_calm, fds_1, fds_2, links_calm, links_1, links_2);
  EXPECT_EQ(fds_1, fds_calm);
  EXPECT_EQ(fds_2, fds_calm);
  EXPECT_EQ(links_1, links_calm);
  EXPECT_EQ(links_2, links_calm);
  EXPECT_LT(seconds, 60.0);  // 5 s of it sleeps; about 20 s on a shared 2-core VM under load

  // Every child was followed through its exec and every one of its ioctls recorded.
  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  EXPECT_TRUE(c.complete);
  ASSERT_TRUE(c.summary.has_value());
  EXPECT_EQ(c.summary->dropped, 0u);
  size_t children = 0;
  for (const auto& p : c.summary->process_stats) {
    if (p.comm != "drm_ioctls") continue;
    ++children;
    uint64_t drm = 0;
    for (const auto& [source, n] : p.records_by_source) drm += source == "DRM" ? n : 0;
    EXPECT_EQ(drm, kDrmIoctlsPerRun) << "pid " << p.pid;
  }
  EXPECT_EQ(children, 500u);
}

}  // namespace
}  // namespace xtrace
