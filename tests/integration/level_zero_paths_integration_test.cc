// Integration tests of the Level Zero paths current stacks take, on two real loaders: the
// host's (Debian bookworm, 1.8.12, which has none of the newer entry points) and Debian
// trixie's 1.20.6 in a root file system built from Debian's archive (scripts/trixie-rootfs.sh,
// which ctest runs first as the fixture trixie_rootfs), entered with chroot and as a podman
// container's --rootfs; on the host's loader also under `attach`. The workload,
// ze_sycl_v2, is shaped like SYCL's v2 adapter: zeInitDrivers, in-order immediate lists,
// launches with arguments (and with parameters) and counter-based events through pointers the
// driver hands out (its internal functions, not its exports of those names, as Intel's), a
// regular list appended with zeCommandListImmediateAppendCommandListsExp, a graph recorded once
// and replayed every iteration (Intel's graph extension, driver pointers),
// zeCommandListHostSynchronize. Checked against its launch log: every launch named, on its
// engine, measured (or bounded), each graph kernel at every replay tied to the replaying call,
// and the calls of each path captured; with --older-names, the other names of host functions
// and counter-based events. The second workload, ze_sycl_legacy, is shaped like SYCL's legacy
// adapter (cooperative launches, a multiple-indirect launch, lists filled per submission and
// executed on a queue, batches appended with zeCommandListImmediateAppendCommandListsExp), and
// with --through-tables makes every call through the function tables it took from the loader,
// captured by default where xtrace sees it take them (under record, and attached before its
// zeInit), and with --driver-tables when attached after; through the exports no driver
// function is probed by default, and with --driver-tables every call passes two probes and
// is counted once. Needs root; skips with the reason elsewhere, fails under CI.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "capture_reader.h"
#include "log_contents.h"
#include "root_fixture.h"
#include "subprocess.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using testing::Capture;
using testing::PidFromReadyLine;
using testing::ReadLaunchLog;
using testing::ReadWholeCapture;
using testing::RootTest;
using testing::RunCommand;
using testing::RunResult;
using testing::Sorted;
using testing::Subprocess;

const std::string kXtrace = XTRACE_BIN;
const std::string kWorkload = ZE_SYCL_V2_BIN;
const std::string kLegacy = ZE_SYCL_LEGACY_BIN;
const std::string kSimze = SIMZE_LIB;
constexpr int kIterations = 3;
// 3 with arguments, 1 in the appended list, 2 in the replayed graph
constexpr size_t kLaunchesPerIteration = 6;  // (of the 3, the last with parameters)
constexpr size_t kGraphLaunches = 2;
// ze_sycl_legacy: 2 on the queue, 1 on the immediate list, 1 in the batched list
constexpr size_t kLegacyLaunchesPerIteration = 4;
// and a multiple-indirect launch in the queue's list, one device operation named after the call
constexpr const char* kMultipleIndirect = "zeCommandListAppendLaunchMultipleKernelsIndirect";
// Calls ze_sycl_legacy makes every iteration where the loader has
// zeCommandListImmediateAppendCommandListsExp (without it, one more execution and fence wait).
const std::map<uint16_t, size_t> kLegacyCallsPerIteration = {
    {XT_ZE_COMMAND_LIST_RESET, 2},
    {XT_ZE_COMMAND_LIST_CLOSE, 2},
    {XT_ZE_APPEND_LAUNCH_MULTIPLE_KERNELS_INDIRECT, 1},
    {XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS, 1},
    {XT_ZE_FENCE_HOST_SYNCHRONIZE, 1},
    {XT_ZE_EVENT_HOST_SYNCHRONIZE, 4},
    {XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP, 4},
    {XT_ZE_EVENT_HOST_RESET, 4},
    {XT_ZE_DEVICE_GET_GLOBAL_TIMESTAMPS, 1},
};

// Kernels appended once and run every iteration: the appended regular list's (gemm) and the
// graph's (softmax); the launch log lists them at every run.
bool InRegularList(const std::string& launch) { return launch.find("gemm") != std::string::npos; }
bool InGraph(const std::string& launch) { return launch.find("softmax") != std::string::npos; }
bool Replayed(const std::string& launch) { return InRegularList(launch) || InGraph(launch); }

std::string TrixieDir() {
  const char* env = std::getenv("XTRACE_TRIXIE_ROOT");
  return env && *env ? env : "/var/cache/xtrace/trixie";
}

// The trixie tree scripts/trixie-rootfs.sh builds (the fixture trixie_rootfs runs it before
// these tests), or "" if it is not there.
std::string TrixieRoot() {
  const std::string root = TrixieDir();
  return fs::exists(root + "/.xtrace-stamp") ? root : "";
}

// Why the tree is missing, as the script left it in DIR.failed (or what to run).
std::string WhyNoTrixie() {
  std::ifstream in(TrixieDir() + ".failed");
  std::string why((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (why.empty()) return "it was not built: run scripts/trixie-rootfs.sh as root (ctest runs it)";
  return "scripts/trixie-rootfs.sh could not build it: " + why;
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class LevelZeroPathsTest : public RootTest {
 protected:
  LevelZeroPathsTest() : RootTest("Level Zero paths", "zepaths") {}

  // A run of the workload under `record`: `prefix` goes before it (e.g. chroot DIR), `log`
  // is its launch log as the workload names it, `host_log` the same file from here. xtrace
  // (and so the workload, unless `prefix` says otherwise) runs with the simulated GPU built
  // here, which xtrace also reads the device clock through.
  struct Run {
    RunResult result;
    uint32_t pid = 0;
    Capture capture;
    std::vector<std::string> expected;  // its launch log, sorted, without tids
  };
  Run Record(const std::vector<std::string>& prefix, const std::string& workload,
             const std::string& log, const std::string& host_log,
             const std::vector<std::string>& env = {},
             const std::vector<std::string>& options = {},
             const std::vector<std::string>& xtrace_options = {}) {
    Run run;
    const std::string out = Path("run.capnp");
    std::vector<std::string> argv = {kXtrace, "record", "-o", out};
    argv.insert(argv.end(), xtrace_options.begin(), xtrace_options.end());
    argv.push_back("--");
    argv.insert(argv.end(), prefix.begin(), prefix.end());
    for (const std::string& a : {workload, std::string("--iterations"), std::to_string(kIterations),
                                 std::string("--launch-log"), log})
      argv.push_back(a);
    argv.insert(argv.end(), options.begin(), options.end());
    std::vector<std::string> full_env = env;
    full_env.push_back("ZE_ENABLE_ALT_DRIVERS=" + kSimze);
    run.result = RunCommand(argv, full_env, 120s);
    const size_t ready = run.result.out.find("ready ");
    if (ready != std::string::npos)
      run.pid = PidFromReadyLine(run.result.out.substr(ready, run.result.out.find('\n', ready) - ready));
    run.capture = ReadWholeCapture(out);
    run.expected = ReadLaunchLog(host_log, /*strip_tid=*/true);
    return run;
  }

  // A run of the workload that makes every lookup and object, says ready and waits; xtrace
  // attaches to it then (`attach --pid`), and the workload launches once signalled. `prefix`,
  // `workload`, `log` and `host_log` as for Record; result.out is the workload's output,
  // result.err xtrace's. With `bystanders`, that many more processes of the workload, started
  // after it and waiting before their zeInit, are given to the same attach, and the workload
  // is signalled as soon as the attach's first scan has probed it (the scan's line about its
  // DRM ioctls), while the scan still goes on to them; they are killed once it is done.
  Run Attach(const std::vector<std::string>& prefix, const std::string& workload,
             const std::string& log, const std::string& host_log,
             const std::vector<std::string>& options = {},
             const std::vector<std::string>& xtrace_options = {}, int bystanders = 0) {
    Run run;
    const std::string out = Path("run.capnp");
    std::vector<std::string> argv = prefix;
    for (const std::string& a : {workload, std::string("--wait-for-signal"), std::string("--iterations"),
                                 std::to_string(kIterations), std::string("--launch-log"), log})
      argv.push_back(a);
    argv.insert(argv.end(), options.begin(), options.end());
    Subprocess target(argv, {"ZE_ENABLE_ALT_DRIVERS=" + kSimze});
    const auto ready = target.WaitStdout("ready ", 60s);
    run.pid = ready ? PidFromReadyLine(*ready) : 0;
    if (run.pid == 0) {
      ADD_FAILURE() << "the workload never said ready: " << target.stderr_text();
      return run;
    }
    std::vector<std::string> xtrace_argv = {kXtrace, "attach", "--pid", std::to_string(run.pid),
                                            "-o", out};
    std::vector<std::unique_ptr<Subprocess>> others;
    for (int i = 0; i < bystanders; ++i) {
      others.push_back(std::make_unique<Subprocess>(
          std::vector<std::string>{workload, "--wait-before-init"},
          std::vector<std::string>{"ZE_ENABLE_ALT_DRIVERS=" + kSimze}));
      const auto line = others.back()->WaitStdout("ready ", 60s);
      const uint32_t pid = line ? PidFromReadyLine(*line) : 0;
      if (pid == 0) {
        ADD_FAILURE() << "a bystander never said ready: " << others.back()->stderr_text();
        return run;
      }
      xtrace_argv.insert(xtrace_argv.end(), {"--pid", std::to_string(pid)});
    }
    xtrace_argv.insert(xtrace_argv.end(), xtrace_options.begin(), xtrace_options.end());
    Subprocess xtrace(xtrace_argv, {"ZE_ENABLE_ALT_DRIVERS=" + kSimze});
    const std::string go = bystanders ? "tracing the DRM ioctls of pid " + std::to_string(run.pid)
                                      : "attached to pid " + std::to_string(run.pid);
    EXPECT_TRUE(xtrace.WaitStderr(go, 60s)) << xtrace.stderr_text();
    kill(static_cast<pid_t>(run.pid), SIGUSR1);  // the workload itself (chroot execs it)
    const auto status = target.Wait(120s);
    for (auto& other : others) {
      other->Signal(SIGKILL);
      EXPECT_TRUE(other->Wait(60s).has_value());
    }
    run.result.status = status ? *status : -1;
    run.result.out = target.stdout_text();
    // xtrace ends when its one target has exited; SIGINT in case it has not seen it yet.
    if (!xtrace.Wait(10s)) {
      xtrace.Signal(SIGINT);
      EXPECT_TRUE(xtrace.Wait(60s).has_value()) << xtrace.stderr_text();
    }
    run.result.err = xtrace.stderr_text();
    run.capture = ReadWholeCapture(out);
    run.expected = ReadLaunchLog(host_log, /*strip_tid=*/true);
    return run;
  }

  // Every launch named as the workload logged it; every device operation of the process on
  // the one immediate list's engine; the launches with events measured, the rest bounded; the
  // graph's kernels at every replay, tied to it. `attached`: xtrace attached after the regular
  // list (gemm) and the graph were recorded, so the list's executions are not seen (what a
  // list recorded before the capture holds is not known), and each replay of the graph is one
  // operation that says its contents are unknown.
  void ExpectEveryLaunch(const Run& run, bool attached = false,
                         uint16_t host_function_fn = XT_ZE_APPEND_HOST_FUNCTION) {
    ASSERT_EQ(run.result.exit_code(), 0) << run.result.out << run.result.err;
    ASSERT_GT(run.pid, 0u) << run.result.out;
    ASSERT_EQ(run.expected.size(), kIterations * kLaunchesPerIteration);
    std::vector<std::string> got;
    for (const KernelLaunch& l : run.capture.launches) {
      if (l.pid != run.pid) continue;
      EXPECT_TRUE(l.name_known) << run.capture.strings.Get(l.kernel_name);
      got.push_back(std::string(run.capture.strings.Get(l.kernel_name)) + "\t" +
                    std::to_string(l.group_count[0]) + "," + std::to_string(l.group_count[1]) +
                    "," + std::to_string(l.group_count[2]));
    }
    // The appended list's and the graph's launches are appended once and run every iteration.
    std::vector<std::string> expected_appends;
    std::set<std::string> seen;
    for (const auto& e : run.expected)
      if (!Replayed(e) || (!attached && seen.insert(e).second)) expected_appends.push_back(e);
    EXPECT_EQ(Sorted(got), Sorted(expected_appends));

    // The immediate list every launch with arguments or parameters went to; the appended
    // list's launch runs there too where zeCommandListImmediateAppendCommandListsExp exists
    // (else on a queue). Each iteration launches once with parameters, through the driver's
    // pointer (or the export of a loader that has one).
    std::set<uint64_t> immediate;
    size_t with_parameters = 0;
    for (const KernelLaunch& l : run.capture.launches) {
      if (l.pid != run.pid) continue;
      if (l.launch_kind == XT_LAUNCH_WITH_ARGUMENTS || l.launch_kind == XT_LAUNCH_WITH_PARAMETERS)
        immediate.insert(l.command_list);
      if (l.launch_kind == XT_LAUNCH_WITH_PARAMETERS) {
        ++with_parameters;
        EXPECT_NE(l.signal_event, 0u) << "its signal event, the fifth parameter";
        EXPECT_EQ(l.num_wait_events, 1u) << "its wait count, the sixth";
        EXPECT_GE(l.group_count[0], 16u) << "its group counts, read through the pointer";
      }
    }
    ASSERT_EQ(immediate.size(), 1u);
    EXPECT_EQ(with_parameters, size_t{kIterations});
    // The replays: zeCommandListAppendGraphExp calls, by thread and start.
    std::map<std::pair<uint32_t, uint64_t>, const ApiCall*> replays;
    for (const ApiCall& c : run.capture.calls)
      if (c.pid == run.pid && c.fn == XT_ZE_COMMAND_LIST_APPEND_GRAPH_EXP && c.result == 0)
        replays[{c.tid, c.start_ns}] = &c;
    EXPECT_EQ(replays.size(), size_t{kIterations});
    std::set<uint64_t> queues;
    std::map<uint64_t, size_t> graph_ops_per_replay;
    size_t ops = 0, measured = 0, unknown_graphs = 0;
    // The trace's flows: each operation is tied to the call that submitted it (a launch, or
    // the append or execution that ran its list) and to the call that saw it done.
    std::set<std::pair<uint32_t, uint64_t>> submitters;
    for (const KernelLaunch& l : run.capture.launches)
      if (l.pid == run.pid) submitters.insert({l.tid, l.start_ns});
    for (const ApiCall& c : run.capture.calls)
      if (c.pid == run.pid) submitters.insert({c.tid, c.start_ns});
    for (const DeviceOp& op : run.capture.All<DeviceOp>()) {
      if (op.pid != run.pid || op.kind != DeviceOpKind::kKernel) continue;
      ++ops;
      queues.insert(op.queue);
      const std::string name(run.capture.strings.Get(op.name));
      EXPECT_TRUE(submitters.count({op.submit_tid, op.submit_ns}))
          << name << " is tied to no call that submitted it";
      EXPECT_NE(op.sync_ns, 0u) << name << " is tied to no call that saw it done";
      if (!InRegularList(name)) {
        EXPECT_EQ(op.queue, *immediate.begin()) << name;
      }
      EXPECT_NE(name, "") << "an unnamed kernel";
      EXPECT_LE(op.start_ns, op.end_ns);
      EXPECT_TRUE(op.completion_seen) << name;
      measured += op.measured ? 1 : 0;
      const bool unknown_graph = name.rfind("zeCommandListAppendGraphExp:", 0) == 0 &&
                                 name.find("contents unknown") != std::string::npos;
      unknown_graphs += unknown_graph ? 1 : 0;
      if (InGraph(name) || unknown_graph) {
        // Submitted by a replay: the operation names the call and the executable graph.
        auto replay = replays.find({op.submit_tid, op.submit_ns});
        ASSERT_NE(replay, replays.end()) << name << " is tied to no zeCommandListAppendGraphExp";
        EXPECT_EQ(op.command_list, replay->second->arg[3]) << "the executable graph replayed";
        ++graph_ops_per_replay[op.submit_ns];
      }
    }
    const size_t graph_runs = static_cast<size_t>(kIterations) * kGraphLaunches;
    EXPECT_EQ(ops, attached ? run.expected.size() - kIterations - graph_runs + kIterations
                            : run.expected.size());
    EXPECT_EQ(unknown_graphs, attached ? size_t{kIterations} : 0u);
    EXPECT_EQ(graph_ops_per_replay.size(), size_t{kIterations});
    for (const auto& [at, n] : graph_ops_per_replay)
      EXPECT_EQ(n, attached ? 1u : kGraphLaunches) << "the replay at " << at;
    EXPECT_EQ(queues.size(),
              attached || Called(run, XT_ZE_COMMAND_LIST_IMMEDIATE_APPEND_COMMAND_LISTS_EXP) ? 1u : 2u);
    EXPECT_GE(measured, static_cast<size_t>(kIterations) * (attached ? 3 : 4))
        << "the launches signalling counter-based timestamp events (the graph's first, at each "
           "replay, too) carry measured times";
    // The host function each iteration appends: work on the list's timeline, submitted by its
    // append, seen done by the host synchronize after it.
    std::set<uint64_t> host_function_calls;
    for (const ApiCall& c : run.capture.calls)
      if (c.pid == run.pid && c.fn == host_function_fn && c.result == 0)
        host_function_calls.insert(c.start_ns);
    EXPECT_EQ(host_function_calls.size(), size_t{kIterations});
    size_t host_functions = 0;
    for (const DeviceOp& op : run.capture.All<DeviceOp>()) {
      if (op.pid != run.pid || op.kind != DeviceOpKind::kHostFunction) continue;
      ++host_functions;
      EXPECT_EQ(op.queue, *immediate.begin());
      EXPECT_TRUE(op.completion_seen);
      EXPECT_TRUE(host_function_calls.count(op.submit_ns)) << "tied to its append";
    }
    EXPECT_EQ(host_functions, size_t{kIterations});
    EXPECT_NE(run.result.out.find("host_functions=" + std::to_string(kIterations)),
              std::string::npos) << run.result.out;
    if (attached) {
      EXPECT_NE(run.result.err.find(std::to_string(kIterations) +
                                    " replays of graphs recorded before the capture began"),
                std::string::npos)
          << run.result.err;
    } else {
      for (uint16_t fn : {XT_ZE_COMMAND_LIST_BEGIN_GRAPH_CAPTURE_EXP,
                          XT_ZE_COMMAND_LIST_END_GRAPH_CAPTURE_EXP,
                          XT_ZE_COMMAND_LIST_INSTANTIATE_GRAPH_EXP, XT_ZE_GRAPH_DESTROY_EXP,
                          XT_ZE_EXECUTABLE_GRAPH_DESTROY_EXP})
        EXPECT_TRUE(Called(run, fn)) << "graph call " << fn << " is missing";
    }
  }

  // ExpectEveryLaunch on trixie's loader 1.20, seen by xtrace at `root` + its path (the tree's
  // directory under chroot; "" where the process's own root is the tree): that loader was
  // probed, and the entry points bookworm's lacks were captured through it.
  void ExpectEveryLaunchOnTrixiesLoader(const Run& run, const std::string& root) {
    ExpectEveryLaunch(run);
    EXPECT_NE(run.result.err.find("attached to pid " + std::to_string(run.pid) + " (" + root +
                                  "/usr/lib/x86_64-linux-gnu/libze_loader.so.1.20"),
              std::string::npos)
        << run.result.err;
    for (uint16_t fn : {XT_ZE_INIT_DRIVERS, XT_ZE_COMMAND_LIST_HOST_SYNCHRONIZE,
                        XT_ZE_COMMAND_LIST_IMMEDIATE_APPEND_COMMAND_LISTS_EXP,
                        XT_ZE_EX_COUNTER_BASED_EVENT_CREATE2})
      EXPECT_TRUE(Called(run, fn)) << "call " << fn << " is missing";
    // What 1.20.6 lacks (Level Zero 1.14 and 1.15's), said at the attach and in the summary.
    EXPECT_EQ(Count(run.result.err,
                    "does not export zeCommandListAppendLaunchKernelWithArguments, "
                    "zeCommandListAppendLaunchKernelWithParameters, zeEventCounterBasedCreate "
                    "(an older Level Zero loader)"),
              2u)
        << run.result.err;
  }

  // ze_sycl_legacy's run: every launch named once (cooperative and plain as launched), each
  // kernel on its engine (the queue's list's two on the queue, the cooperative one on the
  // immediate list, the batched list's on the immediate list where
  // zeCommandListImmediateAppendCommandListsExp exists, else on the queue), measured from the
  // pooled timestamp events, seen complete, and tied to the call that submitted it and the
  // one that saw it done (the trace's flows).
  void ExpectEveryLegacyLaunch(const Run& run, bool immediate_append) {
    ASSERT_EQ(run.result.exit_code(), 0) << run.result.out << run.result.err;
    ASSERT_GT(run.pid, 0u) << run.result.out;
    ASSERT_EQ(run.expected.size(), kIterations * kLegacyLaunchesPerIteration);
    EXPECT_NE(run.result.out.find(std::string("immediate_append=") + (immediate_append ? "yes" : "no")),
              std::string::npos) << run.result.out;
    std::vector<std::string> got;
    size_t cooperative = 0;
    std::set<std::pair<uint32_t, uint64_t>> submitters;  // (tid, start) of launches and calls
    std::map<std::string, std::set<uint64_t>> lists_of;  // kernel name -> lists launched on
    for (const KernelLaunch& l : run.capture.launches) {
      if (l.pid != run.pid) continue;
      const std::string name(run.capture.strings.Get(l.kernel_name));
      EXPECT_TRUE(l.name_known) << name;
      got.push_back(name + "\t" + std::to_string(l.group_count[0]) + "," +
                    std::to_string(l.group_count[1]) + "," + std::to_string(l.group_count[2]));
      cooperative += l.launch_kind == XT_LAUNCH_COOPERATIVE ? 1 : 0;
      submitters.insert({l.tid, l.start_ns});
      lists_of[name].insert(l.command_list);
    }
    EXPECT_EQ(Sorted(got), Sorted(run.expected)) << "each launch once, named";
    EXPECT_EQ(cooperative, size_t{kIterations} * 2);
    for (const ApiCall& c : run.capture.calls)
      if (c.pid == run.pid) submitters.insert({c.tid, c.start_ns});
    // The immediate list: the one the cooperative sycl lambda is launched on.
    std::string lambda, gemm;
    for (const auto& [name, lists] : lists_of) {
      if (name.find("gemm") != std::string::npos) gemm = name;
      if (name.rfind("_ZTS", 0) == 0) lambda = name;  // the mangled SYCL kernel lambda
    }
    ASSERT_FALSE(lambda.empty());
    ASSERT_EQ(lists_of[lambda].size(), 1u);
    const uint64_t immediate = *lists_of[lambda].begin();
    std::map<std::string, std::set<uint64_t>> queues_of;
    size_t ops = 0, measured = 0;
    std::set<uint64_t> indirect_queues;  // where the multiple-indirect launches ran
    size_t indirect = 0;
    for (const DeviceOp& op : run.capture.All<DeviceOp>()) {
      if (op.pid != run.pid || op.kind != DeviceOpKind::kKernel) continue;
      const std::string name(run.capture.strings.Get(op.name));
      if (name == kMultipleIndirect) {
        // One operation per execution stands for the kernels the device reads: bounded (it
        // signals no event), tied to the execution that ran it and the wait that saw it done.
        ++indirect;
        indirect_queues.insert(op.queue);
        EXPECT_TRUE(op.completion_seen);
        EXPECT_TRUE(submitters.count({op.submit_tid, op.submit_ns}));
        continue;
      }
      ++ops;
      queues_of[name].insert(op.queue);
      measured += op.measured ? 1 : 0;
      EXPECT_TRUE(op.completion_seen) << name;
      EXPECT_LE(op.start_ns, op.end_ns) << name;
      EXPECT_TRUE(submitters.count({op.submit_tid, op.submit_ns}))
          << name << " is tied to no call that submitted it";
      EXPECT_NE(op.sync_ns, 0u) << name << " is tied to no call that saw it done";
    }
    EXPECT_EQ(ops, run.expected.size());
    EXPECT_EQ(measured, ops) << "every launch signals a timestamp event the process reads";
    EXPECT_EQ(queues_of.size(), kLegacyLaunchesPerIteration);
    std::set<uint64_t> queue;  // the command queue: where the other two kernels ran
    for (const auto& [name, queues] : queues_of) {
      EXPECT_EQ(queues.size(), 1u) << name << " ran on one engine";
      if (name == lambda) {
        EXPECT_EQ(*queues.begin(), immediate);
      } else if (name != gemm) {
        queue.insert(*queues.begin());
      }
    }
    ASSERT_EQ(queue.size(), 1u);
    EXPECT_NE(*queue.begin(), immediate);
    EXPECT_EQ(*queues_of[gemm].begin(), immediate_append ? immediate : *queue.begin());
    EXPECT_EQ(indirect, size_t{kIterations});
    EXPECT_EQ(indirect_queues, std::set<uint64_t>{*queue.begin()}) << "in the queue's list";
    // Every call once, however many probes it passed (a loader export and the driver function
    // it reaches, with --driver-tables): the workload's own counts.
    for (auto [fn, per_iteration] : kLegacyCallsPerIteration) {
      // Without the batched append the batch is executed on the queue, and waited for.
      if (!immediate_append &&
          (fn == XT_ZE_FENCE_HOST_SYNCHRONIZE || fn == XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS))
        ++per_iteration;
      EXPECT_EQ(CallCount(run, fn), kIterations * per_iteration) << "calls of " << fn;
    }
  }

  // Calls of `fn` the process made, successful or not.
  static size_t CallCount(const Run& run, uint16_t fn) {
    size_t n = 0;
    for (const ApiCall& c : run.capture.calls) n += c.pid == run.pid && c.fn == fn ? 1 : 0;
    return n;
  }

  // The trixie tree, or "" once the test is skipped (failed under CI) for want of it.
  std::string TrixieRootOrSkip() {
    const std::string root = TrixieRoot();
    if (root.empty())
      SkipWithout("Debian trixie tree in " + TrixieDir() + " (XTRACE_TRIXIE_ROOT)", WhyNoTrixie());
    return root;
  }

  // Whether podman and runc are installed; when not, the test is skipped (failed under CI).
  bool PodmanOrSkip() {
    if (access("/usr/bin/podman", X_OK) == 0 &&
        (access("/usr/sbin/runc", X_OK) == 0 || access("/usr/bin/runc", X_OK) == 0))
      return true;
    SkipWithout("podman and runc", "scripts/install-deps.sh installs them");
    return false;
  }

  // `workload` and the simulated GPU built here, copied into a directory of the trixie tree
  // of this test's own (removed when the test ends). `dir` is its path here, `inside` in the
  // tree.
  struct TreeCopy {
    std::string dir, inside;
  };
  TreeCopy CopyIntoTrixieTree(const std::string& root, const std::string& workload) {
    std::string dir = root + "/tmp/xtrace-zepaths-XXXXXX";
    if (!mkdtemp(dir.data())) {
      ADD_FAILURE() << "mkdtemp in " << root << "/tmp: " << std::strerror(errno);
      return {};
    }
    tree_dirs_.push_back(dir);
    CopyBinaries(dir, workload);
    return {dir, dir.substr(root.size())};
  }

  // The same copies in the test's own directory "xt", to bind-mount into a container.
  std::string CopyToBind(const std::string& workload) {
    const std::string dir = Path("xt");
    EXPECT_TRUE(fs::create_directory(dir)) << dir;
    CopyBinaries(dir, workload);
    return dir;
  }

  // `podman run` of a container whose root is the trixie tree (over an overlay, so the tree
  // stays as built) with `dir` at /xt, the simulated GPU there its driver, and `options`; the
  // command to put before the workload. The container is removed when the test ends.
  std::vector<std::string> PodmanRun(const std::string& root, const std::string& dir,
                                     const std::vector<std::string>& options = {}) {
    const std::string conf = Path("containers.conf");
    { std::ofstream(conf) << "[containers]\ndefault_ulimits = []\n"; }
    setenv("CONTAINERS_CONF", conf.c_str(), 1);
    container_ = "xtrace-zepaths-" + std::to_string(getpid());
    std::vector<std::string> argv = {"/usr/bin/podman", "--runtime", "runc", "run", "--rm",
                                     "--cgroup-manager=cgroupfs", "--network=none"};
    argv.insert(argv.end(), options.begin(), options.end());
    for (const std::string& a : {std::string("--name"), container_, std::string("-v"), dir + ":/xt",
                                 std::string("-e"), std::string("ZE_ENABLE_ALT_DRIVERS=/xt/libxtrace_simze.so"),
                                 std::string("--rootfs"), root + ":O"})
      argv.push_back(a);
    return argv;
  }

  void TearDown() override {
    if (!container_.empty()) {
      (void)RunCommand({"/usr/bin/podman", "rm", "-f", "-t", "0", container_}, {});
      unsetenv("CONTAINERS_CONF");
    }
    for (const std::string& d : tree_dirs_) fs::remove_all(d);
    RootTest::TearDown();
  }

  static bool Called(const Run& run, uint16_t fn) {
    for (const ApiCall& c : run.capture.calls)
      if (c.pid == run.pid && c.fn == fn && c.result == 0) return true;
    return false;
  }

 private:
  void SkipWithout(const std::string& what, const std::string& why) {
    if (std::getenv("CI")) FAIL() << "no " << what << ": " << why;
    GTEST_SKIP() << "no " << what << ": " << why;
  }

  static void CopyBinaries(const std::string& dir, const std::string& workload) {
    fs::copy_file(workload, dir + "/" + fs::path(workload).filename().string());
    fs::copy_file(kSimze, dir + "/libxtrace_simze.so");
  }

  std::vector<std::string> tree_dirs_;
  std::string container_;
};

// Bookworm's loader: the driver's pointers are probed in the driver, the loader's missing
// entry points are said once, and the workload's fallbacks are captured as before.
TEST_F(LevelZeroPathsTest, SyclV2ShapeOnTheHostsLoader) {
  const std::string log = Path("launches.tsv");
  const Run run = Record({}, kWorkload, log, log);
  ExpectEveryLaunch(run);
  EXPECT_TRUE(Called(run, XT_ZE_EX_COUNTER_BASED_EVENT_CREATE2))
      << "zexCounterBasedEventCreate2, called through the driver's pointer, is missing";
  EXPECT_TRUE(Called(run, XT_ZE_INIT));
  EXPECT_FALSE(Called(run, XT_ZE_INIT_DRIVERS));
  // Said once when attaching, once more in the closing summary, and kept in the log's summary
  // for `xtrace report`.
  EXPECT_EQ(Count(run.result.err, "does not export"), 2u) << run.result.err;
  const size_t summary = run.result.err.find("xtrace: captured ");
  ASSERT_NE(summary, std::string::npos) << run.result.err;
  EXPECT_NE(run.result.err.find("does not export", summary), std::string::npos) << run.result.err;
  EXPECT_NE(run.result.err.find("zeCommandListHostSynchronize"), std::string::npos) << run.result.err;
  const RunResult report = RunCommand({kXtrace, "report", Path("run.capnp")}, {}, 60s);
  EXPECT_EQ(report.exit_code(), 0) << report.err;
  EXPECT_EQ(Count(report.err, "does not export"), 1u) << report.err;
  EXPECT_NE(report.err.find("xtrace report: warning: " + Path("run.capnp") + ": "),
            std::string::npos)
      << report.err;
}

// Attached after the workload looked up the driver's pointers and made its kernels, events
// and lists: the launches through the pointer are captured, and named by asking the process
// (its thread's first call after the attach is such a launch), measured from the counter-based
// events' timestamps.
TEST_F(LevelZeroPathsTest, SyclV2ShapeAttachedAfterItsLookupsOnTheHostsLoader) {
  const std::string log = Path("launches.tsv");
  const Run run = Attach({}, kWorkload, log, log);
  ExpectEveryLaunch(run, /*attached=*/true);
  EXPECT_NE(run.result.err.find("3 objects made before the attach were queried in the process"),
            std::string::npos)
      << run.result.err;
}

// Trixie's loader, under chroot: its own file is probed, and each newer entry point it has is.
TEST_F(LevelZeroPathsTest, SyclV2ShapeOnTrixiesLoaderUnderChroot) {
  const std::string root = TrixieRootOrSkip();
  if (root.empty()) return;
  const TreeCopy tree = CopyIntoTrixieTree(root, kWorkload);
  ASSERT_FALSE(tree.dir.empty());
  // The workload's driver is the copy in the tree; xtrace's own Level Zero (for the device
  // clock) is the host's.
  const Run run = Record({"/usr/sbin/chroot", root, "/usr/bin/env",
                          "ZE_ENABLE_ALT_DRIVERS=" + tree.inside + "/libxtrace_simze.so"},
                         tree.inside + "/ze_sycl_v2", tree.inside + "/launches.tsv",
                         tree.dir + "/launches.tsv", {}, {}, {"--verbose"});
  ExpectEveryLaunchOnTrixiesLoader(run, root);
  // Trixie's loader calls its own zeGet*ProcAddrTable at zeInitDrivers too; the process takes
  // no table itself, so no driver function the dispatch points to is probed.
  EXPECT_EQ(run.result.err.find("functions the loader dispatches to probed"), std::string::npos)
      << "driver functions probed in a process that took no table: " << run.result.err;
}

// Trixie's loader in a podman container whose root is the trixie tree (--rootfs, over an
// overlay so the tree stays as built): the loader the container maps is probed, and the
// workload, pid 1 in its own pid namespace, is traced from its first call under `record`.
TEST_F(LevelZeroPathsTest, SyclV2ShapeOnTrixiesLoaderInAPodmanContainer) {
  const std::string root = TrixieRootOrSkip();
  if (root.empty()) return;
  if (!PodmanOrSkip()) return;
  const std::string dir = CopyToBind(kWorkload);
  Run run = Record(PodmanRun(root, dir), "/xt/ze_sycl_v2", "/xt/launches.tsv",
                   dir + "/launches.tsv");
  // The workload says its own pid (1, in the container); on the host it is the one process
  // that launched with arguments.
  std::set<uint32_t> launching;
  for (const KernelLaunch& l : run.capture.launches)
    if (l.launch_kind == XT_LAUNCH_WITH_ARGUMENTS) launching.insert(l.pid);
  ASSERT_EQ(launching.size(), 1u) << run.result.err;
  run.pid = *launching.begin();
  ExpectEveryLaunchOnTrixiesLoader(run, "");
}

// Trixie's loader in a podman container sharing the host's pid namespace, attached after the
// workload looked up the driver's pointers and made its kernels, events and lists: as on the
// host's loader, every launch through a pointer is captured and named by asking the process,
// here with 1.9's object queries, which bookworm's loader lacks.
TEST_F(LevelZeroPathsTest, SyclV2ShapeAttachedAfterItsLookupsOnTrixiesLoader) {
  const std::string root = TrixieRootOrSkip();
  if (root.empty()) return;
  if (!PodmanOrSkip()) return;
  const std::string dir = CopyToBind(kWorkload);
  const Run run = Attach(PodmanRun(root, dir, {"--pid=host"}), "/xt/ze_sycl_v2",
                         "/xt/launches.tsv", dir + "/launches.tsv");
  ExpectEveryLaunch(run, /*attached=*/true);
  EXPECT_NE(run.result.err.find("objects made before the attach were queried in the process"),
            std::string::npos)
      << run.result.err;
}

// Trixie's loader under Charliecloud (Debian's charliecloud-runtime), as an HPC user runs a
// container: ch-run, unprivileged (user nobody), in user and mount namespaces of its own with
// the trixie tree as the image. The loader the workload maps there is probed.
TEST_F(LevelZeroPathsTest, SyclV2ShapeOnTrixiesLoaderUnderCharliecloud) {
  const std::string root = TrixieRootOrSkip();
  if (root.empty()) return;
  if (access("/usr/bin/ch-run", X_OK) != 0) {
    if (std::getenv("CI")) FAIL() << "ch-run is missing; scripts/install-deps.sh installs charliecloud-runtime";
    GTEST_SKIP() << "ch-run is not installed (charliecloud-runtime; scripts/install-deps.sh installs it)";
  }
  // The workload and the simulated GPU built here, bound at /mnt (a directory the image has);
  // the unprivileged user reads them and writes its launch log there.
  const std::string dir = CopyToBind(kWorkload);
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  fs::permissions(dir, fs::perms::all);
  const std::vector<std::string> ch_run = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                                           "--clear-groups", "/usr/bin/ch-run", "-b", dir + ":/mnt",
                                           "--set-env=ZE_ENABLE_ALT_DRIVERS=/mnt/libxtrace_simze.so",
                                           root, "--"};
  // Unprivileged user namespaces are what Charliecloud needs of the kernel.
  std::vector<std::string> probe = ch_run;
  probe.push_back("/bin/true");
  const RunResult can = RunCommand(probe, {"USER=nobody"});
  if (can.exit_code() != 0) {
    if (std::getenv("CI")) FAIL() << "ch-run cannot run here: " << can.err;
    GTEST_SKIP() << "ch-run cannot run here (unprivileged user namespaces?): " << can.err;
  }
  const Run run = Record(ch_run, "/mnt/ze_sycl_v2", "/mnt/launches.tsv", dir + "/launches.tsv",
                         {"USER=nobody"});
  ExpectEveryLaunchOnTrixiesLoader(run, "");
}

// Attached while the workload's graph was being recorded (its capture begun, none of its
// launches appended): the launches appended after the attach run nothing then, and each
// replay runs them, named, after one operation standing for what was recorded before. (The
// graph's kernel is made after the attach, and the process is not asked about the others:
// this test is about the graph.)
TEST_F(LevelZeroPathsTest, SyclV2ShapeAttachedInTheMiddleOfAGraphCaptureOnTheHostsLoader) {
  const std::string log = Path("launches.tsv");
  const Run run = Attach({}, kWorkload, log, log, {"--wait-in-graph-capture"}, {"--no-query"});
  ASSERT_EQ(run.result.exit_code(), 0) << run.result.out << run.result.err;
  ASSERT_GT(run.pid, 0u);
  ASSERT_EQ(run.expected.size(), kIterations * kLaunchesPerIteration);
  std::map<std::pair<uint32_t, uint64_t>, const ApiCall*> replays;
  for (const ApiCall& c : run.capture.calls)
    if (c.pid == run.pid && c.fn == XT_ZE_COMMAND_LIST_APPEND_GRAPH_EXP && c.result == 0)
      replays[{c.tid, c.start_ns}] = &c;
  ASSERT_EQ(replays.size(), size_t{kIterations});
  // The graph's launches were appended after the attach: seen once each, named.
  size_t graph_launches = 0;
  for (const KernelLaunch& l : run.capture.launches)
    if (l.pid == run.pid && InGraph(std::string(run.capture.strings.Get(l.kernel_name)))) {
      EXPECT_TRUE(l.name_known);
      ++graph_launches;
    }
  EXPECT_EQ(graph_launches, kGraphLaunches);
  std::map<uint64_t, size_t> graph_kernels, before;  // per replay
  for (const DeviceOp& op : run.capture.All<DeviceOp>()) {
    if (op.pid != run.pid || op.kind != DeviceOpKind::kKernel) continue;
    const std::string name(run.capture.strings.Get(op.name));
    const bool stands_for_before = name == "zeCommandListAppendGraphExp: commands recorded "
                                           "before the capture began (unknown)";
    if (!InGraph(name) && !stands_for_before) continue;
    auto replay = replays.find({op.submit_tid, op.submit_ns});
    ASSERT_NE(replay, replays.end()) << name << " ran outside a replay";
    EXPECT_EQ(op.command_list, replay->second->arg[3]) << "the executable graph replayed";
    EXPECT_TRUE(op.completion_seen) << name;
    ++(stands_for_before ? before : graph_kernels)[op.submit_ns];
  }
  EXPECT_EQ(graph_kernels.size(), size_t{kIterations});
  for (const auto& [at, n] : graph_kernels) EXPECT_EQ(n, kGraphLaunches) << "the replay at " << at;
  EXPECT_EQ(before.size(), size_t{kIterations});
  for (const auto& [at, n] : before) EXPECT_EQ(n, 1u) << "the replay at " << at;
  EXPECT_NE(run.result.err.find(std::to_string(kIterations) +
                                " replays of graphs whose recording began before the capture"),
            std::string::npos)
      << run.result.err;
}

// The other names of two calls: host functions appended by Intel's older
// zexCommandListAppendHostFunction, events made by core zeEventCounterBasedCreate (no loader
// here exports it: the driver's pointer), each captured as its counterpart is.
TEST_F(LevelZeroPathsTest, SyclV2ShapeByTheOlderNamesOnTheHostsLoader) {
  const std::string log = Path("launches.tsv");
  const Run run = Record({}, kWorkload, log, log, {}, {"--older-names"});
  ExpectEveryLaunch(run, /*attached=*/false, XT_ZE_EX_APPEND_HOST_FUNCTION);
  EXPECT_TRUE(Called(run, XT_ZE_EVENT_COUNTER_BASED_CREATE));
  EXPECT_FALSE(Called(run, XT_ZE_EX_COUNTER_BASED_EVENT_CREATE2));
  EXPECT_FALSE(Called(run, XT_ZE_APPEND_HOST_FUNCTION));
}

// The legacy adapter's shape on bookworm's loader, through its exports: cooperative launches,
// lists filled per submission and executed on a queue, its batch executed on the queue
// (1.8.12 has no zeCommandListImmediateAppendCommandListsExp).
// The loader calls its own zeGet*ProcAddrTable at zeInit: a process that takes no table
// itself has no driver function probed, and each of its calls traps once (at the export).
TEST_F(LevelZeroPathsTest, SyclLegacyShapeOnTheHostsLoader) {
  const std::string log = Path("launches.tsv");
  const Run run = Record({}, kLegacy, log, log, {}, {}, {"--verbose"});
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/false);
  EXPECT_EQ(run.result.err.find("functions the loader dispatches to probed"), std::string::npos)
      << "driver functions probed in a process that took no table: " << run.result.err;
}

// The same, every call after zeInit made through the tables the loader hands out
// (zeGet*ProcAddrTable): with one driver they are the simulated driver's own functions, which
// it does not export, so no probe by name reaches them. By default (no option) the process's
// first call of a getter holds it until xtrace has probed where the loader's dispatch points,
// for this process alone, and each call is recorded once although loader and driver are both
// probed.
TEST_F(LevelZeroPathsTest, SyclLegacyShapeThroughTheTablesOnTheHostsLoader) {
  const std::string log = Path("launches.tsv");
  const Run run = Record({}, kLegacy, log, log, {}, {"--through-tables"}, {"--verbose"});
  EXPECT_NE(run.result.out.find("tables=yes"), std::string::npos) << run.result.out;
  // Probed for this process alone ("xtrace: pid N: FILE: K functions ..."), not for every
  // process.
  const size_t probed = run.result.err.find("functions the loader dispatches to probed where they are");
  ASSERT_NE(probed, std::string::npos) << run.result.err;
  const size_t line = run.result.err.rfind('\n', probed) + 1;  // npos + 1 == 0
  const std::string alone = "xtrace: pid " + std::to_string(run.pid) + ": ";
  EXPECT_EQ(run.result.err.substr(line, alone.size()), alone) << run.result.err;
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/false);
  for (uint16_t fn : {XT_ZE_COMMAND_LIST_RESET, XT_ZE_COMMAND_LIST_CLOSE,
                      XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS, XT_ZE_FENCE_HOST_SYNCHRONIZE,
                      XT_ZE_EVENT_HOST_SYNCHRONIZE, XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP,
                      XT_ZE_DEVICE_GET_GLOBAL_TIMESTAMPS})
    EXPECT_TRUE(Called(run, fn)) << "call " << fn << " through a table is missing";
}

// One process that calls both ways, by default: its set-up and every other iteration through
// the loader's exports, the rest through the tables it took. Once it has taken them, each
// call through an export passes two probes (the export's and, for this process, the driver
// function's it jumps to) and is recorded once (the calls counted exactly in
// ExpectEveryLegacyLaunch); each call through a table passes one.
TEST_F(LevelZeroPathsTest, SyclLegacyShapeThroughTheTablesAndTheExportsOnTheHostsLoader) {
  const std::string log = Path("launches.tsv");
  const Run run = Record({}, kLegacy, log, log, {}, {"--through-tables", "--mixed"},
                         {"--verbose", "--hold-max", "60000"});
  EXPECT_NE(run.result.out.find("tables=yes"), std::string::npos) << run.result.out;
  EXPECT_NE(run.result.err.find("functions the loader dispatches to probed where they are"),
            std::string::npos)
      << "the driver's functions were probed too: " << run.result.err;
  EXPECT_NE(run.result.err.find("0 released by the bound"), std::string::npos) << run.result.err;
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/false);
}

// Through the loader's exports with --driver-tables: every call passes two probes, the
// export's and the driver function's it jumps to, and is recorded once (the launches and the
// calls counted exactly in ExpectEveryLegacyLaunch).
TEST_F(LevelZeroPathsTest, SyclLegacyShapeThroughTheExportsWithDriverTablesOnTheHostsLoader) {
  const std::string log = Path("launches.tsv");
  // The process is held at its zeInit until the driver's functions are probed: a bound no
  // loaded machine reaches, so that none of its calls comes first.
  const Run run = Record({}, kLegacy, log, log, {}, {},
                         {"--driver-tables", "--verbose", "--hold-max", "60000"});
  EXPECT_NE(run.result.out.find("tables=no"), std::string::npos) << run.result.out;
  EXPECT_NE(run.result.err.find("functions the loader dispatches to probed where they are"),
            std::string::npos)
      << "the driver's functions were probed too: " << run.result.err;
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/false);
}

// Attached before its zeInit (the driver not loaded yet), through the tables it takes after
// zeInit: the capture looks at the process again once zeInit has filled the loader's dispatch,
// holding it meanwhile, so that no call through a table comes before its probe.
TEST_F(LevelZeroPathsTest, SyclLegacyShapeThroughTheTablesAttachedBeforeItsZeInitOnTheHostsLoader) {
  const std::string log = Path("launches.tsv");
  const Run run = Attach({}, kLegacy, log, log, {"--through-tables", "--wait-before-init"},
                         {"--hold-max", "60000"});
  EXPECT_NE(run.result.err.find("0 released by the bound"), std::string::npos) << run.result.err;
  EXPECT_NE(run.result.out.find("tables=yes"), std::string::npos) << run.result.out;
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/false);
}

// Attached before its zeInit, which it calls as soon as the attach's first scan has probed it,
// while the scan goes on to eight more processes: holding is on from before that scan, so the
// process is held as its zeInit loads the driver and returns with the tables filled, and the
// scan serves those holds between two processes. When holding came on only after the first
// scan, the workload ran zeInit and took the tables unheld there, and its first calls through
// them went unprobed until the loop's next scan.
TEST_F(LevelZeroPathsTest, SyclLegacyShapeWhoseZeInitCameDuringTheFirstScan) {
  const std::string log = Path("launches.tsv");
  const Run run = Attach({}, kLegacy, log, log, {"--through-tables", "--wait-before-init"},
                         {"--driver-tables", "--hold-max", "60000"}, /*bystanders=*/8);
  EXPECT_NE(run.result.err.find("0 released by the bound"), std::string::npos) << run.result.err;
  EXPECT_NE(run.result.out.find("tables=yes"), std::string::npos) << run.result.out;
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/false);
}

// Attached once the workload has taken the tables, without --driver-tables: nothing in the
// process says it took them, so the capture says that such calls are not traced.
TEST_F(LevelZeroPathsTest, TablesTakenBeforeTheAttachAreSaidToBeMissedWithoutTheOption) {
  const std::string log = Path("launches.tsv");
  const Run run = Attach({}, kLegacy, log, log, {"--through-tables", "--wait-after-lookups"});
  EXPECT_NE(run.result.err.find("pid " + std::to_string(run.pid) +
                                " had initialised Level Zero before xtrace saw it"),
            std::string::npos)
      << run.result.err;
  EXPECT_NE(run.result.err.find("--driver-tables traces them"), std::string::npos);
}

// Attached once the workload has taken the tables, with --driver-tables: the functions they
// point to are found in the process's memory at the attach. (It makes its objects after the attach: asking a process
// about objects made before is the SYCL v2 shape's attach test's concern.)
TEST_F(LevelZeroPathsTest, SyclLegacyShapeThroughTheTablesAttachedAfterItsLookupsOnTheHostsLoader) {
  const std::string log = Path("launches.tsv");
  const Run run = Attach({}, kLegacy, log, log, {"--through-tables", "--wait-after-lookups"},
                         {"--driver-tables"});
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/false);
}

// Trixie's loader under chroot, through its tables: zeCommandListImmediateAppendCommandListsExp
// from zeGetCommandListExpProcAddrTable, the batch on the immediate list.
TEST_F(LevelZeroPathsTest, SyclLegacyShapeThroughTheTablesOnTrixiesLoaderUnderChroot) {
  const std::string root = TrixieRootOrSkip();
  if (root.empty()) return;
  const TreeCopy tree = CopyIntoTrixieTree(root, kLegacy);
  ASSERT_FALSE(tree.dir.empty());
  const Run run = Record({"/usr/sbin/chroot", root, "/usr/bin/env",
                          "ZE_ENABLE_ALT_DRIVERS=" + tree.inside + "/libxtrace_simze.so"},
                         tree.inside + "/ze_sycl_legacy", tree.inside + "/launches.tsv",
                         tree.dir + "/launches.tsv", {}, {"--through-tables"});
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/true);
  EXPECT_TRUE(Called(run, XT_ZE_COMMAND_LIST_IMMEDIATE_APPEND_COMMAND_LISTS_EXP));
}

// Trixie's loader in a podman container (sharing the host's pid namespace, so that the
// workload's pid is the one to attach to), attached once the workload has taken the tables:
// their functions are found through the container's loader. (It makes its objects after the
// attach: asking a process about objects made before is the host's tests' concern.)
TEST_F(LevelZeroPathsTest, SyclLegacyShapeThroughTheTablesAttachedAfterItsLookupsOnTrixiesLoader) {
  const std::string root = TrixieRootOrSkip();
  if (root.empty()) return;
  if (!PodmanOrSkip()) return;
  const std::string dir = CopyToBind(kLegacy);
  const Run run = Attach(PodmanRun(root, dir, {"--pid=host"}), "/xt/ze_sycl_legacy",
                         "/xt/launches.tsv", dir + "/launches.tsv",
                         {"--through-tables", "--wait-after-lookups"}, {"--driver-tables"});
  ExpectEveryLegacyLaunch(run, /*immediate_append=*/true);
}

}  // namespace
}  // namespace xtrace
