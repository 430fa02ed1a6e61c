// Overload, with real BPF and the simulated GPU: a 4 KiB ring buffer under a burst of calls.
// Every call the workload made must be captured or counted as dropped, exactly, per source;
// the timeline must mark where the drops happened (an instant per window with its count, in
// Chrome JSON and in Perfetto protobuf), and the summary must name the remedy that fits:
// --buffer-size for the BPF ring, a CPU of its own for the programs' ITT rings.
// ITT is checked on both of its paths: the probe site (BPF ring) and the in-process fast
// path (rings in the target, read by xtrace), against the calls itt_workload is known to make.
// Needs root.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <regex>
#include <string>

#include "log_contents.h"
#include "perfetto_trace_reader.h"
#include "root_fixture.h"
#include "subprocess.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
using testing::LogContents;
using testing::ReadLogContents;
using testing::RootTest;
using testing::PidFromReadyLine;
using testing::RunCommand;
using testing::Subprocess;

const std::string kXtrace = XTRACE_BIN;
const std::string kWorkload = ZE_WORKLOAD_BIN;
const std::string kSimDriver = "ZE_ENABLE_ALT_DRIVERS=" SIMZE_LIB;
const std::string kIttWorkload = ITT_WORKLOAD_BIN;
const std::string kWithCollector = "INTEL_LIBITTNOTIFY64=" ITT_COLLECTOR_LIB;

class OverloadTest : public RootTest {
 protected:
  OverloadTest() : RootTest("overload", "overload") {}
};

// Records of each source in a log's summary (all processes), and drops by source.
struct SourceCounts {
  std::map<std::string, uint64_t> captured, dropped;
  uint64_t dropped_total = 0;
};
SourceCounts CountsOf(const LogContents& c) {
  SourceCounts s;
  if (!c.summary) return s;
  for (const auto& p : c.summary->process_stats)
    for (const auto& [source, n] : p.records_by_source) s.captured[source] += n;
  for (const auto& [source, n] : c.summary->dropped_by_source) s.dropped[source] += n;
  s.dropped_total = c.summary->dropped;
  return s;
}

// The same deterministic burst twice, with room to spare and in a 4 KiB ring; `end` is how
// the workload ends (ze_workload --end): every call is captured or counted dropped however
// its process ends. The timeline's drop windows are checked for a normal exit.
void ExpectZeCallsAccountedFor(const std::function<std::string(const std::string&)>& path,
                               const std::string& end, bool check_timeline);

TEST_F(OverloadTest, EveryCallIsCapturedOrCountedDroppedPerSourceAndTheTimelineSaysWhere) {
  ExpectZeCallsAccountedFor([this](const std::string& f) { return Path(f); }, "exit", true);
}

// Killed by a signal, replaced by exec, and its launching threads ending while the process
// lives on: every Level Zero and DRM call is still captured or counted dropped.
TEST_F(OverloadTest, EveryLevelZeroAndDrmCallIsAccountedForHoweverItsProcessEnds) {
  for (const std::string end : {"kill", "exec", "threads"})
    ExpectZeCallsAccountedFor([&](const std::string& f) { return Path(end + "_" + f); }, end, false);
}

void ExpectZeCallsAccountedFor(const std::function<std::string(const std::string&)>& path,
                               const std::string& end, bool check_timeline) {
  // Launches from two threads, no pause between them.
  const std::vector<std::string> burst = {kWorkload, "--threads", "2", "--iterations", "100",
                                          "--rounds", "6", "--end", end};
  const int status = end == "kill" ? 137 : 0;  // record exits with its command's status
  auto record = [&](const std::string& out, const std::string& buffer) {
    std::vector<std::string> argv = {kXtrace, "record", "--buffer-size", buffer, "-o", out, "--"};
    argv.insert(argv.end(), burst.begin(), burst.end());
    return RunCommand(argv, {kSimDriver}, 120s);
  };
  // With room to spare, every call arrives: what the workload made, per source.
  auto ample = record(path("ample.capnp"), "64M");
  ASSERT_EQ(ample.exit_code(), status) << ample.err;
  const LogContents a = ReadLogContents(path("ample.capnp"));
  ASSERT_TRUE(a.readable && a.complete) << a.error;
  const SourceCounts made = CountsOf(a);
  ASSERT_EQ(made.dropped_total, 0u) << ample.err;
  // The workload's own count of its launches: all there.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(ample.out, m, std::regex("exit rounds=6 launches=(\\d+)"))) << ample.out;
  uint64_t launches = 0;
  for (const auto& [pid, l] : a.launches) launches += l.size();
  EXPECT_EQ(launches, std::stoull(m[1]));
  ASSERT_GT(made.captured.at("Level Zero"), 0u);
  ASSERT_GT(made.captured.at("DRM"), 0u);

  // A 4 KiB ring (about 50 records) overflows many times over.
  auto tight = record(path("tight.capnp"), "4096");
  ASSERT_EQ(tight.exit_code(), status) << tight.err;
  const LogContents t = ReadLogContents(path("tight.capnp"));
  ASSERT_TRUE(t.readable && t.complete) << t.error;
  const SourceCounts got = CountsOf(t);
  ASSERT_GT(got.dropped_total, 0u) << tight.err;
  uint64_t by_source = 0;
  for (const auto& [source, n] : got.dropped) by_source += n;
  EXPECT_EQ(by_source, got.dropped_total);
  for (const std::string source : {"Level Zero", "DRM"}) {
    const uint64_t captured = got.captured.count(source) ? got.captured.at(source) : 0;
    const uint64_t dropped = got.dropped.count(source) ? got.dropped.at(source) : 0;
    EXPECT_EQ(captured + dropped, made.captured.at(source))
        << source << ": " << captured << " captured + " << dropped << " dropped (--end " << end << ")";
    std::printf("%s (--end %s): %llu calls = %llu captured + %llu dropped\n", source.c_str(),
                end.c_str(),
                static_cast<unsigned long long>(made.captured.at(source)),
                static_cast<unsigned long long>(captured), static_cast<unsigned long long>(dropped));
  }
  // The summary names the drops by source and the remedy.
  EXPECT_TRUE(std::regex_search(
      tight.err, std::regex(" " + std::to_string(got.dropped_total) +
                            " events dropped \\(Level Zero [0-9]+.*\\); raise --buffer-size \\(now 4.0 KiB\\)")))
      << tight.err;
  if (!check_timeline) return;

  // The timeline: an instant per drop window, their counts adding up to the drops.
  const std::string json = path("tight.json"), pftrace = path("tight.pftrace");
  ASSERT_EQ(RunCommand({kXtrace, "convert", path("tight.capnp"), "-o", json}).exit_code(), 0);
  ASSERT_EQ(RunCommand({kXtrace, "convert", path("tight.capnp"), "-o", pftrace}).exit_code(), 0);
  std::ifstream in(json);
  const auto doc = nlohmann::json::parse(in);
  uint64_t windows = 0, in_windows = 0;
  for (const auto& ev : doc["traceEvents"]) {
    if (ev.value("name", "") != "records dropped") continue;
    EXPECT_EQ(ev["ph"], "i");
    EXPECT_EQ(ev["s"], "g");
    ++windows;
    in_windows += ev["args"]["dropped"].get<uint64_t>();
  }
  EXPECT_GT(windows, 0u);
  EXPECT_EQ(in_windows, got.dropped_total);
  std::ifstream pf(pftrace, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(pf)), std::istreambuf_iterator<char>());
  const test_util::PerfettoTraceReader trace(bytes);
  EXPECT_TRUE(trace.errors.empty()) << trace.errors.front();
  uint64_t perfetto_windows = 0, perfetto_dropped = 0;
  for (const auto& e : trace.events) {
    if (e.name != "records dropped") continue;
    EXPECT_EQ(e.type, 3u);  // an instant
    EXPECT_EQ(e.track, 0u);  // on the trace-wide track
    ++perfetto_windows;
    perfetto_dropped += std::stoull(e.args.at("dropped"));
  }
  EXPECT_EQ(perfetto_windows, windows);
  EXPECT_EQ(perfetto_dropped, got.dropped_total);
  std::printf("drops: %llu in %llu windows\n", static_cast<unsigned long long>(got.dropped_total),
              static_cast<unsigned long long>(windows));
}

// ITT calls itt_workload makes (its --help): per iteration of each thread, task begin and
// end twice (xt.step, xt.inner), a marker, region begin and end, two overlapped tasks begun
// and ended, frame begin and end; per thread, one __itt_thread_set_name. Domain and string
// handle creation is no call xtrace records.
constexpr uint64_t kIttCallsPerIteration = 13;
uint64_t IttCallsMade(uint64_t threads, uint64_t iterations) {
  return threads * (iterations * kIttCallsPerIteration + 1);
}

// The converted trace of an ITT capture whose summary (`err`) said how many records were lost
// and where: its "records dropped" instants add up to the `dropped` records, as many of them
// in the programs' own ITT rings as the summary said, and each names the remedy of the ring
// that lost its records.
void ExpectDropInstantsNameTheirRings(const std::string& log, const std::string& err,
                                      uint64_t dropped) {
  std::smatch m;
  ASSERT_TRUE(std::regex_search(err, m, std::regex(" events dropped \\([^)]*\\); (all|raise "
                                                   "--buffer-size [^;]*; ([0-9]+) of them) in "
                                                   "the programs' own ITT rings|events dropped "
                                                   "\\([^)]*\\); raise --buffer-size[^;]*\\.")))
      << err;
  const uint64_t in_rings = m[1] == "all" ? dropped : m[2].matched ? std::stoull(m[2]) : 0;
  const std::string json = log + ".json";
  ASSERT_EQ(RunCommand({kXtrace, "convert", "-q", log, "-o", json}).exit_code(), 0);
  std::ifstream in(json);
  const auto doc = nlohmann::json::parse(in);
  uint64_t in_windows = 0, in_window_rings = 0;
  const std::string ring_remedy = " in the programs' own ITT rings: raise --itt-ring-size";
  for (const auto& ev : doc["traceEvents"]) {
    if (ev.value("name", "") != "records dropped") continue;
    const uint64_t n = ev["args"]["dropped"], rings = ev["args"].value("itt_rings", uint64_t{0});
    const std::string remedy = ev["args"]["remedy"];
    in_windows += n;
    in_window_rings += rings;
    if (rings == 0)
      EXPECT_EQ(remedy, "raise --buffer-size");
    else if (rings == n)
      EXPECT_TRUE(remedy.starts_with("all" + ring_remedy)) << remedy;
    else
      EXPECT_TRUE(remedy.starts_with("raise --buffer-size; " + std::to_string(rings) + " of them" +
                                     ring_remedy))
          << remedy;
  }
  EXPECT_EQ(in_windows, dropped);
  EXPECT_EQ(in_window_rings, in_rings);
  std::printf("drop instants: %llu records, %llu of them in the programs' ITT rings\n",
              static_cast<unsigned long long>(in_windows),
              static_cast<unsigned long long>(in_window_rings));
}

// itt_workload under `record --buffer-size 4096` (one round, then it ends the way `end`
// says: itt_workload --end); checks that its ITT calls are each captured or counted dropped,
// that some were dropped, and that the summary says so and names the remedy (and with
// `check_trace`, the converted trace's drop instants). `path` is the line xtrace must give for
// the path ITT calls take.
void ExpectIttCallsAccountedFor(const std::string& out, uint64_t threads, uint64_t iterations,
                                const std::vector<std::string>& env, const std::string& path,
                                const std::string& end = "exit", bool check_trace = false) {
  auto run = RunCommand({kXtrace, "record", "--buffer-size", "4096", "-o", out, "--", kIttWorkload,
                         "--threads", std::to_string(threads), "--iterations",
                         std::to_string(iterations), "--end", end},
                        env, 60s);
  // record exits with its command's status: 128 + 9 for a command that SIGKILLed itself.
  ASSERT_EQ(run.exit_code(), end == "kill" ? 137 : 0) << "--end " << end << "\n" << run.err;
  ASSERT_NE(run.out.find("exit rounds=1"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find(path), std::string::npos) << run.err;
  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable && c.complete) << c.error;
  const SourceCounts got = CountsOf(c);
  const uint64_t made = IttCallsMade(threads, iterations);
  const uint64_t captured = got.captured.count("ITT") ? got.captured.at("ITT") : 0;
  const uint64_t dropped = got.dropped.count("ITT") ? got.dropped.at("ITT") : 0;
  std::printf("ITT (%s, --end %s): %llu calls = %llu captured + %llu dropped\n", path.c_str(),
              end.c_str(),
              static_cast<unsigned long long>(made), static_cast<unsigned long long>(captured),
              static_cast<unsigned long long>(dropped));
  EXPECT_EQ(captured + dropped, made) << captured << " captured + " << dropped
                                      << " dropped (--end " << end << ")\n" << run.err;
  EXPECT_GT(dropped, 0u) << "the burst did not overload the capture";
  EXPECT_GT(captured, 0u);
  // The remedy named fits where the calls were lost: the BPF ring --buffer-size sizes (the
  // probe site, and the fast path's first calls before it attaches), or the programs' own
  // rings, which it does not.
  const std::string counted = " [0-9]+ events dropped \\(.*ITT " + std::to_string(dropped) + ".*\\); ";
  const std::string in_rings = "in the programs' own ITT rings: raise --itt-ring-size \\(now "
                               "4.0 MiB a thread";
  if (path.find("fast path") != std::string::npos)
    EXPECT_TRUE(std::regex_search(
        run.err, std::regex(counted + "(all|raise --buffer-size \\(now 4.0 KiB\\); [0-9]+ of them) " +
                            in_rings)))
        << run.err;
  else
    EXPECT_TRUE(std::regex_search(
        run.err, std::regex(counted + "raise --buffer-size \\(now 4.0 KiB\\)\\.")))
        << run.err;
  if (check_trace) ExpectDropInstantsNameTheirRings(out, run.err, got.dropped_total);
}

TEST_F(OverloadTest, EveryIttCallOnTheProbeSiteIsCapturedOrCountedDropped) {
  // Every call traps into BPF and competes for the 4 KiB ring.
  ExpectIttCallsAccountedFor(Path("probe_site.capnp"), 2, 2000,
                             {kWithCollector, "XTRACE_ITT_FAST_PATH=0"},
                             "ITT calls go through the probe site", "exit", /*check_trace=*/true);
}

TEST_F(OverloadTest, EveryIttCallOnTheFastPathIsCapturedOrCountedDropped) {
  // The first calls take the probe site (the fast path attaches once the collector is up),
  // the rest fill the target's 4 MiB rings far faster than xtrace drains them. A ring still
  // full when the process exits is where uncounted drops would hide: a few runs, since its
  // last drain falls at a different point of each.
  for (int run = 0; run < 3; ++run)
    ExpectIttCallsAccountedFor(Path("fast_path" + std::to_string(run) + ".capnp"), 2, 100000,
                               {kWithCollector}, "ITT calls go through the in-process fast path",
                               "exit", /*check_trace=*/run == 0);
}

// The ways a process ends besides returning from main, on both paths: killed by a signal
// and replaced by exec with its worker threads still running (nothing of the collector runs
// at its end: the records still in its rings go with it), and its threads ending while the
// process lives on (their rings outlive them). Each must still account for every call.
TEST_F(OverloadTest, EveryIttCallIsAccountedForHoweverItsProcessEnds) {
  for (const std::string end : {"kill", "exec", "threads"}) {
    ExpectIttCallsAccountedFor(Path("fast_path_" + end + ".capnp"), 2, 100000, {kWithCollector},
                               "ITT calls go through the in-process fast path", end);
    ExpectIttCallsAccountedFor(Path("probe_site_" + end + ".capnp"), 2, 2000,
                               {kWithCollector, "XTRACE_ITT_FAST_PATH=0"},
                               "ITT calls go through the probe site", end);
  }
}

// The capture ends while the process goes on: its writers are stopped and its rings drained
// once more, so every call it made while attached is in the log or counted dropped, although
// the process never ends during the capture. The round runs once the fast path is attached
// (its threads named themselves before), and the capture stops as soon as it is done.
TEST_F(OverloadTest, EveryIttCallIsAccountedForWhenTheCaptureEndsFirst) {
  const uint64_t threads = 2, iterations = 100000;
  const std::string out = Path("capture_ends.capnp");
  Subprocess workload({kIttWorkload, "--wait-for-signal", "--threads", std::to_string(threads),
                       "--iterations", std::to_string(iterations)},
                      {kWithCollector});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u) << workload.stderr_text();
  Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(pid), "--buffer-size", "4096",
                     "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("ITT calls go through the in-process fast path", 30s))
      << xtrace.stderr_text();
  workload.Signal(SIGUSR1);
  ASSERT_TRUE(workload.WaitStdout("round 1", 60s)) << workload.stderr_text();
  xtrace.Signal(SIGINT);
  const auto status = xtrace.Wait(60s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << xtrace.stderr_text();
  workload.Signal(SIGTERM);
  workload.Wait(30s);

  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable && c.complete) << c.error;
  const SourceCounts got = CountsOf(c);
  const uint64_t made = threads * iterations * kIttCallsPerIteration;
  const uint64_t captured = got.captured.count("ITT") ? got.captured.at("ITT") : 0;
  const uint64_t dropped = got.dropped.count("ITT") ? got.dropped.at("ITT") : 0;
  std::printf("ITT (capture ends first): %llu calls = %llu captured + %llu dropped\n",
              static_cast<unsigned long long>(made), static_cast<unsigned long long>(captured),
              static_cast<unsigned long long>(dropped));
  EXPECT_EQ(captured + dropped, made) << xtrace.stderr_text();
  EXPECT_GT(captured, 0u);
}

}  // namespace
}  // namespace xtrace
