// Integration tests of capture: real BPF programs attached to the real Level Zero loader in
// real processes (tests/workloads on the simulated GPU), checked against what the workload
// itself says it launched. Needs root; skips with the reason elsewhere, fails under CI.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <sstream>
#include <string>
#include <vector>

#include "capture_reader.h"
#include "capture_steps.h"
#include "log/log_reader.h"
#include "root_fixture.h"
#include "subprocess.h"
#include "trace_formats.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
using testing::LinesWith;
using testing::PidFromReadyLine;
using testing::RootTest;
using testing::RunCommand;
using testing::Subprocess;

const std::string kXtrace = XTRACE_BIN;
const std::string kWorkload = ZE_WORKLOAD_BIN;
const std::string kNoLoad = ZE_NOLOAD_BIN;
const std::string kLateLoad = ZE_LATELOAD_BIN;
const std::string kSimDriver = "ZE_ENABLE_ALT_DRIVERS=" SIMZE_LIB;

// Ends an attached target with SIGTERM: its exit ends the capture by itself, and xtrace
// exits 0.
void EndTargetAndExpectXtraceDone(Subprocess& target, Subprocess& xtrace) {
  target.Signal(SIGTERM);
  target.Wait(30s);
  auto status = xtrace.Wait(30s);
  ASSERT_TRUE(status.has_value()) << "xtrace did not stop when its target exited";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << xtrace.stderr_text();
}

// What a captured launch is compared on: the same fields the workload's launch log has.
struct Captured {
  std::vector<std::string> launches;  // "<tid>\t<name>\t<x>,<y>,<z>"
  std::vector<KernelLaunch> raw;
  std::vector<std::string> launch_names;
  std::vector<std::string> created_names;
  std::map<uint32_t, std::string> comm_by_pid;
  std::map<uint32_t, std::string> thread_names;
  bool complete = false;
  uint64_t events = 0;
};

Captured ReadCapture(const std::string& path) {
  Captured c;
  auto reader = LogReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return c;
  Event e;
  for (;;) {
    auto more = reader->Next(&e);
    EXPECT_TRUE(more.ok()) << more.status().message();
    if (!more.ok() || !*more) break;
    ++c.events;
    const StringTable& s = reader->strings();
    if (auto* l = std::get_if<KernelLaunch>(&e)) {
      std::ostringstream line;
      line << l->tid << '\t' << s.Get(l->kernel_name) << '\t' << l->group_count[0] << ','
           << l->group_count[1] << ',' << l->group_count[2];
      c.launches.push_back(line.str());
      c.launch_names.emplace_back(s.Get(l->kernel_name));
      c.raw.push_back(*l);
    } else if (auto* k = std::get_if<KernelCreate>(&e)) {
      c.created_names.emplace_back(s.Get(k->name));
    } else if (auto* p = std::get_if<ProcessInfo>(&e)) {
      c.comm_by_pid[p->pid] = std::string(s.Get(p->comm));
    } else if (auto* t = std::get_if<ThreadInfo>(&e)) {
      c.thread_names[t->tid] = std::string(s.Get(t->name));
    }
  }
  c.complete = reader->complete();
  return c;
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

class CaptureIntegrationTest : public RootTest {
 protected:
  CaptureIntegrationTest() : RootTest("capture", "itest") {}
};

TEST_F(CaptureIntegrationTest, RecordCapturesEveryLaunchWithNamesPidsAndTids) {
  const std::string log = Path("launches.tsv"), out = Path("record.capnp");
  auto r = RunCommand({kXtrace, "record", "-o", out, "--", kWorkload, "--iterations", "6", "--threads",
                "2", "--rounds", "2", "--launch-log", log},
               {kSimDriver}, 120s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_NE(r.err.find("captured 120 kernel launches"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("No events dropped"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("The command exited with status 0"), std::string::npos) << r.err;

  const auto expected = ReadLines(log);
  ASSERT_EQ(expected.size(), 120u);
  Captured c = ReadCapture(out);
  EXPECT_TRUE(c.complete);
  EXPECT_EQ(Sorted(c.launches), Sorted(expected));

  // One process, the workload, launching only from its two named worker threads.
  ASSERT_EQ(c.comm_by_pid.size(), 1u);
  const uint32_t pid = c.comm_by_pid.begin()->first;
  EXPECT_EQ(c.comm_by_pid.begin()->second, "ze_workload");
  std::set<uint32_t> tids;
  for (const auto& l : c.raw) {
    EXPECT_EQ(l.pid, pid);
    EXPECT_NE(l.tid, pid);
    EXPECT_TRUE(l.name_known);
    EXPECT_EQ(l.result, 0);
    EXPECT_LE(l.start_ns, l.end_ns);
    tids.insert(l.tid);
  }
  EXPECT_EQ(tids.size(), 2u);
  for (uint32_t tid : tids) EXPECT_EQ(c.thread_names[tid].rfind("xt-worker-", 0), 0u) << tid;

  // The ~1,000-character templated name arrives whole; the never-launched kernel is created
  // but never launched.
  auto longest = std::max_element(c.launch_names.begin(), c.launch_names.end(),
                                  [](auto& a, auto& b) { return a.size() < b.size(); });
  ASSERT_NE(longest, c.launch_names.end());
  EXPECT_GT(longest->size(), 900u);
  EXPECT_NE(std::find(c.created_names.begin(), c.created_names.end(), "xt_never_launched"),
            c.created_names.end());
  EXPECT_EQ(std::find(c.launch_names.begin(), c.launch_names.end(), "xt_never_launched"),
            c.launch_names.end());
}

TEST_F(CaptureIntegrationTest, AttachCapturesExactlyTheLaunchesInItsWindow) {
  const std::string log = Path("launches.tsv"), out = Path("attach.capnp");
  // Warm-up launches happen before we attach (and are not in the launch log); kernels are
  // re-created each round, so the window holds their creation and every launch is named.
  Subprocess workload({kWorkload, "--wait-for-signal", "--warmup-rounds", "1",
                       "--recreate-kernels", "--iterations", "4", "--threads", "2",
                       "--launch-log", log},
                      {kSimDriver});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u) << workload.stderr_text();

  Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(pid), "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("attached to pid " + std::to_string(pid), 30s))
      << xtrace.stderr_text();

  for (int round = 1; round <= 2; ++round) {
    workload.Signal(SIGUSR1);
    ASSERT_TRUE(workload.WaitStdout("round " + std::to_string(round), 60s))
        << workload.stderr_text();
  }
  const auto in_window = ReadLines(log);
  ASSERT_EQ(in_window.size(), 80u);

  xtrace.Signal(SIGINT);
  auto status = xtrace.Wait(30s);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << xtrace.stderr_text();

  // A round after the capture ended must not appear anywhere.
  workload.Signal(SIGUSR1);
  ASSERT_TRUE(workload.WaitStdout("round 3", 60s));
  workload.Signal(SIGTERM);
  workload.Wait(30s);

  Captured c = ReadCapture(out);
  EXPECT_TRUE(c.complete);
  EXPECT_EQ(Sorted(c.launches), Sorted(in_window));
  for (const auto& l : c.raw) {
    EXPECT_EQ(l.pid, pid);
    EXPECT_TRUE(l.name_known) << "launch of kernel 0x" << std::hex << l.kernel;
  }
}

TEST_F(CaptureIntegrationTest, AttachWaitsForAProcessThatLoadsLevelZeroLate) {
  const std::string log = Path("launches.tsv"), out = Path("late.capnp");
  Subprocess late({kLateLoad, "--launches", "6", "--pause-after-load", "--launch-log", log},
                  {kSimDriver});
  const uint32_t pid = PidFromReadyLine(late.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u) << late.stderr_text();

  Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(pid), "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("has not loaded Level Zero", 30s)) << xtrace.stderr_text();

  late.Signal(SIGUSR1);  // dlopen the loader and set up, no launch yet
  ASSERT_TRUE(late.WaitStdout("loaded", 30s)) << late.stderr_text();
  ASSERT_TRUE(xtrace.WaitStderr("attached to pid " + std::to_string(pid), 30s))
      << xtrace.stderr_text();
  late.Signal(SIGUSR1);
  ASSERT_TRUE(late.WaitStdout("round 1 launches=6", 30s)) << late.stderr_text();

  // The target's exit ends the capture by itself.
  ASSERT_NO_FATAL_FAILURE(EndTargetAndExpectXtraceDone(late, xtrace));

  Captured c = ReadCapture(out);
  EXPECT_EQ(c.raw.size(), 6u);
  // Held at its linker's notification of the dlopen, it was probed before its first call:
  // the kernels it created at once are named.
  for (const auto& l : c.raw) EXPECT_TRUE(l.name_known) << "launch of kernel 0x" << std::hex << l.kernel;
  EXPECT_EQ(xtrace.stderr_text().find("created before the capture began"), std::string::npos)
      << xtrace.stderr_text();
}

TEST_F(CaptureIntegrationTest, ProcessThatNeverLoadsLevelZeroGetsAClearMessage) {
  Subprocess noload({kNoLoad, "--seconds", "60"});
  const uint32_t pid = PidFromReadyLine(noload.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u);

  // With a deadline: it ends on time, says why nothing was captured, and fails.
  auto r = RunCommand({kXtrace, "attach", "--pid", std::to_string(pid), "--duration", "1s", "-o",
                Path("none.capnp")},
               {}, 30s);
  EXPECT_EQ(r.exit_code(), 1) << r.err;
  EXPECT_NE(r.err.find("has not loaded Level Zero"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("never loaded Level Zero"), std::string::npos) << r.err;

  // Without one: it stops by itself when the target exits.
  Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(pid), "-o", Path("none2.capnp")});
  ASSERT_TRUE(xtrace.WaitStderr("has not loaded Level Zero", 30s)) << xtrace.stderr_text();
  noload.Signal(SIGTERM);
  noload.Wait(30s);
  auto status = xtrace.Wait(30s);
  ASSERT_TRUE(status.has_value()) << "xtrace kept waiting for a process that is gone";
  EXPECT_NE(xtrace.stderr_text().find("exited and never loaded Level Zero"), std::string::npos)
      << xtrace.stderr_text();
}

// Rounds the workload completes in `window`: its "round" lines, counted as they arrive.
double RoundsPerSecond(Subprocess& workload, std::chrono::milliseconds window) {
  const auto count = [&] {
    const std::string& out = workload.stdout_text();
    size_t n = 0;
    for (size_t at = out.find("round "); at != std::string::npos; at = out.find("round ", at + 1)) ++n;
    return n;
  };
  workload.WaitStdout("round", 5s);  // a line boundary to start from
  const size_t before = count();
  const auto start = std::chrono::steady_clock::now();
  workload.WaitStdout("\x01never printed", window);  // reads output for the whole window
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return static_cast<double>(count() - before) / seconds;
}

TEST_F(CaptureIntegrationTest, CaptureKilledWithSigkillLeavesReadableBatches) {
  const std::string out = Path("killed.capnp");
  Subprocess workload({kWorkload, "--duration", "60", "--threads", "2", "--iterations", "20"},
                      {kSimDriver});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u);
  const double rate_untraced = RoundsPerSecond(workload, 1500ms);
  Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(pid), "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("attached", 30s)) << xtrace.stderr_text();
  auto attached = testing::LoaderBreakpoints(pid);
  ASSERT_TRUE(attached.ok()) << attached.status().message();
  EXPECT_GT(*attached, 0u);  // the probes are in its loader text
  std::this_thread::sleep_for(3500ms);  // several periodic flushes
  xtrace.Signal(SIGKILL);
  xtrace.Wait(30s);

  // The kernel drops the links with xtrace's descriptors: no probe is left behind in the
  // target's loader text, and it runs on at its untraced speed.
  auto now = testing::WaitForNoLoaderBreakpoints(pid, 5s);
  ASSERT_TRUE(now.ok()) << now.status().message();
  const size_t left = *now;
  EXPECT_EQ(left, 0u) << "uprobe breakpoints left in the target after xtrace was killed";
  const double rate_after = RoundsPerSecond(workload, 1500ms);
  std::printf("rounds/s: %.1f untraced, %.1f after xtrace was SIGKILLed (%zu breakpoints while "
              "attached, %zu after)\n",
              rate_untraced, rate_after, *attached, left);
  // It goes on. Its speed is printed, not judged: the breakpoints counted above are what a
  // probe left behind would show, while the rounds a second of a shared machine vary two- to
  // threefold between two windows of the same untraced run (other tests, other captures).
  EXPECT_GT(rate_after, 0) << "the workload stopped after xtrace was SIGKILLed";
  workload.Signal(SIGTERM);
  workload.Wait(30s);

  Captured c = ReadCapture(out);  // no salvage needed: every complete batch reads cleanly
  EXPECT_FALSE(c.complete);
  EXPECT_GT(c.raw.size(), 0u) << xtrace.stderr_text() << workload.stdout_text();

  auto conv = RunCommand({kXtrace, "convert", out, "-o", Path("killed.json")});
  EXPECT_EQ(conv.exit_code(), 0) << conv.err;
  auto salvage = RunCommand({kXtrace, "convert", "--salvage", out, "-o", Path("salvaged.json")});
  EXPECT_EQ(salvage.exit_code(), 0) << salvage.err;
  std::ifstream json(Path("killed.json"));
  auto doc = nlohmann::json::parse(json);
  size_t complete_events = 0;
  for (const auto& ev : doc["traceEvents"])
    // Kernel launches are the complete events with group counts (API calls have none).
    if (ev["ph"] == "X" && ev.value("cat", "") == "xpu_runtime" && ev["args"].contains("group_count_x"))
      ++complete_events;
  EXPECT_EQ(complete_events, c.raw.size());
}

// `record -- env A=1 ze_workload`: the process is env, then the workload. Summary, report and
// both trace formats name it by the workload, and the exec from env shows, in order.
TEST_F(CaptureIntegrationTest, AProcessThatExecsIsNamedByWhatItBecameAndShowsTheExec) {
  const std::string out = Path("exec.capnp"), json_path = Path("exec.json");
  const std::string comm = std::filesystem::path(kWorkload).filename().string().substr(0, 15);
  auto r = RunCommand({kXtrace, "record", "-o", out, "--", "/usr/bin/env", "A=1", kWorkload,
                       "--iterations", "2"},
                      {kSimDriver}, 120s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;

  // The log: env first, then the workload with the time of its exec, before any launch.
  auto reader = LogReader::Open(out);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  std::vector<ProcessInfo> identities;
  std::vector<std::string> names;
  uint64_t first_launch_ns = 0;
  Event e;
  for (auto more = reader->Next(&e); more.ok() && *more; more = reader->Next(&e)) {
    if (const auto* p = std::get_if<ProcessInfo>(&e)) {
      identities.push_back(*p);
      names.emplace_back(reader->strings().Get(p->comm));
    }
    if (const auto* l = std::get_if<KernelLaunch>(&e); l && !first_launch_ns) first_launch_ns = l->start_ns;
  }
  ASSERT_EQ(names, (std::vector<std::string>{"env", comm}));
  const uint32_t pid = identities[0].pid;
  EXPECT_EQ(identities[1].pid, pid);
  EXPECT_EQ(identities[0].exec_ns, 0u);
  ASSERT_GT(first_launch_ns, 0u);
  EXPECT_GT(identities[1].exec_ns, 0u);
  EXPECT_LT(identities[1].exec_ns, first_launch_ns);

  // The capture's summary and the report.
  EXPECT_NE(r.err.find("pid " + std::to_string(pid) + " (" + comm + "):"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("(env)"), std::string::npos) << r.err;
  auto report = RunCommand({kXtrace, "report", out, "--by", "process"}, {}, 60s);
  ASSERT_EQ(report.exit_code(), 0) << report.err;
  EXPECT_NE(report.out.find("pid " + std::to_string(pid) + " (" + comm + ")"), std::string::npos)
      << report.out;
  EXPECT_EQ(report.out.find("(env)"), std::string::npos) << report.out;

  // Chrome JSON: the last name viewers read is the workload's; the exec is an instant on the
  // process at its time.
  auto conv = RunCommand({kXtrace, "convert", "-q", out, "-o", json_path});
  ASSERT_EQ(conv.exit_code(), 0) << conv.err;
  std::ifstream in(json_path);
  const auto doc = nlohmann::json::parse(in);
  std::string label;
  int execs = 0;
  for (const auto& ev : doc["traceEvents"]) {
    if (!ev.contains("pid") || ev["pid"] != pid) continue;
    if (ev["ph"] == "M" && ev["name"] == "process_name") label = ev["args"]["name"];
    if (ev["ph"] == "i" && ev["name"] == "exec: env -> " + comm) {
      ++execs;
      EXPECT_EQ(ev["s"], "p");
      EXPECT_NEAR(ev["ts"].get<double>(), identities[1].exec_ns / 1000.0, 0.002);
    }
  }
  EXPECT_EQ(label, comm);
  EXPECT_EQ(execs, 1);

  // Perfetto: the process track carries the workload's name and the same instant.
  testing::ExpectEveryFormatDrawable(kXtrace, out, json_path);
  std::ifstream pftrace(json_path + ".pftrace", std::ios::binary);
  test_util::PerfettoTraceReader pf(std::string(std::istreambuf_iterator<char>(pftrace), {}));
  const auto* track = pf.FindTrack(comm);
  ASSERT_NE(track, nullptr);
  EXPECT_TRUE(track->is_process);
  EXPECT_EQ(pf.FindTrack("env"), nullptr);
  int pf_execs = 0;
  for (const auto& ev : pf.events)
    if (ev.name == "exec: env -> " + comm && ev.track == track->uuid && ev.ts == identities[1].exec_ns)
      ++pf_execs;
  EXPECT_EQ(pf_execs, 1);
}

TEST_F(CaptureIntegrationTest, RecordThenConvertGivesPerfettoReadyJson) {
  const std::string out = Path("run.capnp"), json_path = Path("run.json");
  auto r = RunCommand({kXtrace, "record", "-q", "-o", out, "--", kWorkload, "--iterations", "3"},
               {kSimDriver}, 120s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_EQ(r.err, "");  // -q: nothing on stderr
  auto conv = RunCommand({kXtrace, "convert", out, "-o", json_path});
  ASSERT_EQ(conv.exit_code(), 0) << conv.err;
  testing::ExpectEveryFormatDrawable(kXtrace, out, json_path);

  std::ifstream in(json_path);
  auto doc = nlohmann::json::parse(in);
  std::map<std::string, int> launches_by_name;
  bool process_named = false, thread_named = false;
  for (const auto& ev : doc["traceEvents"]) {
    if (ev["ph"] == "M" && ev["name"] == "process_name") process_named = true;
    if (ev["ph"] == "M" && ev["name"] == "thread_name" &&
        ev["args"]["name"].get<std::string>().rfind("xt-worker-", 0) == 0)
      thread_named = true;
    if (ev["ph"] == "X" && ev.value("cat", "") == "xpu_runtime" && ev["args"].contains("group_count_x")) {
      ++launches_by_name[ev["name"].get<std::string>()];
      EXPECT_TRUE(ev.contains("ts") && ev.contains("dur"));
      EXPECT_TRUE(ev["args"].contains("group_count") || ev["args"].contains("groups_x") ||
                  ev["args"].size() > 0);
    }
  }
  EXPECT_TRUE(process_named);
  EXPECT_TRUE(thread_named);
  // 3 iterations x 5 kernels; each of the 5 launched kernels 3 times.
  int total = 0;
  for (auto& [name, n] : launches_by_name) {
    EXPECT_EQ(n, 3) << name;
    total += n;
  }
  EXPECT_EQ(total, 15);

  // An independent consumer of the format, the Chrome DevTools trace engine, must see the
  // same process and thread, named, with every event on it.
  if (!std::filesystem::exists(CHROME_TRACE_ENGINE)) {
    if (getenv("CI")) FAIL() << CHROME_TRACE_ENGINE << " missing: scripts/install-deps.sh installs it";
    GTEST_SKIP() << "Chrome trace engine not installed (scripts/install-deps.sh installs it)";
  }
  auto consumer = RunCommand({"/usr/bin/env", "node", CHROME_CONSUMER_SCRIPT, CHROME_TRACE_ENGINE,
                              json_path});
  ASSERT_EQ(consumer.exit_code(), 0) << consumer.err;
  auto seen = nlohmann::json::parse(consumer.out);
  // Every process and thread with events in our JSON (the workload's, and the GPU's with a
  // track per engine), named as we named it, with every complete event on it.
  std::map<std::pair<int64_t, int64_t>, int> complete_events;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names;
  for (const auto& ev : doc["traceEvents"]) {
    if (ev["ph"] == "X") ++complete_events[{ev["pid"], ev["tid"]}];
    if (ev["ph"] == "M" && ev["name"] == "thread_name")
      thread_names[{ev["pid"], ev["tid"]}] = ev["args"]["name"];
  }
  std::map<std::pair<int64_t, int64_t>, int> consumed;
  for (const auto& proc : seen["processes"]) {
    for (const auto& thread : proc["threads"]) {
      const std::pair<int64_t, int64_t> key{proc["pid"], thread["tid"]};
      consumed[key] = thread["entries"];
      EXPECT_EQ(thread["name"], thread_names[key]) << consumer.out;
    }
  }
  // (Tracks drawn with other kinds of events, such as the DRM driver track, are not this
  // test's concern.)
  for (const auto& [key, n] : complete_events)
    EXPECT_EQ(consumed[key], n) << "pid " << key.first << " tid " << key.second << ": " << consumer.out;
  EXPECT_EQ(seen["processes"].size(), 2u) << consumer.out;  // the workload and GPU 0
  // The worker thread: 15 launches and 6 kernel creations among its calls.
  bool worker = false;
  for (const auto& [key, name] : thread_names) worker |= name == "xt-worker-0" && consumed[key] > 21;
  EXPECT_TRUE(worker) << consumer.out;
}

TEST_F(CaptureIntegrationTest, DropsAreCountedAndReportedNeverSilent) {
  // A 4 KiB ring holds ~50 records. Stopping the collector (SIGSTOP) while the workload keeps
  // launching overflows it for certain; the drops must be counted, reported while running
  // and at the end, and written to the log's summary.
  const std::string out = Path("drops.capnp");
  Subprocess workload({kWorkload, "--duration", "60", "--threads", "2", "--iterations", "20"},
                      {kSimDriver});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u);
  Subprocess xtrace(
      {kXtrace, "attach", "--pid", std::to_string(pid), "--buffer-size", "4096", "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("attached", 30s)) << xtrace.stderr_text();
  workload.WaitStdout("round", 30s);  // launching for sure
  xtrace.Signal(SIGSTOP);
  std::this_thread::sleep_for(1500ms);
  xtrace.Signal(SIGCONT);
  ASSERT_TRUE(xtrace.WaitStderr("events dropped in the last second", 30s))
      << xtrace.stderr_text();
  xtrace.Signal(SIGINT);
  ASSERT_TRUE(xtrace.Wait(30s).has_value());
  EXPECT_NE(xtrace.stderr_text().find("); raise --buffer-size (now 4.0 KiB)"), std::string::npos)
      << xtrace.stderr_text();

  auto reader = LogReader::Open(out);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  Event e;
  for (;;) {
    auto more = reader->Next(&e);
    ASSERT_TRUE(more.ok()) << more.status().message();
    if (!*more) break;
  }
  ASSERT_TRUE(reader->summary().has_value());
  const uint64_t dropped = reader->summary()->dropped;
  EXPECT_GT(dropped, 0u);
  EXPECT_NE(xtrace.stderr_text().find(" " + std::to_string(dropped) + " events dropped (Level Zero "),
            std::string::npos)
      << "summary line and log disagree on " << dropped << " drops:\n" << xtrace.stderr_text();
}

TEST_F(CaptureIntegrationTest, BadTargetsGiveClearErrors) {
  auto missing = RunCommand({kXtrace, "record", "-o", Path("x.capnp"), "--", "/nonexistent/program"});
  EXPECT_EQ(missing.exit_code(), 127);
  EXPECT_NE(missing.err.find("cannot run '/nonexistent/program'"), std::string::npos)
      << missing.err;
  // Said before anything is loaded or written: one line, no probes, no log.
  EXPECT_EQ(missing.err, "xtrace record: cannot run '/nonexistent/program': No such file or directory\n");
  EXPECT_FALSE(std::filesystem::exists(Path("x.capnp")));
  auto unfound = RunCommand({kXtrace, "record", "-o", Path("x.capnp"), "--", "xtrace-no-such-command"},
                            {"PATH=/usr/bin:/bin"});
  EXPECT_EQ(unfound.exit_code(), 127);
  EXPECT_EQ(unfound.err, "xtrace record: cannot run 'xtrace-no-such-command': not found in PATH (/usr/bin:/bin)\n");

  auto nopid = RunCommand({kXtrace, "attach", "--pid", "1073741822", "-o", Path("y.capnp")});
  EXPECT_EQ(nopid.exit_code(), 1);
  EXPECT_NE(nopid.err.find("no running process with pid 1073741822"), std::string::npos)
      << nopid.err;

  // A kernel thread never loads a library: said at once, not waited on until stopped.
  std::string kthreadd;
  std::getline(std::ifstream("/proc/2/comm"), kthreadd);
  if (kthreadd == "kthreadd") {
    auto kernel = RunCommand({kXtrace, "attach", "--pid", "2", "-o", Path("k.capnp")}, {}, 20s);
    EXPECT_EQ(kernel.exit_code(), 1);
    EXPECT_NE(kernel.err.find("pid 2 (kthreadd) is a kernel thread: it runs no user-space code"), std::string::npos)
        << kernel.err;
  }

  auto usage = RunCommand({kXtrace, "attach", "--pid", "abc"});
  EXPECT_EQ(usage.exit_code(), 2);
  EXPECT_NE(usage.err.find("--pid: 'abc' is not a process id"), std::string::npos) << usage.err;
}

// xtrace's own Level Zero finds no driver (the traced program's is one the loader does not
// search, as a sidecar or a simulated GPU may have): the capture goes on with estimated device
// times, and says so with the result's name and what to do, not a bare code.
TEST_F(CaptureIntegrationTest, NoDriverForXtracesOwnClockReadingsIsNamedWithWhatToDo) {
  auto r = RunCommand({kXtrace, "record", "-o", Path("noclock.capnp"), "--", "/bin/true"},
                      {"ZE_ENABLE_ALT_DRIVERS=" + Path("no-such-driver.so")}, 60s);
  EXPECT_EQ(r.exit_code(), 0) << r.err;
  const size_t at = r.err.find("no device clock readings (");
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::string line = r.err.substr(at, r.err.find('\n', at) - at);
  EXPECT_NE(line.find("ZE_RESULT_ERROR_"), std::string::npos) << line;
  EXPECT_NE(line.find("Level Zero found no GPU driver for xtrace's own process"), std::string::npos)
      << line;
  EXPECT_NE(line.find("ZE_ENABLE_ALT_DRIVERS"), std::string::npos) << line;
}

// xtrace's own Level Zero on a driver that crashes or hangs in its start-up, as Level Zero's
// null driver built for a newer loader does in bookworm's zeInit (XTRACE_SIMZE_CRASH_IN_INIT,
// XTRACE_SIMZE_HANG_IN_INIT, given to xtrace alone: a driver kills only the process that loads
// it). The capture goes on with everything that does not need it and says, in one line, what
// happened and what it lost.
const std::string kLost =
    "; the capture goes on without device clock readings (device times are estimated unless the "
    "traced processes read their clocks), the devices' names and engines, and where the drivers "
    "keep the functions they hand out by pointer";


std::vector<std::string> LinesStartingWith(const std::string& text, const std::string& start) {
  std::vector<std::string> found;
  for (std::string& line : LinesWith(text, start))
    if (line.starts_with(start)) found.push_back(std::move(line));
  return found;
}

// No trial child of xtrace's is left on the machine.
bool TrialChildLeft() {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find("__try-own-level-zero") != std::string::npos) return true;
  }
  return false;
}

// The workload's API calls and launches are there; what xtrace's own Level Zero would have
// given is not (no device, no clock reading of its own).
void ExpectEverythingButOwnLevelZero(const std::string& out, uint32_t pid) {
  ASSERT_TRUE(std::filesystem::exists(out));
  const testing::Capture c = testing::ReadWholeCapture(out);
  EXPECT_TRUE(c.complete);
  size_t calls = 0;
  for (const ApiCall& call : c.calls) calls += call.pid == pid ? 1 : 0;
  EXPECT_GT(calls, 0u);
  EXPECT_GT(c.launches.size(), 0u);
  EXPECT_TRUE(c.All<DeviceInfo>().empty());
  for (const ClockSample& s : c.All<ClockSample>()) EXPECT_NE(s.pid, 0u);  // 0: xtrace's own
}

// `record`: the trial dies of the stack check as the null driver's zeInit did in xtrace
// itself, which aborted xtrace ("*** stack smashing detected ***") and lost the capture.
TEST_F(CaptureIntegrationTest, ADriverThatCrashesInZeInitCostsOnlyWhatXtracesOwnLevelZeroGives) {
  const std::string out = Path("crash.capnp");
  auto r = RunCommand({kXtrace, "record", "-o", out, "--", "/usr/bin/env", "-u",
                       "XTRACE_SIMZE_CRASH_IN_INIT", kWorkload, "--iterations", "3"},
                      {kSimDriver, "XTRACE_SIMZE_CRASH_IN_INIT=1"}, 120s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  // Said once as it is found, and repeated in the closing summary with the capture's other
  // facts (the log keeps it for `xtrace report`).
  const std::vector<std::string> said = LinesStartingWith(r.err, "xtrace: xtrace's own Level Zero is off");
  ASSERT_EQ(said.size(), 1u) << r.err;
  EXPECT_EQ(LinesWith(r.err, "No events dropped. xtrace's own Level Zero is off: a trial").size(), 1u)
      << r.err;
  EXPECT_EQ(said[0],
            "xtrace: xtrace's own Level Zero is off: a trial of it in a child process died of "
            "SIGABRT in zeInit (*** stack smashing detected ***: terminated) with the driver " SIMZE_LIB +
                kLost)
      << r.err;
  // The child's own words are in that line (and its repetition) alone.
  EXPECT_EQ(LinesWith(r.err, "stack smashing").size(), 2u) << r.err;
  EXPECT_EQ(r.err.find("no device clock readings"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("The command exited with status 0"), std::string::npos) << r.err;
  const testing::Capture c = testing::ReadWholeCapture(out);
  ASSERT_FALSE(c.calls.empty());
  ExpectEverythingButOwnLevelZero(out, c.calls.front().pid);
  EXPECT_FALSE(TrialChildLeft());
  // The log says it too: its reader learns why its devices are unknown.
  auto report = RunCommand({kXtrace, "report", out}, {}, 60s);
  ASSERT_EQ(report.exit_code(), 0) << report.err;
  EXPECT_EQ(LinesWith(report.err, "xtrace's own Level Zero is off: a trial of it in a child "
                                  "process died of SIGABRT in zeInit").size(),
            1u)
      << report.err;
}

// `attach`: the trial hangs in zeInit; it is killed at the bound, the capture goes on without
// it, and nothing of it is left behind.
TEST_F(CaptureIntegrationTest, ADriverThatHangsInZeInitIsLeftAtTheBound) {
  const std::string out = Path("hang.capnp");
  Subprocess workload({kWorkload, "--wait-for-signal", "--iterations", "2"}, {kSimDriver});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u) << workload.stderr_text();

  Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(pid), "-o", out},
                    {kSimDriver, "XTRACE_SIMZE_HANG_IN_INIT=1"});
  ASSERT_TRUE(xtrace.WaitStderr("attached to pid " + std::to_string(pid), 60s))
      << xtrace.stderr_text();
  EXPECT_FALSE(TrialChildLeft());
  workload.Signal(SIGUSR1);
  ASSERT_TRUE(workload.WaitStdout("round 1", 60s)) << workload.stderr_text();
  ASSERT_NO_FATAL_FAILURE(EndTargetAndExpectXtraceDone(workload, xtrace));
  const std::vector<std::string> said =
      LinesStartingWith(xtrace.stderr_text(), "xtrace: xtrace's own Level Zero is off");
  ASSERT_EQ(said.size(), 1u) << xtrace.stderr_text();
  EXPECT_EQ(said[0],
            "xtrace: xtrace's own Level Zero is off: a trial of it in a child process did not "
            "return from zeInit within 10 s with the driver " SIMZE_LIB + kLost)
      << xtrace.stderr_text();
  ExpectEverythingButOwnLevelZero(out, pid);
}

}  // namespace
}  // namespace xtrace
