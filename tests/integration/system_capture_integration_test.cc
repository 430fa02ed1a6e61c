// Integration tests of captures that find their processes themselves: --system with processes
// started later (one in its own mount and pid namespace with a loader only it can see),
// --cgroup and --container, a late dlopen, children of `record`, and a collector in a pid
// namespace of its own (a pod sidecar). Real BPF, the real loader, the simulated GPU; checked
// against the workloads' own launch logs. Needs root; skips with the reason elsewhere, fails
// under CI. Other tests may run workloads on this machine at the same time: every check is
// about the processes a test started, never about "nothing else".
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "capture_steps.h"
#include "log_contents.h"
#include "root_fixture.h"
#include "scratch_cgroup.h"
#include "subprocess.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
using testing::EndWorkloads;
using testing::FindChildPid;
using testing::LoaderBreakpoints;
using testing::LoaderPathOf;
using testing::LogContents;
using testing::ReadLaunchLog;
using testing::ReadLogContents;
using testing::PidFromReadyLine;
using testing::RootTest;
using testing::RunCommand;
using testing::InCgroup;
using testing::ScratchCgroup;
using testing::Sorted;
using testing::StopCapture;
using testing::Subprocess;
using testing::WaitAttached;

const std::string kXtrace = XTRACE_BIN;
const std::string kWorkload = ZE_WORKLOAD_BIN;
const std::string kLateLoad = ZE_LATELOAD_BIN;
const std::string kSimDriver = "ZE_ENABLE_ALT_DRIVERS=" SIMZE_LIB;
const std::string kIttWorkload = ITT_WORKLOAD_BIN;
const std::string kIttCollector = "INTEL_LIBITTNOTIFY64=" ITT_COLLECTOR_LIB;

class SystemCaptureTest : public RootTest {
 protected:
  SystemCaptureTest() : RootTest("capture", "systest") {}
  std::string Unique(const std::string& what) const {
    return "xtrace-itest-" + what + "-" + std::to_string(getpid());
  }
};

TEST_F(SystemCaptureTest, SystemCaptureTracesLaterProcessesIncludingOneInItsOwnNamespaces) {
  const std::string out = Path("system.capnp"), host_log = Path("host.tsv"),
                    ns_log = Path("ns.tsv"), ns_lib = Path("nslib");
  ASSERT_EQ(::mkdir(ns_lib.c_str(), 0755), 0);
  Subprocess xtrace({kXtrace, "record", "--system", "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("tracing every process", 60s)) << xtrace.stderr_text();

  // Both start after the capture began. Kernels are re-created each round, so their names
  // are known whenever the probes went in.
  Subprocess host({kWorkload, "--wait-for-signal", "--recreate-kernels", "--iterations", "3",
                   "--launch-log", host_log},
                  {kSimDriver});
  const uint32_t host_pid = PidFromReadyLine(host.WaitStdout("ready", 30s));
  ASSERT_GT(host_pid, 0u) << host.stderr_text();
  const std::string loader = LoaderPathOf(host_pid);
  ASSERT_FALSE(loader.empty());

  // A private tmpfs in a new mount namespace holds the loader copy: another inode, at a path
  // that exists only in there; the workload is pid 1 of a new pid namespace.
  const std::string script = "mount -t tmpfs xtrace-ns " + ns_lib + " && cp " + loader + " " +
                             ns_lib + "/libze_loader.so.1 && LD_LIBRARY_PATH=" + ns_lib +
                             " exec " + kWorkload +
                             " --wait-for-signal --recreate-kernels --iterations 2 --launch-log " +
                             ns_log;
  Subprocess ns({"/usr/bin/unshare", "--mount", "--pid", "--fork", "/bin/sh", "-c", script},
                {kSimDriver});
  ASSERT_EQ(PidFromReadyLine(ns.WaitStdout("ready", 30s)), 1u) << ns.stderr_text();
  const uint32_t ns_pid = FindChildPid(static_cast<uint32_t>(ns.pid()));
  ASSERT_GT(ns_pid, 0u);
  EXPECT_EQ(LoaderPathOf(ns_pid), ns_lib + "/libze_loader.so.1");
  EXPECT_TRUE(std::filesystem::is_empty(ns_lib)) << "the copy should be invisible from here";

  ASSERT_TRUE(WaitAttached(xtrace, {host_pid, ns_pid}, 30s)) << xtrace.stderr_text();
  host.Signal(SIGUSR1);
  kill(static_cast<pid_t>(ns_pid), SIGUSR1);
  ASSERT_TRUE(host.WaitStdout("round 1", 60s)) << host.stderr_text();
  ASSERT_TRUE(ns.WaitStdout("round 1", 60s)) << ns.stderr_text();
  host.Signal(SIGTERM);
  kill(static_cast<pid_t>(ns_pid), SIGTERM);
  host.Wait(30s);
  ns.Wait(30s);
  ASSERT_TRUE(StopCapture(xtrace)) << xtrace.stderr_text();

  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  EXPECT_TRUE(c.complete);
  const auto host_expected = ReadLaunchLog(host_log);
  ASSERT_EQ(host_expected.size(), 15u);
  EXPECT_EQ(Sorted(c.launches.count(host_pid) ? c.launches.at(host_pid) : std::vector<std::string>{}),
            host_expected);
  // The namespaced workload logs tids of its own namespace; compare names and group counts.
  const auto ns_expected = ReadLaunchLog(ns_log, true);
  ASSERT_EQ(ns_expected.size(), 10u);
  EXPECT_EQ(Sorted(c.launches_no_tid.count(ns_pid) ? c.launches_no_tid.at(ns_pid)
                                                   : std::vector<std::string>{}),
            ns_expected);

  ASSERT_TRUE(c.processes.count(host_pid));
  ASSERT_TRUE(c.processes.count(ns_pid));
  EXPECT_EQ(c.processes.at(host_pid).ns_pid, host_pid);
  EXPECT_EQ(c.processes.at(ns_pid).ns_pid, 1u);
  EXPECT_EQ(c.processes.at(ns_pid).comm, "ze_workload");
  EXPECT_NE(c.processes.at(ns_pid).command_line.find("--iterations 2"), std::string::npos);

  // The per-process summary, on stderr and in the log.
  EXPECT_TRUE(std::regex_search(
      xtrace.stderr_text(),
      std::regex("pid " + std::to_string(ns_pid) + " \\(ze_workload\\):.* Level Zero [0-9]+, dropped 0")))
      << xtrace.stderr_text();
  ASSERT_TRUE(c.summary.has_value());
  bool host_in_summary = false;
  for (const auto& p : c.summary->process_stats)
    if (p.pid == host_pid) {
      host_in_summary = true;
      const std::map<std::string, uint64_t> by_source(p.records_by_source.begin(),
                                                      p.records_by_source.end());
      ASSERT_TRUE(by_source.count("Level Zero"));
      EXPECT_GE(by_source.at("Level Zero"), 15u + 6u);  // launches + kernel creations
      EXPECT_EQ(p.dropped, 0u);
    }
  EXPECT_TRUE(host_in_summary);
}

TEST_F(SystemCaptureTest, SystemCaptureTakesIttLabelsAndLaunchesOfALaterProcess) {
  // A process started with the ITT collector: its labels and its launches, from the start,
  // each counted under its source in the per-process summary.
  const std::string out = Path("itt.capnp"), log = Path("itt.tsv");
  Subprocess xtrace({kXtrace, "record", "--system", "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("tracing every process", 60s)) << xtrace.stderr_text();
  Subprocess workload({kIttWorkload, "--ze", "--threads", "2", "--iterations", "3",
                       "--wait-for-signal", "--log", log},
                      {kSimDriver, kIttCollector});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u) << workload.stderr_text();
  ASSERT_TRUE(WaitAttached(xtrace, {pid}, 30s)) << xtrace.stderr_text();
  // Both sources are in place before the round (the collector is found with the loader).
  for (int i = 0; i < 100 && xtrace.stderr_text().find("ITT collector") == std::string::npos; ++i)
    xtrace.WaitStderr("ITT collector", 100ms);
  workload.Signal(SIGUSR1);
  ASSERT_TRUE(workload.WaitStdout("round 1", 60s)) << workload.stderr_text();
  workload.Signal(SIGTERM);
  workload.Wait(30s);
  ASSERT_TRUE(StopCapture(xtrace)) << xtrace.stderr_text();

  std::vector<std::string> labels, launches;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    // <round>\t<tid>\t<kind>\t<domain>\t<name>
    const size_t kind = line.find('\t', line.find('\t') + 1) + 1;
    const size_t domain = line.find('\t', kind) + 1;
    if (line.compare(kind, 6, "launch") == 0) launches.push_back(line.substr(domain));
    else labels.push_back(line.substr(domain));
  }
  ASSERT_EQ(labels.size(), 42u);
  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  EXPECT_EQ(Sorted(c.itt_labels.count(pid) ? c.itt_labels.at(pid) : std::vector<std::string>{}),
            Sorted(labels));
  EXPECT_EQ(c.launches.count(pid) ? c.launches.at(pid).size() : 0u, launches.size());
  ASSERT_TRUE(c.summary.has_value());
  std::map<std::string, uint64_t> by_source;
  for (const auto& p : c.summary->process_stats)
    if (p.pid == pid) by_source.insert(p.records_by_source.begin(), p.records_by_source.end());
  EXPECT_GT(by_source["ITT"], 0u);
  EXPECT_GT(by_source["Level Zero"], 0u);
}

TEST_F(SystemCaptureTest, CgroupCaptureTracesOnlyProcessesInItsCgroup) {
  ScratchCgroup cgroup(Unique("cgroup"));
  if (cgroup.path().empty()) GTEST_SKIP() << "cgroup v2 not usable here: " << cgroup.why_not();
  const std::string out = Path("cgroup.capnp"), in_log = Path("in.tsv"), out_log = Path("out.tsv");
  Subprocess xtrace({kXtrace, "attach", "--cgroup", cgroup.path(), "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("tracing every process in cgroup", 60s)) << xtrace.stderr_text();

  Subprocess inside(InCgroup(cgroup.path(), {kWorkload, "--wait-for-signal", "--recreate-kernels",
                                             "--iterations", "2", "--launch-log", in_log}),
                    {kSimDriver});
  Subprocess outside({kWorkload, "--wait-for-signal", "--recreate-kernels", "--iterations", "2",
                      "--launch-log", out_log},
                     {kSimDriver});
  const uint32_t in_pid = PidFromReadyLine(inside.WaitStdout("ready", 30s));
  const uint32_t out_pid = PidFromReadyLine(outside.WaitStdout("ready", 30s));
  ASSERT_GT(in_pid, 0u) << inside.stderr_text();
  ASSERT_GT(out_pid, 0u) << outside.stderr_text();
  ASSERT_TRUE(WaitAttached(xtrace, {in_pid}, 30s)) << xtrace.stderr_text();
  for (Subprocess* w : {&inside, &outside}) w->Signal(SIGUSR1);
  ASSERT_TRUE(inside.WaitStdout("round 1", 60s));
  ASSERT_TRUE(outside.WaitStdout("round 1", 60s));
  EndWorkloads({&inside, &outside});
  ASSERT_TRUE(StopCapture(xtrace)) << xtrace.stderr_text();

  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  ASSERT_EQ(ReadLaunchLog(out_log).size(), 10u);
  EXPECT_EQ(c.launches.count(out_pid), 0u) << "a process outside the cgroup was traced";
  EXPECT_EQ(c.processes.count(out_pid), 0u);
  EXPECT_EQ(xtrace.stderr_text().find("attached to pid " + std::to_string(out_pid) + " "),
            std::string::npos);
  const auto expected = ReadLaunchLog(in_log);
  ASSERT_EQ(expected.size(), 10u);
  EXPECT_EQ(Sorted(c.launches.count(in_pid) ? c.launches.at(in_pid) : std::vector<std::string>{}),
            expected);
  ASSERT_TRUE(c.processes.count(in_pid));
  EXPECT_EQ(c.processes.at(in_pid).cgroup, cgroup.HierarchyPath(cgroup.path()));
  EXPECT_EQ(c.processes.at(in_pid).container_id, "");
}

TEST_F(SystemCaptureTest, ContainerIdSelectsItsCgroupAndNamesTheContainer) {
  ScratchCgroup parent(Unique("container"));
  if (parent.path().empty()) GTEST_SKIP() << "cgroup v2 not usable here: " << parent.why_not();
  // A cgroup named the way Docker's systemd driver names a container's.
  std::mt19937_64 random(std::random_device{}());
  char id[65];
  for (int i = 0; i < 64; i += 16)
    std::snprintf(id + i, 17, "%016llx", static_cast<unsigned long long>(random()));
  const std::string container_dir = parent.path() + "/docker-" + std::string(id) + ".scope";
  ASSERT_EQ(::mkdir(container_dir.c_str(), 0755), 0) << std::strerror(errno);

  auto unknown = RunCommand({kXtrace, "attach", "--container", "0123456789ab", "-o", Path("x.capnp")});
  EXPECT_EQ(unknown.exit_code(), 1);
  EXPECT_NE(unknown.err.find("no container with that id"), std::string::npos) << unknown.err;

  const std::string out = Path("container.capnp"), log = Path("launches.tsv");
  Subprocess xtrace({kXtrace, "attach", "--container", std::string(id, 12), "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("tracing every process in container", 60s)) << xtrace.stderr_text();
  Subprocess workload(InCgroup(container_dir, {kWorkload, "--wait-for-signal", "--recreate-kernels",
                                               "--iterations", "2", "--launch-log", log}),
                      {kSimDriver});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u) << workload.stderr_text();
  ASSERT_TRUE(WaitAttached(xtrace, {pid}, 30s)) << xtrace.stderr_text();
  workload.Signal(SIGUSR1);
  ASSERT_TRUE(workload.WaitStdout("round 1", 60s));
  workload.Signal(SIGTERM);
  workload.Wait(30s);
  ASSERT_TRUE(StopCapture(xtrace)) << xtrace.stderr_text();

  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  EXPECT_EQ(Sorted(c.launches.count(pid) ? c.launches.at(pid) : std::vector<std::string>{}),
            ReadLaunchLog(log));
  ASSERT_TRUE(c.processes.count(pid));
  EXPECT_EQ(c.processes.at(pid).container_id, std::string(id));
  EXPECT_EQ(c.processes.at(pid).cgroup, parent.HierarchyPath(container_dir));
}

// A --comm capture puts probes into the selected process alone, by default as with
// --probes-per-process: a process outside the scope that maps the same loader file holds no
// breakpoint, and the selected one is still captured whole. With --probes-per-file the
// process outside holds the file's breakpoints too (and traps on them, for nothing).
TEST_F(SystemCaptureTest, ProbesPerProcessLeaveProcessesOutsideTheScopeUntouched) {
  for (const std::string option : {"", "--probes-per-process", "--probes-per-file"}) {
    const bool per_process = option != "--probes-per-file";
    SCOPED_TRACE(option.empty() ? "the default" : option);
    const std::string tag = option.empty() ? "default" : per_process ? "own" : "file";
    const std::string out = Path(tag + ".capnp"), in_log = Path(tag + "-in.tsv"),
                      out_log = Path(tag + "-out.tsv");
    std::vector<std::string> argv = {kXtrace, "attach", "--comm", "ze_workload", "-o", out};
    if (!option.empty()) argv.push_back(option);
    Subprocess xtrace(argv);
    ASSERT_TRUE(xtrace.WaitStderr("tracing every process named ze_workload", 60s))
        << xtrace.stderr_text();
    Subprocess inside({kWorkload, "--wait-for-signal", "--recreate-kernels", "--iterations", "2",
                       "--launch-log", in_log},
                      {kSimDriver});
    // Another name, the same loader file.
    Subprocess outside({kLateLoad, "--launches", "6", "--pause-after-load", "--launch-log", out_log},
                       {kSimDriver});
    const uint32_t in_pid = PidFromReadyLine(inside.WaitStdout("ready", 30s));
    const uint32_t out_pid = PidFromReadyLine(outside.WaitStdout("ready", 30s));
    ASSERT_GT(in_pid, 0u) << inside.stderr_text();
    ASSERT_GT(out_pid, 0u) << outside.stderr_text();
    outside.Signal(SIGUSR1);  // dlopen the loader, set up
    ASSERT_TRUE(outside.WaitStdout("loaded", 30s)) << outside.stderr_text();
    ASSERT_TRUE(WaitAttached(xtrace, {in_pid}, 30s)) << xtrace.stderr_text();
    ASSERT_EQ(LoaderPathOf(in_pid), LoaderPathOf(out_pid));

    auto in_bps = LoaderBreakpoints(in_pid);
    auto out_bps = LoaderBreakpoints(out_pid);
    ASSERT_TRUE(in_bps.ok()) << in_bps.status().message();
    ASSERT_TRUE(out_bps.ok()) << out_bps.status().message();
    EXPECT_GT(*in_bps, 0u);
    if (per_process)
      EXPECT_EQ(*out_bps, 0u) << "a process outside the scope holds probes";
    else
      EXPECT_EQ(*out_bps, *in_bps) << "the file's probes are in every process that maps it";

    inside.Signal(SIGUSR1);
    outside.Signal(SIGUSR1);
    ASSERT_TRUE(inside.WaitStdout("round 1", 60s));
    ASSERT_TRUE(outside.WaitStdout("round 1 launches=6", 60s)) << outside.stderr_text();
    EndWorkloads({&inside, &outside});
    ASSERT_TRUE(StopCapture(xtrace)) << xtrace.stderr_text();

    const LogContents c = ReadLogContents(out);
    ASSERT_TRUE(c.readable) << c.error;
    EXPECT_EQ(c.launches.count(out_pid), 0u) << "a process outside the scope was traced";
    const auto expected = ReadLaunchLog(in_log);
    ASSERT_EQ(expected.size(), 10u);
    EXPECT_EQ(Sorted(c.launches.count(in_pid) ? c.launches.at(in_pid) : std::vector<std::string>{}),
              expected);
  }
}

TEST_F(SystemCaptureTest, LateDlopenIsCapturedFromTheFirstCallAfterIt) {
  const std::string out = Path("late.capnp"), log = Path("launches.tsv");
  // A name filter, so nothing is probed before the process maps the loader itself.
  Subprocess xtrace({kXtrace, "attach", "--comm", "ze_lateload", "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("tracing every process named ze_lateload", 60s))
      << xtrace.stderr_text();
  Subprocess late({kLateLoad, "--launches", "6", "--pause-after-load", "--launch-log", log},
                  {kSimDriver});
  const uint32_t pid = PidFromReadyLine(late.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u) << late.stderr_text();
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(xtrace.stderr_text().find("attached to pid " + std::to_string(pid)), std::string::npos)
      << "attached before the loader was loaded";

  late.Signal(SIGUSR1);  // dlopen("libze_loader.so.1") and set up
  ASSERT_TRUE(late.WaitStdout("loaded", 30s)) << late.stderr_text();
  ASSERT_TRUE(WaitAttached(xtrace, {pid}, 30s)) << xtrace.stderr_text();
  late.Signal(SIGUSR1);
  ASSERT_TRUE(late.WaitStdout("round 1 launches=6", 30s)) << late.stderr_text();
  late.Signal(SIGTERM);
  late.Wait(30s);
  ASSERT_TRUE(StopCapture(xtrace)) << xtrace.stderr_text();

  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  const auto expected = ReadLaunchLog(log);
  ASSERT_EQ(expected.size(), 6u);
  // The kernels were created right after the dlopen, before anything waited for the attach:
  // held at the linker's notification, the process is probed before its first call, so
  // every launch carries its kernel's name.
  EXPECT_EQ(Sorted(c.launches.count(pid) ? c.launches.at(pid) : std::vector<std::string>{}),
            expected)
      << xtrace.stderr_text();
}

TEST_F(SystemCaptureTest, RecordFollowsChildrenUnlessToldNot) {
  const std::string out = Path("children.capnp"), log1 = Path("one.tsv"), log2 = Path("two.tsv");
  const std::string script = kWorkload + " --iterations 2 --launch-log " + log1 + " & " +
                             kWorkload + " --iterations 3 --launch-log " + log2 + "; wait";
  auto r = RunCommand({kXtrace, "record", "-o", out, "--", "/bin/sh", "-c", script}, {kSimDriver},
                      120s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  std::vector<std::string> got, want = ReadLaunchLog(log1);
  for (const auto& l : ReadLaunchLog(log2)) want.push_back(l);
  size_t workloads = 0;
  for (const auto& [pid, launches] : c.launches) {
    got.insert(got.end(), launches.begin(), launches.end());
    workloads += c.processes.count(pid) && c.processes.at(pid).comm == "ze_workload";
  }
  EXPECT_EQ(want.size(), 25u);
  EXPECT_EQ(Sorted(got), Sorted(want));
  EXPECT_EQ(workloads, 2u);

  // The shell alone never calls Level Zero; its child, which does, is not followed.
  const std::string child_log = Path("child.tsv");
  auto alone = RunCommand({kXtrace, "record", "--no-follow-children", "-o", Path("alone.capnp"),
                           "--", "/bin/sh", "-c",
                           kWorkload + " --iterations 1 --launch-log " + child_log + "; true"},
                          {kSimDriver}, 120s);
  EXPECT_EQ(alone.exit_code(), 0) << alone.err;
  EXPECT_EQ(ReadLaunchLog(child_log).size(), 5u);
  const LogContents a = ReadLogContents(Path("alone.capnp"));
  ASSERT_TRUE(a.readable) << a.error;
  EXPECT_TRUE(a.launches.empty());
  EXPECT_NE(alone.err.find("captured 0 kernel launches"), std::string::npos) << alone.err;
}

TEST_F(SystemCaptureTest, CollectorInItsOwnPidNamespaceTracesOnlyThatNamespace) {
  // As a pod sidecar with shareProcessNamespace: xtrace and its targets share a pid
  // namespace that is not the machine's; a process outside it must not be traced, and pids
  // are the ones the collector sees.
  const std::string out = Path("sidecar.capnp"), in_log = Path("in.tsv"), host_log = Path("host.tsv");
  // The workload enters through nsenter, which stops itself when its child is held: xtrace
  // continues it with the child (HoldTest.AParentThatStopsWithItsHeldChildGoesOnWithIt), or
  // the child would stay unreaped and xtrace, the namespace's init, could not exit.
  Subprocess unshare({"/usr/bin/unshare", "--pid", "--fork", "--mount-proc", kXtrace, "record",
                      "--system", "-o", out});
  ASSERT_TRUE(unshare.WaitStderr("tracing every process", 60s)) << unshare.stderr_text();
  const uint32_t xtrace_pid = FindChildPid(static_cast<uint32_t>(unshare.pid()));
  ASSERT_GT(xtrace_pid, 0u);

  Subprocess inside({"/usr/bin/nsenter", "--target", std::to_string(xtrace_pid), "--pid",
                     "--mount", "--", kWorkload, "--wait-for-signal", "--recreate-kernels",
                     "--iterations", "2", "--launch-log", in_log},
                    {kSimDriver});
  Subprocess host({kWorkload, "--wait-for-signal", "--recreate-kernels", "--iterations", "2",
                   "--launch-log", host_log},
                  {kSimDriver});
  const uint32_t inner_pid = PidFromReadyLine(inside.WaitStdout("ready", 30s));
  const uint32_t host_pid = PidFromReadyLine(host.WaitStdout("ready", 30s));
  ASSERT_GT(inner_pid, 0u) << inside.stderr_text();
  ASSERT_GT(host_pid, 0u);
  const uint32_t inner_outer_pid = FindChildPid(static_cast<uint32_t>(inside.pid()));
  ASSERT_GT(inner_outer_pid, 0u);
  ASSERT_NE(inner_pid, inner_outer_pid) << "the workload should be in the collector's namespace";
  ASSERT_TRUE(WaitAttached(unshare, {inner_pid}, 30s)) << unshare.stderr_text();

  kill(static_cast<pid_t>(inner_outer_pid), SIGUSR1);
  host.Signal(SIGUSR1);
  ASSERT_TRUE(inside.WaitStdout("round 1", 60s));
  ASSERT_TRUE(host.WaitStdout("round 1", 60s));
  kill(static_cast<pid_t>(inner_outer_pid), SIGTERM);
  host.Signal(SIGTERM);
  inside.Wait(30s);
  host.Wait(30s);
  kill(static_cast<pid_t>(xtrace_pid), SIGINT);
  auto status = unshare.Wait(60s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << unshare.stderr_text();

  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  ASSERT_EQ(c.launches.size(), 1u) << "only the process in the namespace is traced";
  ASSERT_EQ(c.launches.begin()->first, inner_pid);
  // Its tids, too, are the namespace's, as in its own launch log.
  EXPECT_EQ(Sorted(c.launches.begin()->second), ReadLaunchLog(in_log));
  ASSERT_EQ(ReadLaunchLog(host_log).size(), 10u);
}

}  // namespace
}  // namespace xtrace
