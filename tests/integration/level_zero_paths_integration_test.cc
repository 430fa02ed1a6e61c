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
// and counter-based events. SYCL's legacy adapter's shape is
// level_zero_paths_tables_integration_test.cc's. Needs root; skips with the reason elsewhere,
// fails under CI.
#include <gtest/gtest.h>

#include <string>

#include "level_zero_paths_fixture.h"

namespace xtrace::zepaths_test {
namespace {

// Bookworm's loader: the driver's pointers are probed in the driver, and the workload's
// fallbacks are captured as before. The entry points the loader lacks are no warning: none can
// be called through it, those the driver hands out are probed in the driver, and the simulated
// GPU, as Intel's driver, hands out none of the others; --verbose still says them all.
TEST_F(LevelZeroPathsTest, SyclV2ShapeOnTheHostsLoader) {
  const std::string log = Path("launches.tsv");
  const Run run = Record({}, kWorkload, log, log, {}, {}, {"--verbose"});
  ExpectEveryLaunch(run);
  EXPECT_TRUE(Called(run, XT_ZE_EX_COUNTER_BASED_EVENT_CREATE2))
      << "zexCounterBasedEventCreate2, called through the driver's pointer, is missing";
  EXPECT_TRUE(Called(run, XT_ZE_INIT));
  EXPECT_FALSE(Called(run, XT_ZE_INIT_DRIVERS));
  // Every entry point of the table that bookworm's 1.8.12 lacks, and no other, in one line,
  // once, at the attach.
  EXPECT_EQ(Count(run.result.err, "does not export"), 1u) << run.result.err;
  EXPECT_EQ(Count(run.result.err,
                  "libze_loader.so.1.8.0 does not export "
                  "zeCommandListAppendLaunchKernelWithArguments, "
                  "zeCommandListAppendLaunchKernelWithParameters, zeCommandListHostSynchronize, "
                  "zeInitDrivers, zeCommandListImmediateAppendCommandListsExp, "
                  "zeEventCounterBasedCreate (an older Level Zero loader): no call to them goes "
                  "through it; zeCommandListAppendLaunchKernelWithArguments, "
                  "zeCommandListAppendLaunchKernelWithParameters, zeEventCounterBasedCreate "
                  "probed in drivers"),
            1u)
      << run.result.err;
  const size_t summary = run.result.err.find("xtrace: captured ");
  ASSERT_NE(summary, std::string::npos) << run.result.err;
  EXPECT_EQ(run.result.err.find("does not export", summary), std::string::npos) << run.result.err;
  const RunResult report = RunCommand({kXtrace, "report", Path("run.capnp")}, {}, 60s);
  EXPECT_EQ(report.exit_code(), 0) << report.err;
  EXPECT_EQ(Count(report.err, "does not export"), 0u) << report.err;
}

// The same where the driver hands out zeCommandListHostSynchronize and
// zeCommandListImmediateAppendCommandListsExp, which bookworm's loader lacks and xtrace probes
// at loaders alone: a program can call them past the loader, untraced, and that is a warning,
// at the attach, in the closing summary and in the log, which `xtrace report` repeats.
TEST_F(LevelZeroPathsTest, SyclV2ShapeOnTheHostsLoaderWithADriverHandingOutItsMissingCalls) {
  const std::string log = Path("launches.tsv");
  const Run run = Record({}, kWorkload, log, log, {"XTRACE_SIMZE_HAND_OUT_CORE=1"});
  ExpectEveryLaunch(run);
  const std::string warning =
      "libze_loader.so.1.8.0 does not export zeCommandListHostSynchronize, "
      "zeCommandListImmediateAppendCommandListsExp (an older Level Zero loader), and the Level "
      "Zero driver hands them out by pointer (zeDriverGetExtensionFunctionAddress): a call "
      "through such a pointer, past the loader, is not traced";
  EXPECT_EQ(Count(run.result.err, "does not export"), 2u) << run.result.err;
  EXPECT_EQ(Count(run.result.err, warning), 2u) << run.result.err;
  const size_t summary = run.result.err.find("xtrace: captured ");
  ASSERT_NE(summary, std::string::npos) << run.result.err;
  EXPECT_NE(run.result.err.find(warning, summary), std::string::npos) << run.result.err;
  const RunResult report = RunCommand({kXtrace, "report", Path("run.capnp")}, {}, 60s);
  EXPECT_EQ(report.exit_code(), 0) << report.err;
  EXPECT_EQ(Count(report.err, "does not export"), 1u) << report.err;
  EXPECT_NE(report.err.find("xtrace report: warning: " + Path("run.capnp") + ": "),
            std::string::npos)
      << report.err;
  EXPECT_NE(report.err.find(warning), std::string::npos) << report.err;
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
  // It took no table: nothing trixie's loader keeps of its own dispatch passes for one.
  EXPECT_EQ(run.result.err.find("took Level Zero function tables"), std::string::npos)
      << run.result.err;
  EXPECT_NE(run.result.err.find("holds no function table of its loader's in its memory"),
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

}  // namespace
}  // namespace xtrace::zepaths_test
