// Integration tests of processes with another root: a workload run under chroot(8) in a tree
// that holds its own copies of the Level Zero loader, the simulated GPU and ld.so. The copies
// are other inodes than the host's files of the same paths, and a chrooted process's memory
// map names them by their host paths (the tree's directory first): xtrace must probe the file
// the process maps, whatever its root. Checked against the workload's own launch log, under
// `record` and under `attach`. Needs root; skips with the reason elsewhere, fails under CI.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

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
using testing::LogContents;
using testing::PidFromReadyLine;
using testing::ReadLaunchLog;
using testing::ReadLogContents;
using testing::RootTest;
using testing::Sorted;
using testing::Subprocess;

const std::string kXtrace = XTRACE_BIN;
const std::string kWorkload = ZE_WORKLOAD_BIN;
const std::string kSimze = SIMZE_LIB;

class ChrootTest : public RootTest {
 protected:
  ChrootTest() : RootTest("chroot capture", "chroot") {}
  void SetUp() override {
    RootTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    std::string error;
    ASSERT_TRUE(testing::BuildRootTree(Tree(), {kWorkload}, {kSimze}, {}, &error)) << error;
    // A tree made for chroot has its /dev/null, which the simulated GPU opens as its device.
    ASSERT_EQ(::mkdir((Tree() + "/dev").c_str(), 0755), 0);
    ASSERT_EQ(::mknod((Tree() + "/dev/null").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  }
  std::string Tree() const { return Path("tree"); }
  // The workload under chroot into the tree; its launch log is the tree's /tmp/<log>.
  std::vector<std::string> ChrootArgv(const std::string& log, bool wait_for_signal) {
    std::vector<std::string> argv = {"/usr/sbin/chroot", Tree(), kWorkload, "--iterations", "2",
                                     "--launch-log", "/tmp/" + log};
    // Kernels are created again each round, so an attach names their launches.
    if (wait_for_signal) argv.insert(argv.end(), {"--wait-for-signal", "--recreate-kernels"});
    return argv;
  }
  // Every launch `pid` logged is in the capture, with its kernel's name.
  void ExpectEveryLaunch(const LogContents& c, uint32_t pid, const std::string& log) {
    const auto expected = ReadLaunchLog(Tree() + "/tmp/" + log, /*strip_tid=*/true);
    ASSERT_EQ(expected.size(), 10u);
    EXPECT_EQ(Sorted(c.launches_no_tid.count(pid) ? c.launches_no_tid.at(pid)
                                                  : std::vector<std::string>{}),
              expected);
  }
  // xtrace said it attached to `pid` through the tree's copy of the loader.
  void ExpectNamedTheTreesLoader(const std::string& stderr_text, uint32_t pid) {
    EXPECT_NE(stderr_text.find("attached to pid " + std::to_string(pid) + " (" + Tree() + "/"),
              std::string::npos)
        << stderr_text;
  }
};

TEST_F(ChrootTest, RecordTracesTheLoaderOfTheTree) {
  const std::string out = Path("record.capnp");
  std::vector<std::string> argv = {kXtrace, "record", "-o", out, "--"};
  for (auto& a : ChrootArgv("launches.tsv", false)) argv.push_back(a);
  const testing::RunResult r =
      testing::RunCommand(argv, {"ZE_ENABLE_ALT_DRIVERS=" + kSimze}, 120s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  const size_t ready = r.out.find("ready ");
  ASSERT_NE(ready, std::string::npos) << r.out;
  const uint32_t pid =
      PidFromReadyLine(r.out.substr(ready, r.out.find('\n', ready) - ready));
  ASSERT_GT(pid, 0u) << r.out;

  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  ExpectEveryLaunch(c, pid, "launches.tsv");
  ExpectNamedTheTreesLoader(r.err, pid);
  // The simulated GPU's device file is named as the process opened it, from its own root.
  EXPECT_NE(r.err.find("xtrace: DRM /dev/null (not a DRM device)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("DRM " + Tree()), std::string::npos) << r.err;
}

TEST_F(ChrootTest, AttachTracesAChrootedProcess) {
  Subprocess workload(ChrootArgv("attach.tsv", true), {"ZE_ENABLE_ALT_DRIVERS=" + kSimze});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 60s));
  ASSERT_GT(pid, 0u);

  const std::string out = Path("attach.capnp");
  Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(pid), "-o", out});
  ASSERT_TRUE(testing::WaitAttached(xtrace, {pid}, 30s)) << xtrace.stderr_text();
  workload.Signal(SIGUSR1);
  ASSERT_TRUE(workload.WaitStdout("round 1", 60s)) << workload.stderr_text();
  testing::EndWorkloads({&workload});
  ASSERT_TRUE(testing::StopCapture(xtrace)) << xtrace.stderr_text();

  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  ExpectEveryLaunch(c, pid, "attach.tsv");
  ExpectNamedTheTreesLoader(xtrace.stderr_text(), pid);
}

}  // namespace
}  // namespace xtrace
