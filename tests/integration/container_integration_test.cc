// Integration tests with real containers (Debian's podman and runc): each image carries its
// own copies of the workload, the Level Zero loader, the simulated GPU driver and ld.so, so the
// container's libraries are files xtrace has never seen, as on a Kubernetes node. Checked
// against the workloads' own launch logs, written to a directory bind-mounted from the test's
// scratch directory: attaching to a running container, one container's capture leaving another
// untouched, ITT in a container, containers that start while a capture runs (traced from their
// first call, every time), and xtrace itself in a container beside its workload, as a pod's
// sidecar. Needs root; skips with the reason elsewhere, fails under CI.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "capture_steps.h"
#include "container_image.h"
#include "log_contents.h"
#include "root_fixture.h"
#include "subprocess.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
using testing::ContainerId;
using testing::ContainerImage;
using testing::ContainerPid;
using testing::EndWorkloads;
using testing::LoaderBreakpoints;
using testing::LogContents;
using testing::PidFromReadyLine;
using testing::ReadLaunchLog;
using testing::ReadLogContents;
using testing::RootTest;
using testing::Sorted;
using testing::StopCapture;
using testing::Subprocess;
using testing::WaitAttached;

const std::string kXtrace = XTRACE_BIN;
const std::string kWorkload = ZE_WORKLOAD_BIN;
const std::string kSimze = SIMZE_LIB;
const std::string kIttWorkload = ITT_WORKLOAD_BIN;
const std::string kIttCollector = ITT_COLLECTOR_LIB;

// "<domain>\t<name>" of every label a workload's label log lists
// ("<round>\t<tid>\t<kind>\t<domain>\t<name>" lines), sorted.
std::vector<std::string> LabelsOfLog(const std::string& path) {
  std::vector<std::string> labels;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    size_t at = 0;
    for (int field = 0; field < 3 && at != std::string::npos; ++field) at = line.find('\t', at) + 1;
    if (at != 0 && at != std::string::npos) labels.push_back(line.substr(at));
  }
  return Sorted(labels);
}

class ContainerTest : public RootTest {
 protected:
  ContainerTest() : RootTest("container capture", "ctrtest") {}
  void SetUp() override {
    RootTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!testing::ContainerRuntimeAvailable()) {
      if (getenv("CI")) FAIL() << "podman and runc are missing; scripts/install-deps.sh installs them";
      GTEST_SKIP() << "podman and runc are not installed (scripts/install-deps.sh installs them)";
    }
    ASSERT_EQ(::mkdir(Path("out").c_str(), 0777), 0);
  }
  // An image of the workload on the simulated GPU; `scratch` names its build directory.
  std::unique_ptr<ContainerImage> WorkloadImage(const std::string& scratch) {
    ::mkdir(Path(scratch).c_str(), 0755);
    return std::make_unique<ContainerImage>(Path(scratch), std::vector<std::string>{kWorkload},
                                            std::vector<std::string>{kSimze});
  }
  // A signal-driven workload in a new container; its launch log goes to out/<log>.
  std::vector<std::string> WorkloadArgv(const ContainerImage& image, const std::string& name,
                                        const std::string& log) {
    return image.RunArgv(name, {"ZE_ENABLE_ALT_DRIVERS=" + kSimze}, {Path("out") + ":/out"},
                         {kWorkload, "--wait-for-signal", "--recreate-kernels", "--iterations", "2",
                          "--launch-log", "/out/" + log});
  }
  // A run of the workload in a new container that goes straight to work (no waiting for a
  // signal: zeInit and zeKernelCreate follow its exec at once, the kernels are never created
  // again), run to its end. Its launch log is out/<what>.tsv.
  struct FinishedRun {
    std::string what, id;  // id: the container's, from --cidfile
    uint32_t pid = 0;      // as the workload's getpid() said it ("ready <pid>")
    testing::RunResult result;
  };
  FinishedRun RunToEnd(const ContainerImage& image, const std::string& what,
                       std::vector<std::string> options = {}) {
    FinishedRun run{what, "", 0, {}};
    const std::string cidfile = Path(what + ".cid");
    options.push_back("--cidfile=" + cidfile);
    run.result = testing::RunCommand(
        image.RunArgv(Name(what), {"ZE_ENABLE_ALT_DRIVERS=" + kSimze}, {Path("out") + ":/out"},
                      {kWorkload, "--iterations", "2", "--launch-log", "/out/" + what + ".tsv"},
                      options),
        image.PodmanEnv(), 90s);
    std::ifstream(cidfile) >> run.id;
    const size_t ready = run.result.out.find("ready ");
    if (ready != std::string::npos)
      run.pid = PidFromReadyLine(run.result.out.substr(ready, run.result.out.find('\n', ready) - ready));
    return run;
  }
  // That `pid` in capture `c` is `run`'s workload traced from its first call: its zeInit, and
  // every launch with its kernel's name (created right at start), exactly as it logged them.
  void ExpectTracedFromTheFirstCall(const LogContents& c, uint32_t pid, const FinishedRun& run) {
    SCOPED_TRACE(run.what + ", pid " + std::to_string(pid));
    const auto expected = ReadLaunchLog(Path("out/" + run.what + ".tsv"), /*strip_tid=*/true);
    ASSERT_EQ(expected.size(), 10u) << run.result.out << run.result.err;
    const auto got = Sorted(c.launches_no_tid.count(pid) ? c.launches_no_tid.at(pid)
                                                         : std::vector<std::string>{});
    EXPECT_EQ(got, expected);
    for (const auto& launch : got)
      EXPECT_NE(launch.rfind("kernel@", 0), 0u) << "a kernel created before the probes: " << launch;
    const auto& calls = c.api_calls.count(pid) ? c.api_calls.at(pid) : std::vector<uint16_t>{};
    EXPECT_NE(std::find(calls.begin(), calls.end(), XT_ZE_INIT), calls.end())
        << "its first call, zeInit, is missing (" << calls.size() << " calls captured)";
    ASSERT_TRUE(c.processes.count(pid));
    EXPECT_EQ(c.processes.at(pid).comm, "ze_workload");
    EXPECT_NE(c.processes.at(pid).command_line.find("--launch-log /out/" + run.what + ".tsv"),
              std::string::npos)
        << c.processes.at(pid).command_line;
    EXPECT_EQ(c.processes.at(pid).container_id, run.id);
  }
  // A container name for this test; the container is removed at the end whatever happened.
  std::string Name(const std::string& what) {
    names_.push_back("xtrace-itest-" + what + "-" + std::to_string(getpid()));
    return names_.back();
  }
  void TearDown() override {
    for (const auto& name : names_)
      (void)testing::RunCommand({"/usr/bin/podman", "rm", "-f", "-t", "0", name});
    RootTest::TearDown();
  }
  // Waits until the container `name` runs and its workload said it is ready; its host pid.
  uint32_t StartedPid(Subprocess& podman, const ContainerImage& image, const std::string& name) {
    if (!podman.WaitStdout("ready", 60s)) return 0;
    return ContainerPid(image, name);
  }

 private:
  std::vector<std::string> names_;
};

TEST_F(ContainerTest, AttachByContainerIdTracesARunningContainer) {
  auto image = WorkloadImage("image");
  ASSERT_FALSE(image->tag().empty()) << image->error();
  const std::string name = Name("attach");
  Subprocess container(WorkloadArgv(*image, name, "launches.tsv"), image->PodmanEnv());
  const uint32_t pid = StartedPid(container, *image, name);
  ASSERT_GT(pid, 0u) << container.stderr_text();
  const std::string id = ContainerId(*image, name);
  ASSERT_EQ(id.size(), 64u) << id;

  const std::string out = Path("attach.capnp");
  Subprocess xtrace({kXtrace, "attach", "--container", id.substr(0, 12), "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("tracing every process in container", 60s)) << xtrace.stderr_text();
  ASSERT_TRUE(WaitAttached(xtrace, {pid}, 30s)) << xtrace.stderr_text();
  container.Signal(SIGUSR1);  // podman forwards signals to the container's first process
  ASSERT_TRUE(container.WaitStdout("round 1", 60s)) << container.stderr_text();
  EndWorkloads({&container});
  ASSERT_TRUE(StopCapture(xtrace)) << xtrace.stderr_text();

  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  const auto expected = ReadLaunchLog(Path("out/launches.tsv"), /*strip_tid=*/true);
  ASSERT_EQ(expected.size(), 10u);
  // Thread ids differ: the workload logs its own, as its container's pid namespace numbers them.
  EXPECT_EQ(Sorted(c.launches_no_tid.count(pid) ? c.launches_no_tid.at(pid) : std::vector<std::string>{}),
            expected);
  ASSERT_TRUE(c.processes.count(pid));
  EXPECT_EQ(c.processes.at(pid).container_id, id);
  EXPECT_EQ(c.processes.at(pid).ns_pid, 1u) << "the workload is its container's first process";
}

// A job attached mid-run in a container: its kernels were made before the attach, in another
// pid namespace and from another loader file. Each is learned from the process by a query
// (held thread ids translated to the host's), so every launch is named as the workload logs
// it, and the summary counts the queries.
TEST_F(ContainerTest, AttachToARunningContainerNamesKernelsMadeBeforeTheAttach) {
  auto image = WorkloadImage("image");
  ASSERT_FALSE(image->tag().empty()) << image->error();
  const std::string name = Name("query");
  Subprocess container(
      image->RunArgv(name, {"ZE_ENABLE_ALT_DRIVERS=" + kSimze}, {Path("out") + ":/out"},
                     {kWorkload, "--wait-for-signal", "--threads", "2", "--iterations", "2",
                      "--launch-log", "/out/launches.tsv"}),
      image->PodmanEnv());
  const uint32_t pid = StartedPid(container, *image, name);
  ASSERT_GT(pid, 0u) << container.stderr_text();
  const std::string out = Path("query.capnp");
  Subprocess xtrace({kXtrace, "attach", "--container", ContainerId(*image, name), "-o", out});
  ASSERT_TRUE(WaitAttached(xtrace, {pid}, 60s)) << xtrace.stderr_text();
  container.Signal(SIGUSR1);
  ASSERT_TRUE(container.WaitStdout("round 1", 60s)) << container.stderr_text();
  EndWorkloads({&container});
  ASSERT_TRUE(StopCapture(xtrace)) << xtrace.stderr_text();
  SCOPED_TRACE("xtrace said:\n" + xtrace.stderr_text());

  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  const auto expected = ReadLaunchLog(Path("out/launches.tsv"), /*strip_tid=*/true);
  ASSERT_EQ(expected.size(), 20u);
  const auto got = Sorted(c.launches_no_tid.count(pid) ? c.launches_no_tid.at(pid) : std::vector<std::string>{});
  EXPECT_EQ(got, expected);
  for (const auto& launch : got) EXPECT_NE(launch.rfind("kernel@", 0), 0u) << launch;
  EXPECT_NE(xtrace.stderr_text().find("objects made before the attach were queried in the process"),
            std::string::npos);
}

// The same from a pod sidecar (the manifest's capabilities: CAP_BPF, CAP_PERFMON and
// CAP_SYS_PTRACE, which the queries need, no CAP_SYS_ADMIN): `xtrace attach` run in the
// sidecar's container, in the pod's pid namespace, at a workload container that started
// before it. The queries stop and call into the workload with ptrace from inside the pod.
TEST_F(ContainerTest, AttachFromAPodSidecarNamesKernelsMadeBeforeTheAttach) {
  ::mkdir(Path("xtrace-image").c_str(), 0755);
  ContainerImage xtrace_image(Path("xtrace-image"), {kXtrace, "/bin/sleep"}, {});
  ASSERT_FALSE(xtrace_image.tag().empty()) << xtrace_image.error();
  auto image = WorkloadImage("image");
  ASSERT_FALSE(image->tag().empty()) << image->error();
  const std::string sidecar = Name("qsidecar");
  Subprocess pod(xtrace_image.RunArgv(sidecar, {}, {Path("out") + ":/out"}, {"/bin/sleep", "600"},
                                      {"--cap-drop=all", "--cap-add=CAP_BPF,CAP_PERFMON,CAP_SYS_PTRACE",
                                       "--security-opt=seccomp=unconfined", "--read-only"}),
                 xtrace_image.PodmanEnv());
  const std::string name = Name("qworkload");
  for (int i = 0; i < 300 && ContainerPid(xtrace_image, sidecar) == 0; ++i) std::this_thread::sleep_for(100ms);
  Subprocess container(
      image->RunArgv(name, {"ZE_ENABLE_ALT_DRIVERS=" + kSimze}, {Path("out") + ":/out"},
                     {kWorkload, "--wait-for-signal", "--threads", "2", "--iterations", "2",
                      "--launch-log", "/out/launches.tsv"},
                     {"--pid=container:" + sidecar}),
      image->PodmanEnv());
  const uint32_t pod_pid = PidFromReadyLine(container.WaitStdout("ready", 60s));  // the pod's number
  ASSERT_GT(pod_pid, 1u) << container.stdout_text();
  Subprocess xtrace({"/usr/bin/podman", "exec", sidecar, kXtrace, "attach", "--pid",
                     std::to_string(pod_pid), "-o", "/out/query.capnp"},
                    xtrace_image.PodmanEnv());
  ASSERT_TRUE(xtrace.WaitStderr("attached to pid " + std::to_string(pod_pid), 60s)) << xtrace.stderr_text();
  container.Signal(SIGUSR1);
  ASSERT_TRUE(container.WaitStdout("round 1", 60s)) << container.stderr_text();
  EndWorkloads({&container});
  // Its one process gone, the capture ends by itself.
  ASSERT_EQ(xtrace.Wait(60s), 0) << xtrace.stderr_text();
  SCOPED_TRACE("xtrace said:\n" + xtrace.stderr_text());

  const LogContents c = ReadLogContents(Path("out/query.capnp"));
  ASSERT_TRUE(c.readable) << c.error;
  const auto expected = ReadLaunchLog(Path("out/launches.tsv"), /*strip_tid=*/true);
  ASSERT_EQ(expected.size(), 20u);
  const auto got = Sorted(c.launches_no_tid.count(pod_pid) ? c.launches_no_tid.at(pod_pid) : std::vector<std::string>{});
  EXPECT_EQ(got, expected);
  for (const auto& launch : got) EXPECT_NE(launch.rfind("kernel@", 0), 0u) << launch;
  EXPECT_NE(xtrace.stderr_text().find("objects made before the attach were queried in the process"),
            std::string::npos);
}

// A capture scoped to one container probes that container's files: another container, with
// its own image, holds no breakpoint and is not traced.
TEST_F(ContainerTest, ACaptureOfOneContainerLeavesAnotherUntouched) {
  auto image_a = WorkloadImage("image-a");
  auto image_b = WorkloadImage("image-b");
  ASSERT_FALSE(image_a->tag().empty()) << image_a->error();
  ASSERT_FALSE(image_b->tag().empty()) << image_b->error();
  const std::string name_a = Name("in"), name_b = Name("out");
  Subprocess a(WorkloadArgv(*image_a, name_a, "a.tsv"), image_a->PodmanEnv());
  Subprocess b(WorkloadArgv(*image_b, name_b, "b.tsv"), image_b->PodmanEnv());
  const uint32_t pid_a = StartedPid(a, *image_a, name_a);
  const uint32_t pid_b = StartedPid(b, *image_b, name_b);
  ASSERT_GT(pid_a, 0u) << a.stderr_text();
  ASSERT_GT(pid_b, 0u) << b.stderr_text();

  const std::string out = Path("scoped.capnp");
  Subprocess xtrace({kXtrace, "attach", "--container", ContainerId(*image_a, name_a), "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("tracing every process in container", 60s)) << xtrace.stderr_text();
  ASSERT_TRUE(WaitAttached(xtrace, {pid_a}, 30s)) << xtrace.stderr_text();

  auto bps_a = LoaderBreakpoints(pid_a);
  auto bps_b = LoaderBreakpoints(pid_b);
  ASSERT_TRUE(bps_a.ok()) << bps_a.status().message();
  ASSERT_TRUE(bps_b.ok()) << bps_b.status().message();
  EXPECT_GT(*bps_a, 0u) << "the container in scope holds no probe";
  EXPECT_EQ(*bps_b, 0u) << "a container outside the scope holds probes";

  a.Signal(SIGUSR1);
  b.Signal(SIGUSR1);
  ASSERT_TRUE(a.WaitStdout("round 1", 60s)) << a.stderr_text();
  ASSERT_TRUE(b.WaitStdout("round 1", 60s)) << b.stderr_text();
  EndWorkloads({&a, &b});
  ASSERT_TRUE(StopCapture(xtrace)) << xtrace.stderr_text();

  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  EXPECT_EQ(c.launches.count(pid_b), 0u) << "a process outside the scope was traced";
  EXPECT_EQ(Sorted(c.launches_no_tid.count(pid_a) ? c.launches_no_tid.at(pid_a)
                                                  : std::vector<std::string>{}),
            ReadLaunchLog(Path("out/a.tsv"), /*strip_tid=*/true));
}

// ITT in a container: the collector is the image's own copy, reached through /proc/PID/root;
// attaching moves the process to the in-process fast path (process_vm_readv/writev across the
// namespaces, nothing shared by path) and every label arrives.
TEST_F(ContainerTest, IttInAContainerTakesTheFastPath) {
  ::mkdir(Path("itt-image").c_str(), 0755);
  ContainerImage image(Path("itt-image"), {kIttWorkload}, {kIttCollector});
  ASSERT_FALSE(image.tag().empty()) << image.error();
  const std::string name = Name("itt");
  Subprocess container(
      image.RunArgv(name, {"INTEL_LIBITTNOTIFY64=" + kIttCollector}, {Path("out") + ":/out"},
                    {kIttWorkload, "--wait-for-signal", "--threads", "2", "--iterations", "3",
                     "--log", "/out/labels.tsv"}),
      image.PodmanEnv());
  const uint32_t pid = StartedPid(container, image, name);
  ASSERT_GT(pid, 0u) << container.stderr_text();

  const std::string out = Path("itt.capnp");
  Subprocess xtrace({kXtrace, "attach", "--container", ContainerId(image, name), "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr(
      "pid " + std::to_string(pid) + ": ITT calls go through the in-process fast path", 60s))
      << xtrace.stderr_text();
  container.Signal(SIGUSR1);
  ASSERT_TRUE(container.WaitStdout("round 1", 60s)) << container.stderr_text();
  EndWorkloads({&container});
  ASSERT_TRUE(StopCapture(xtrace)) << xtrace.stderr_text();

  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  const auto expected = LabelsOfLog(Path("out/labels.tsv"));
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(Sorted(c.itt_labels.count(pid) ? c.itt_labels.at(pid) : std::vector<std::string>{}),
            expected);
}

// Containers started one after another while a capture runs, each from an image of its own
// (a loader, a driver and an ld.so the capture has never seen), each straight into its work:
// every one is traced from its first call. Three in a row, so that winning a race by timing
// does not pass for tracing it.
class ContainerStartTest : public ContainerTest {
 protected:
  void ContainersStartedDuringACapture(std::vector<std::string> capture, const std::string& started) {
    std::vector<std::unique_ptr<ContainerImage>> images;
    for (int i = 0; i < 3; ++i) {
      images.push_back(WorkloadImage("image-" + std::to_string(i)));
      ASSERT_FALSE(images.back()->tag().empty()) << images.back()->error();
    }
    const std::string out = Path("started.capnp");
    capture.insert(capture.end(), {"-o", out});
    Subprocess xtrace(capture);
    ASSERT_TRUE(xtrace.WaitStderr(started, 60s)) << xtrace.stderr_text();
    std::vector<FinishedRun> runs;
    for (size_t i = 0; i < images.size(); ++i) {
      runs.push_back(RunToEnd(*images[i], "run-" + std::to_string(i)));
      ASSERT_EQ(runs.back().result.exit_code(), 0) << runs.back().result.err;
      ASSERT_EQ(runs.back().id.size(), 64u) << runs.back().id;
      EXPECT_EQ(runs.back().pid, 1u) << "the workload is its container's first process";
    }
    ASSERT_TRUE(StopCapture(xtrace)) << xtrace.stderr_text();

    const LogContents c = ReadLogContents(out);
    ASSERT_TRUE(c.readable) << c.error;
    SCOPED_TRACE("xtrace said:\n" + xtrace.stderr_text());
    for (const FinishedRun& run : runs) {
      std::vector<uint32_t> pids;
      for (const auto& [pid, identity] : c.processes)
        if (identity.container_id == run.id) pids.push_back(pid);
      ASSERT_EQ(pids.size(), 1u) << run.what << ": processes of container " << run.id << " in the log";
      EXPECT_EQ(c.processes.at(pids[0]).ns_pid, 1u);
      ExpectTracedFromTheFirstCall(c, pids[0], run);
    }
  }
};

TEST_F(ContainerStartTest, ContainersStartedDuringASystemCaptureAreTracedFromTheirFirstCall) {
  ContainersStartedDuringACapture({kXtrace, "record", "--system"}, "tracing every process");
}

// The same with a scope that matches by name: the process becomes ze_workload only at its exec
// inside the container (runc's init runs first).
TEST_F(ContainerStartTest, ContainersStartedDuringACaptureByNameAreTracedFromTheirFirstCall) {
  ContainersStartedDuringACapture({kXtrace, "attach", "--comm", "ze_workload"},
                                  "tracing every process named ze_workload");
}

// xtrace as a Kubernetes sidecar runs it: a container of its own (its own image, so its own
// mount namespace) in a pod with `shareProcessNamespace: true`, where all the pod's containers
// share one pid namespace that is not the node's and /proc in each shows that namespace.
// Podman builds the same with --pid=container:SIDECAR (on Kubernetes the pod's pause process
// is pid 1 of that namespace; here xtrace is). The sidecar gets what
// scripts/deploy/kubernetes/pod-sidecar.yaml gives it: root with CAP_BPF, CAP_PERFMON and
// CAP_SYS_PTRACE, seccomp unconfined, a read-only root file system; it records the pod with
// --system, as that manifest's daemon does, and nothing more: a perf-event uprobe on every
// process (the linker hook, pid -1) is refused with EACCES without CAP_SYS_ADMIN in a pid
// namespace of its own, so xtrace hooks the linker with a uprobe_multi link, which is not (this
// test traced nothing but DRM ioctls before). A per-node agent (hostPID) is the plain
// --system case above. Workload containers started after it, from their own images, are
// traced from their first call, and each is one process in the log: one pid (the pod's number
// for it, which is also what it calls itself), one name.
TEST_F(ContainerTest, XtraceAsAPodSidecarTracesLaterContainersOfThePodFromTheirFirstCall) {
  ::mkdir(Path("xtrace-image").c_str(), 0755);
  ContainerImage xtrace_image(Path("xtrace-image"), {kXtrace}, {});
  ASSERT_FALSE(xtrace_image.tag().empty()) << xtrace_image.error();
  std::vector<std::unique_ptr<ContainerImage>> images;
  for (int i = 0; i < 2; ++i) {
    images.push_back(WorkloadImage("image-" + std::to_string(i)));
    ASSERT_FALSE(images.back()->tag().empty()) << images.back()->error();
  }
  const std::string sidecar = Name("sidecar");
  Subprocess xtrace(xtrace_image.RunArgv(sidecar, {}, {Path("out") + ":/out"},
                                         {kXtrace, "record", "--system", "-o", "/out/pod.capnp"},
                                         {"--cap-drop=all",
                                          "--cap-add=CAP_BPF,CAP_PERFMON,CAP_SYS_PTRACE",
                                          "--security-opt=seccomp=unconfined", "--read-only"}),
                    xtrace_image.PodmanEnv());
  ASSERT_TRUE(xtrace.WaitStderr("tracing every process", 60s)) << xtrace.stderr_text();
  std::vector<FinishedRun> runs;
  for (size_t i = 0; i < images.size(); ++i) {
    runs.push_back(RunToEnd(*images[i], "pod-" + std::to_string(i), {"--pid=container:" + sidecar}));
    ASSERT_EQ(runs.back().result.exit_code(), 0) << runs.back().result.err;
    ASSERT_GT(runs.back().pid, 1u) << runs.back().result.out;
  }
  ASSERT_TRUE(StopCapture(xtrace)) << xtrace.stderr_text();  // podman passes SIGINT on

  const LogContents c = ReadLogContents(Path("out/pod.capnp"));
  ASSERT_TRUE(c.readable) << c.error;
  SCOPED_TRACE("xtrace said:\n" + xtrace.stderr_text());
  for (const FinishedRun& run : runs) {
    ExpectTracedFromTheFirstCall(c, run.pid, run);
    ASSERT_TRUE(c.identities.count(run.pid));
    for (const auto& identity : c.identities.at(run.pid)) {
      EXPECT_EQ(identity.comm, "ze_workload") << run.what;
      EXPECT_EQ(identity.ns_pid, run.pid) << run.what << ": the pod's pid namespace is xtrace's";
    }
  }
  // Nothing else in the log: no second identity of a workload under another number, and not
  // xtrace itself.
  for (const auto& [pid, events] : c.events_by_pid)
    EXPECT_TRUE(pid == runs[0].pid || pid == runs[1].pid)
        << events << " events of pid " << pid
        << (c.processes.count(pid) ? " (" + c.processes.at(pid).comm + ")" : "");
}

}  // namespace
}  // namespace xtrace
