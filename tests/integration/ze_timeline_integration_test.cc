// Integration tests of the device timeline against the simulated GPU's ground truth
// (XTRACE_SIMZE_GROUND_TRUTH): every executed kernel and memory operation appears once, named,
// measured times land within 2 µs of the truth across a 32-bit wrap and hours of clock offset
// with drift, estimated times contain the truth, regular lists give one operation per
// execution, several devices each get their own clock, the Chrome JSON draws it all, and a
// capture of tens of thousands of kernels keeps the collector's tables small.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "capture_reader.h"
#include "root_fixture.h"
#include "subprocess.h"
#include "trace_formats.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
using testing::Capture;
using testing::ReadWholeCapture;
using testing::PidFromReadyLine;
using testing::RootTest;
using testing::RunCommand;
using testing::Subprocess;

const std::string kXtrace = XTRACE_BIN;
const std::string kTimeline = ZE_TIMELINE_BIN;
const std::string kWorkload = ZE_WORKLOAD_BIN;
const std::string kSimDriver = "ZE_ENABLE_ALT_DRIVERS=" SIMZE_LIB;
constexpr uint64_t kHz = 19'200'000;  // the simulated device's default timer
constexpr double kMeasuredToleranceNs = 2'000;

// One line of the simulated GPU's ground truth (tests/simgpu/README.md).
struct Truth {
  std::string kind, name;
  uint64_t start_ns = 0, end_ns = 0, start_ticks = 0, end_ticks = 0;
  uint64_t queue = 0, cmdlist = 0;
  uint32_t pid = 0, device = 0;
};

std::vector<Truth> ReadTruth(const std::string& path) {
  std::vector<Truth> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string field; std::getline(ss, field, '\t');) f.push_back(field);
    EXPECT_EQ(f.size(), 14u) << line;
    if (f.size() != 14) continue;
    Truth t;
    t.kind = f[0];
    t.name = f[1];
    t.start_ns = std::stoull(f[2]);
    t.end_ns = std::stoull(f[3]);
    t.start_ticks = std::stoull(f[4]);
    t.end_ticks = std::stoull(f[5]);
    t.queue = std::stoull(f[6], nullptr, 16);
    t.pid = static_cast<uint32_t>(std::stoul(f[8]));
    t.device = static_cast<uint32_t>(std::stoul(f[9]));
    t.cmdlist = std::stoull(f[10], nullptr, 16);
    out.push_back(t);
  }
  return out;
}

uint64_t RawNow() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

struct Comparison {
  size_t matched = 0, measured = 0, estimated = 0;
  double worst_measured_error_ns = 0;
};

// Pairs ground truth with DeviceOps engine by engine (each runs in order, so truth in start
// order and operations in submission order must correspond one to one) and checks each pair.
Comparison CompareWithTruth(const Capture& c, const std::vector<Truth>& truth) {
  Comparison r;
  std::map<std::pair<uint32_t, uint64_t>, std::vector<Truth>> by_engine_truth;
  for (const Truth& t : truth) by_engine_truth[{t.pid, t.queue}].push_back(t);
  std::map<std::pair<uint32_t, uint64_t>, std::vector<DeviceOp>> by_engine_ops;
  for (const DeviceOp& op : c.All<DeviceOp>()) by_engine_ops[{op.pid, op.queue}].push_back(op);
  EXPECT_EQ(by_engine_ops.size(), by_engine_truth.size());
  for (auto& [engine, ts] : by_engine_truth) {
    std::sort(ts.begin(), ts.end(), [](auto& a, auto& b) { return a.start_ns < b.start_ns; });
    auto& ops = by_engine_ops[engine];
    std::sort(ops.begin(), ops.end(), [](auto& a, auto& b) { return a.id < b.id; });
    EXPECT_EQ(ops.size(), ts.size()) << "engine 0x" << std::hex << engine.second;
    for (size_t i = 0; i < std::min(ops.size(), ts.size()); ++i) {
      const Truth& t = ts[i];
      const DeviceOp& op = ops[i];
      SCOPED_TRACE("operation " + std::to_string(i) + " on engine " + std::to_string(engine.second) +
                   " (" + t.name.substr(0, 40) + ")");
      ++r.matched;
      if (t.kind == "kernel") {
        EXPECT_EQ(op.kind, DeviceOpKind::kKernel);
        EXPECT_EQ(c.strings.Get(op.name), t.name);
      } else {
        EXPECT_EQ(c.strings.Get(op.name), t.name);  // the append function
        EXPECT_NE(op.kind, DeviceOpKind::kKernel);
      }
      EXPECT_EQ(op.command_list, t.cmdlist);
      EXPECT_EQ(op.device, t.device);
      EXPECT_TRUE(op.completion_seen);
      if (op.measured) {
        ++r.measured;
        const double err = std::max(std::fabs(double(op.start_ns) - double(t.start_ns)),
                                    std::fabs(double(op.end_ns) - double(t.end_ns)));
        r.worst_measured_error_ns = std::max(r.worst_measured_error_ns, err);
        EXPECT_LE(err, kMeasuredToleranceNs);
        EXPECT_EQ(op.start_ticks, t.start_ticks);
        EXPECT_EQ(op.end_ticks, t.end_ticks);
      } else {
        ++r.estimated;
        EXPECT_LE(op.start_ns, t.start_ns) << "estimated start after the true start";
        EXPECT_GE(op.end_ns, t.end_ns) << "estimated end before the true end";
      }
    }
  }
  return r;
}

class ZeTimelineIntegrationTest : public RootTest {
 protected:
  ZeTimelineIntegrationTest() : RootTest("capture", "timeline") {}

  // Records ze_timeline (xtrace and the workload share the environment: the same simulated
  // device clock), returning the capture; xtrace's stderr in *err.
  Capture Record(const std::vector<std::string>& args, std::vector<std::string> env,
                 std::string* err = nullptr, const std::string& xtrace_flag = "-q") {
    env.push_back(kSimDriver);
    env.push_back("XTRACE_SIMZE_GROUND_TRUTH=" + Path("truth.tsv"));
    std::vector<std::string> argv = {kXtrace, "record", xtrace_flag, "-o", Path("run.capnp"), "--",
                                     kTimeline};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = RunCommand(argv, env, 240s);
    EXPECT_EQ(r.exit_code(), 0) << r.err;
    if (err) *err = r.err;
    return ReadWholeCapture(Path("run.capnp"));
  }
};

TEST_F(ZeTimelineIntegrationTest, MatchesGroundTruthAcrossAClockWrapWithHoursOfOffsetAndDrift) {
  // The device counter runs at 2 GHz, 50 ppm fast, and reads about three hours of ticks: its
  // 32-bit kernel timestamps wrap every 2.15 s, so the workload's three seconds span a wrap
  // whenever it starts (xtrace's start-up takes under a second on a quiet machine, many on a
  // loaded one: a wrap placed at a fixed time was missed).
  constexpr uint64_t kWrapHz = 2'000'000'000;
  const uint64_t origin = RawNow();
  const uint64_t offset = uint64_t{5000} << 32;
  Capture c = Record({"--threads", "2", "--rounds", "6", "--sleep-ms", "500", "--executions", "4",
                      "--immediate", "6", "--query-every", "2"},
                     {"XTRACE_SIMZE_TIMER_HZ=" + std::to_string(kWrapHz),
                      "XTRACE_SIMZE_CLOCK_ORIGIN_NS=" + std::to_string(origin),
                      "XTRACE_SIMZE_CLOCK_OFFSET_TICKS=" + std::to_string(offset),
                      "XTRACE_SIMZE_DRIFT_PPM=50"});
  ASSERT_TRUE(c.complete);
  const auto truth = ReadTruth(Path("truth.tsv"));
  // 2 threads x 6 rounds x (4 executions x 5 operations + 6 immediate launches)
  ASSERT_EQ(truth.size(), 2u * 6 * (4 * 5 + 6));
  std::set<uint64_t> periods;
  uint64_t first_ns = UINT64_MAX, last_ns = 0;
  for (const Truth& t : truth) {
    periods.insert(t.start_ticks >> 32);
    first_ns = std::min(first_ns, t.start_ns);
    last_ns = std::max(last_ns, t.start_ns);
  }
  ASSERT_GE(periods.size(), 2u) << "the run did not span a 32-bit wrap: its operations began "
                                << (double(first_ns) - double(origin)) / 1e9 << " s and ended "
                                << (double(last_ns) - double(origin)) / 1e9 << " s after the origin";

  const Comparison r = CompareWithTruth(c, truth);
  EXPECT_EQ(r.matched, truth.size());
  EXPECT_GT(r.measured, truth.size() / 3);
  EXPECT_GT(r.estimated, truth.size() / 3);
  std::printf("[ measure  ] %zu operations: %zu measured (worst error %.0f ns), %zu estimated\n",
              r.matched, r.measured, r.worst_measured_error_ns, r.estimated);

  // The clock fit was written to the log, with its residuals.
  const auto fits = c.All<ClockFit>();
  ASSERT_FALSE(fits.empty());
  EXPECT_EQ(fits.back().nominal_hz, kWrapHz);
  EXPECT_NEAR(fits.back().hz, kWrapHz * (1 + 50e-6), kWrapHz * 0.25e-6);
  EXPECT_LT(fits.back().residual_rms_ns, kMeasuredToleranceNs);
  EXPECT_GE(fits.back().samples, 3u);
  // Clock readings by xtrace (pid 0) and by the workload itself.
  std::set<uint32_t> sample_pids;
  const uint64_t now_realtime = uint64_t(time(nullptr)) * 1'000'000'000ull;
  for (const ClockSample& s : c.All<ClockSample>()) {
    sample_pids.insert(s.pid);
    // xtrace's own readings carry the three host clocks.
    if (s.pid == 0) {
      EXPECT_NEAR(double(s.realtime_ns), double(now_realtime), 120e9);
    }
  }
  EXPECT_EQ(sample_pids.size(), 2u);
}

TEST_F(ZeTimelineIntegrationTest, RegularListsExecutedManyTimesGiveOneOperationPerExecution) {
  Capture c = Record({"--threads", "3", "--executions", "25", "--immediate", "0", "--query-every", "5"},
                     {});
  const auto truth = ReadTruth(Path("truth.tsv"));
  ASSERT_EQ(truth.size(), 3u * 25 * 5);
  const Comparison r = CompareWithTruth(c, truth);
  EXPECT_EQ(r.matched, truth.size());
  // Per list: executions 1..25, each with the list's five operations once.
  std::map<uint64_t, std::map<uint64_t, int>> per_list;
  for (const DeviceOp& op : c.All<DeviceOp>()) ++per_list[op.command_list][op.execution];
  ASSERT_EQ(per_list.size(), 3u);
  for (const auto& [list, executions] : per_list) {
    ASSERT_EQ(executions.size(), 25u);
    EXPECT_EQ(executions.begin()->first, 1u);
    EXPECT_EQ(executions.rbegin()->first, 25u);
    for (const auto& [n, ops] : executions) EXPECT_EQ(ops, 5) << "execution " << n;
  }
  // Each operation was launched once, at recording, and submitted by every execution.
  EXPECT_EQ(c.launches.size(), 3u * 3);
}

TEST_F(ZeTimelineIntegrationTest, EachDeviceHasItsOwnClockAndTracks) {
  Capture c = Record({"--threads", "4", "--all-devices", "--executions", "3", "--immediate", "4"},
                     {"XTRACE_SIMZE_DEVICES=2", "XTRACE_SIMZE_CLOCK_ORIGIN_NS=0"});
  const auto truth = ReadTruth(Path("truth.tsv"));
  const Comparison r = CompareWithTruth(c, truth);
  EXPECT_EQ(r.matched, truth.size());
  EXPECT_GT(r.measured, 0u);
  std::set<uint32_t> devices, info;
  for (const DeviceOp& op : c.All<DeviceOp>()) devices.insert(op.device);
  for (const DeviceInfo& d : c.All<DeviceInfo>()) info.insert(d.device);
  EXPECT_EQ(devices, (std::set<uint32_t>{0, 1}));
  EXPECT_EQ(info, (std::set<uint32_t>{0, 1}));
  std::map<uint32_t, std::set<uint32_t>> tracks;
  for (const DeviceQueue& q : c.All<DeviceQueue>()) tracks[q.device].insert(q.track);
  EXPECT_EQ(tracks[0], (std::set<uint32_t>{1, 2, 3, 4}));  // two threads: a queue and a list each
  EXPECT_EQ(tracks[1], (std::set<uint32_t>{1, 2, 3, 4}));
}

// The workload lists the two devices in the other order than xtrace does (as an affinity mask
// gives a process its own view; here the simulated driver's XTRACE_SIMZE_DEVICE_ORDER, set for
// the workload only): matched by UUID, each device's operations are on that device and timed
// by its own clock, 10^12 ticks away from the other's. Matched by position, every measured
// time would be off by hours.
TEST_F(ZeTimelineIntegrationTest, DevicesAreMatchedByUuidNotByTheirPositionInTheTargetsList) {
  auto r = RunCommand({kXtrace, "record", "-o", Path("run.capnp"), "--", "/usr/bin/env",
                       "XTRACE_SIMZE_DEVICE_ORDER=1,0", kTimeline, "--threads", "4",
                       "--all-devices", "--executions", "3", "--immediate", "4"},
                      {kSimDriver, "XTRACE_SIMZE_DEVICES=2", "XTRACE_SIMZE_CLOCK_ORIGIN_NS=0",
                       "XTRACE_SIMZE_GROUND_TRUTH=" + Path("truth.tsv")},
                      240s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_EQ(r.err.find("matched none of xtrace's own devices"), std::string::npos) << r.err;
  const Capture c = ReadWholeCapture(Path("run.capnp"));
  const auto truth = ReadTruth(Path("truth.tsv"));
  std::set<uint32_t> true_devices;
  for (const Truth& t : truth) true_devices.insert(t.device);
  ASSERT_EQ(true_devices, (std::set<uint32_t>{0, 1}));
  const Comparison cmp = CompareWithTruth(c, truth);  // device numbers and measured times
  EXPECT_EQ(cmp.matched, truth.size());
  EXPECT_GT(cmp.measured, truth.size() / 2);
  EXPECT_LE(cmp.worst_measured_error_ns, kMeasuredToleranceNs);
}

// A device the workload has that xtrace's own Level Zero does not list (here: xtrace sees one
// device, the workload only the other) is named in the summary, not silently put on xtrace's.
TEST_F(ZeTimelineIntegrationTest, ATargetDeviceXtraceDoesNotSeeIsNamedInTheSummary) {
  auto r = RunCommand({kXtrace, "record", "-o", Path("run.capnp"), "--", "/usr/bin/env",
                       "XTRACE_SIMZE_DEVICES=2", "XTRACE_SIMZE_DEVICE_ORDER=1", kTimeline,
                       "--threads", "1", "--executions", "1", "--immediate", "1"},
                      {kSimDriver, "XTRACE_SIMZE_DEVICES=1"}, 240s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_NE(r.err.find("1 device of traced processes matched none of xtrace's own devices by UUID (pid "),
            std::string::npos)
      << r.err;
}

// The Chrome JSON of a capture: a process per device, a track per engine, operations marked
// measured or estimated, flow arrows whose ends sit inside the slices they join, memory
// counters.
TEST_F(ZeTimelineIntegrationTest, ChromeJsonDrawsTheDeviceTimeline) {
  Capture c = Record({"--threads", "2", "--executions", "2", "--immediate", "2"}, {});
  auto conv = RunCommand({kXtrace, "convert", Path("run.capnp"), "-o", Path("run.json")});
  ASSERT_EQ(conv.exit_code(), 0) << conv.err;
  testing::ExpectEveryFormatDrawable(kXtrace, Path("run.capnp"), Path("run.json"));
  std::ifstream in(Path("run.json"));
  const auto doc = nlohmann::json::parse(in);
  struct Slice {
    double ts, dur;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<Slice>> slices;  // (pid, tid)
  std::map<int64_t, std::string> process_names;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names;
  std::map<std::pair<std::string, uint64_t>, std::vector<nlohmann::json>> flows;  // (cat, id)
  size_t gpu_events = 0, counters = 0;
  std::set<std::string> timings;
  for (const auto& e : doc["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M" && e["name"] == "process_name") process_names[e["pid"]] = e["args"]["name"];
    if (ph == "M" && e["name"] == "thread_name") thread_names[{e["pid"], e["tid"]}] = e["args"]["name"];
    if (ph == "X") slices[{e["pid"], e["tid"]}].push_back({e["ts"].get<double>(), e["dur"].get<double>()});
    if (ph == "X" && test_util::IsDeviceWorkCategory(e["cat"])) {
      ++gpu_events;
      timings.insert(e["args"]["timing"].get<std::string>());
      EXPECT_TRUE(e["args"].contains("id"));
      EXPECT_TRUE(thread_names.count({e["pid"], e["tid"]})) << "an operation on an unnamed track";
    }
    // The device timeline's arrows: launches (ac2g) and waits (ze.flow); the driver track
    // draws its own, in category "drm".
    if ((ph == "s" || ph == "f") && (e["cat"] == "ac2g" || e["cat"] == "ze.flow"))
      flows[{e["cat"], e["id"].get<uint64_t>()}].push_back(e);
    if (ph == "C" && e["name"] == "memory in use") ++counters;
  }
  EXPECT_EQ(gpu_events, c.All<DeviceOp>().size());
  EXPECT_EQ(timings, (std::set<std::string>{"measured", "estimated"}));
  const int64_t gpu0 = 0x40000000;
  ASSERT_TRUE(process_names.count(gpu0));
  EXPECT_EQ(process_names[gpu0], "GPU 0: xtrace simulated GPU (Xe-HPC)");
  EXPECT_GT(counters, 0u);
  // Every arrow has a start and then its end, each inside a slice of its thread (a launch
  // arrow's id is the correlation: a call that submitted several operations repeats it).
  auto inside = [&](const nlohmann::json& e) {
    const double ts = e["ts"].get<double>();
    for (const Slice& s : slices[{e["pid"], e["tid"]}])
      if (ts >= s.ts && ts <= s.ts + s.dur) return true;
    return false;
  };
  size_t submit_flows = 0, wait_flows = 0;
  for (const auto& [key, ends] : flows) {
    ASSERT_EQ(ends.size() % 2, 0u) << "flow " << key.first << " " << key.second;
    for (size_t i = 0; i < ends.size(); i += 2) {
      EXPECT_EQ(ends[i]["ph"], "s");
      EXPECT_EQ(ends[i + 1]["ph"], "f");
      for (const auto& e : {ends[i], ends[i + 1]}) EXPECT_TRUE(inside(e)) << e.dump();
      (key.first == "ac2g" ? submit_flows : wait_flows)++;
      // Launch arrows go from a host thread to a device; wait arrows back.
      EXPECT_EQ(ends[i]["pid"].get<int64_t>() >= gpu0, key.first == "ze.flow");
    }
  }
  EXPECT_EQ(submit_flows, gpu_events);
  EXPECT_EQ(wait_flows, gpu_events);

  // The Chrome DevTools trace engine, an independent consumer, sees the GPU's tracks with
  // every operation on them.
  if (!std::filesystem::exists(CHROME_TRACE_ENGINE)) {
    if (getenv("CI")) FAIL() << CHROME_TRACE_ENGINE << " missing: scripts/install-deps.sh installs it";
    GTEST_SKIP() << "Chrome trace engine not installed (scripts/install-deps.sh installs it)";
  }
  auto consumer = RunCommand({"/usr/bin/env", "node", CHROME_CONSUMER_SCRIPT, CHROME_TRACE_ENGINE,
                              Path("run.json")});
  ASSERT_EQ(consumer.exit_code(), 0) << consumer.err;
  const auto seen = nlohmann::json::parse(consumer.out);
  size_t gpu_entries = 0, gpu_tracks = 0;
  for (const auto& proc : seen["processes"]) {
    if (proc["pid"] != gpu0) continue;
    for (const auto& t : proc["threads"]) {
      // Lanes beside an engine's track hold the estimates that would overlap on it.
      if (t["name"].get<std::string>().find(" (lane ") == std::string::npos) ++gpu_tracks;
      gpu_entries += t["entries"].get<size_t>();
      const std::pair<int64_t, int64_t> key{gpu0, t["tid"].get<int64_t>()};
      EXPECT_EQ(t["name"], thread_names[key]);
    }
  }
  EXPECT_EQ(gpu_tracks, 4u) << consumer.out;  // two threads, each with a queue and a list
  EXPECT_EQ(gpu_entries, gpu_events) << consumer.out;
}

// Attached to a process that is already running, xtrace knows none of its command lists,
// queues or events: it must still rebuild the device work of its window, from the appends
// and what the process does with them.
TEST_F(ZeTimelineIntegrationTest, AttachRebuildsTheDeviceWorkOfItsWindow) {
  Subprocess workload({kWorkload, "--wait-for-signal", "--warmup-rounds", "1", "--recreate-kernels",
                       "--iterations", "4", "--threads", "2"},
                      {kSimDriver, "XTRACE_SIMZE_GROUND_TRUTH=" + Path("truth.tsv")});
  const auto ready = workload.WaitStdout("ready", 30s);
  ASSERT_TRUE(ready) << workload.stderr_text();
  const std::string pid = ready->substr(ready->find(' ') + 1);
  Subprocess xtrace({kXtrace, "attach", "--pid", pid, "-o", Path("run.capnp")}, {kSimDriver});
  ASSERT_TRUE(xtrace.WaitStderr("attached to pid " + pid, 30s)) << xtrace.stderr_text();
  const size_t before = ReadTruth(Path("truth.tsv")).size();  // the warm-up round
  for (int round = 1; round <= 2; ++round) {
    workload.Signal(SIGUSR1);
    ASSERT_TRUE(workload.WaitStdout("round " + std::to_string(round), 60s)) << workload.stderr_text();
  }
  xtrace.Signal(SIGINT);
  ASSERT_TRUE(xtrace.Wait(60s).has_value());
  workload.Signal(SIGTERM);
  workload.Wait(30s);

  auto truth = ReadTruth(Path("truth.tsv"));
  ASSERT_GT(before, 0u);
  truth.erase(truth.begin(), truth.begin() + static_cast<std::ptrdiff_t>(before));
  // 2 rounds x 2 threads x 4 iterations x (fill, copy, 3 kernels; 2 kernels, copy).
  ASSERT_EQ(truth.size(), 2u * 2 * 4 * 8);
  const Capture c = ReadWholeCapture(Path("run.capnp"));
  const Comparison r = CompareWithTruth(c, truth);
  EXPECT_EQ(r.matched, truth.size());
  EXPECT_GT(r.measured, 0u);  // the workload reads kernel timestamps of three kernels a round
  EXPECT_NE(xtrace.stderr_text().find("No events dropped"), std::string::npos) << xtrace.stderr_text();
  EXPECT_EQ(xtrace.stderr_text().find("never seen to run"), std::string::npos) << xtrace.stderr_text();
}

// JIT-style churn: kernels created, launched and destroyed by the ten thousand. The tables
// must follow the handles' lifetimes rather than grow with them.
TEST_F(ZeTimelineIntegrationTest, CollectorTablesStayBoundedUnderKernelChurn) {
  std::string err;
  Capture c = Record({"--stress-kernels", "20000", "--stress-launches", "100000"},
                     {"XTRACE_SIMZE_DEFAULT_KERNEL_NS=0"}, &err, "-v");
  EXPECT_EQ(c.launches.size(), 100'000u);
  EXPECT_EQ(c.creates.size(), 20'000u);
  std::map<std::string, int> per_name;
  for (const KernelLaunch& l : c.launches) {
    EXPECT_TRUE(l.name_known);
    ++per_name[std::string(c.strings.Get(l.kernel_name))];
  }
  EXPECT_EQ(per_name.size(), 20'000u);
  EXPECT_EQ(per_name["xt_stress_0"], 5);
  EXPECT_EQ(per_name["xt_stress_19999"], 5);
  EXPECT_EQ(c.All<DeviceOp>().size(), 100'000u);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(err, m, std::regex(
      "peak (\\d+) kernels, (\\d+) live Level Zero objects, (\\d+) device operations in "
      "flight; collector peak RSS (\\d+) MiB"))) << err;
  EXPECT_LE(std::stoul(m[1]), 2u);     // one kernel at a time, not 20,000
  EXPECT_LE(std::stoul(m[2]), 16u);    // a context's worth of objects
  EXPECT_LE(std::stoul(m[3]), 300u);   // the workload synchronizes every 256 launches
  std::printf("[ measure  ] 20000 kernels, 100000 launches: collector peak RSS %s MiB\n",
              m[4].str().c_str());
}

}  // namespace
}  // namespace xtrace
