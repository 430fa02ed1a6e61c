// Integration tests with real containers (Debian's podman and runc): each image carries its
// own copies of the workload, the Level Zero loader, the simulated GPU driver and ld.so, so the
// container's libraries are files xtrace has never seen, as on a Kubernetes node. Checked
// against the workloads' own launch logs, written to a directory bind-mounted from the test's
// scratch directory. Needs root; skips with the reason elsewhere, fails under CI.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "capture_steps.h"
#include "container_image.h"
#include "log_contents.h"
#include "root_fixture.h"
#include "subprocess.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
using testing::ContainerId;
using testing::ContainerImage;
using testing::ContainerPid;
using testing::EndWorkloads;
using testing::LoaderBreakpoints;
using testing::LogContents;
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

}  // namespace
}  // namespace xtrace
