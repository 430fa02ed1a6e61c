// Tests for correlate/drm_device: naming an fd's device from what the probe saw at the call,
// /proc and sysfs — with a fake sysfs (and, for nodes, a fake /proc) so no GPU is needed.
#include "correlate/drm_device.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "log_test_util.h"

namespace xtrace {
namespace {

namespace fs = std::filesystem;
using test_util::ScratchDir;

constexpr mode_t kCharDevice = S_IFCHR | 0666;

// A sysfs with one DRM render node, 226:128, driven by `driver`.
std::string FakeSysfs(const ScratchDir& dir, const std::string& driver) {
  const std::string root = dir.File("sys");
  const std::string node = root + "/dev/char/226:128";
  fs::create_directories(node + "/device");
  std::ofstream(node + "/uevent") << "MAJOR=226\nMINOR=128\nDEVNAME=dri/renderD128\n";
  fs::create_symlink("../../../bus/pci/drivers/" + driver, node + "/device/driver");
  return root;
}

TEST(DrmDeviceTest, MinorKinds) {
  EXPECT_EQ(DrmMinorKind(0), DrmNodeKind::kPrimary);
  EXPECT_EQ(DrmMinorKind(63), DrmNodeKind::kPrimary);
  EXPECT_EQ(DrmMinorKind(128), DrmNodeKind::kRender);
  EXPECT_EQ(DrmMinorKind(191), DrmNodeKind::kRender);
  EXPECT_EQ(DrmMinorKind(64), DrmNodeKind::kOtherDrm);
  EXPECT_EQ(DrmMinorKind(192), DrmNodeKind::kOtherDrm);
}

TEST(DrmDeviceTest, AnOpenFdThatIsNotDrmIsNamedFromProc) {
  ScratchDir dir;
  const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  struct stat st {};
  ASSERT_EQ(::fstat(fd, &st), 0);
  const FdFileAtCall seen{st.st_mode, major(st.st_rdev), minor(st.st_rdev)};
  const FdDevice dev =
      ResolveFdDevice("/proc", FakeSysfs(dir, "i915"), static_cast<uint32_t>(getpid()),
                      static_cast<uint32_t>(fd), seen);
  ::close(fd);
  EXPECT_EQ(dev.kind, DrmNodeKind::kNotDrm);
  EXPECT_EQ(dev.path, "/dev/null");
  EXPECT_EQ(dev.major, 1u);
  EXPECT_EQ(dev.minor, 3u);
  EXPECT_EQ(dev.driver, "");
}

TEST(DrmDeviceTest, AGoneProcessIsNamedFromWhatTheProbeSawAndSysfs) {
  ScratchDir dir;
  const std::string sys = FakeSysfs(dir, "xe");
  fs::create_directories(dir.File("proc"));  // the process has exited: no /proc entry
  const FdDevice dev =
      ResolveFdDevice(dir.File("proc"), sys, 4242, 5, FdFileAtCall{kCharDevice, 226, 128});
  EXPECT_EQ(dev.kind, DrmNodeKind::kRender);
  EXPECT_EQ(dev.path, "/dev/dri/renderD128");
  EXPECT_EQ(dev.major, 226u);
  EXPECT_EQ(dev.minor, 128u);
  EXPECT_EQ(dev.driver, "xe");
}

TEST(DrmDeviceTest, AnFdReusedSinceTheCallIsNotTrusted) {
  // /proc now shows /dev/null on that fd, but the call was made on the render node.
  ScratchDir dir;
  const std::string sys = FakeSysfs(dir, "i915");
  const std::string fd_dir = dir.File("proc") + "/4242/fd";
  fs::create_directories(fd_dir);
  fs::create_symlink("/dev/null", fd_dir + "/5");
  const FdDevice dev =
      ResolveFdDevice(dir.File("proc"), sys, 4242, 5, FdFileAtCall{kCharDevice, 226, 128});
  EXPECT_EQ(dev.kind, DrmNodeKind::kRender);
  EXPECT_EQ(dev.path, "/dev/dri/renderD128");
  EXPECT_EQ(dev.driver, "i915");
}

TEST(DrmDeviceTest, NothingKnownIsUnknown) {
  ScratchDir dir;
  fs::create_directories(dir.File("proc"));
  const FdDevice dev = ResolveFdDevice(dir.File("proc"), dir.File("sys"), 4242, 5, {});
  EXPECT_EQ(dev.kind, DrmNodeKind::kUnknown);
  EXPECT_EQ(dev.path, "");
}

TEST(DrmDeviceTest, ARegularFileIsNotADevice) {
  ScratchDir dir;
  const std::string file = dir.File("data.bin");
  std::ofstream(file) << "x";
  const std::string fd_dir = dir.File("proc") + "/4242/fd";
  fs::create_directories(fd_dir);
  fs::create_symlink(file, fd_dir + "/7");
  const FdDevice dev = ResolveFdDevice(dir.File("proc"), dir.File("sys"), 4242, 7,
                                       FdFileAtCall{S_IFREG | 0644, 0, 0});
  EXPECT_EQ(dev.kind, DrmNodeKind::kNotDrm);
  EXPECT_EQ(dev.path, file);
  EXPECT_EQ(dev.major, 0u);
}

// A process chrooted into a tree opened TREE/data.bin as /data.bin: named as it knows it.
TEST(DrmDeviceTest, AChrootedProcessesFileIsNamedFromItsOwnRoot) {
  ScratchDir dir;
  const std::string tree = dir.File("tree");
  fs::create_directories(tree + "/dev");
  const std::string file = tree + "/dev/data.bin";
  std::ofstream(file) << "x";
  const std::string fd_dir = dir.File("proc") + "/4242/fd";
  fs::create_directories(fd_dir);
  fs::create_symlink(file, fd_dir + "/7");
  fs::create_symlink(tree, dir.File("proc") + "/4242/root");
  const FdFileAtCall seen{S_IFREG | 0644, 0, 0};
  EXPECT_EQ(ResolveFdDevice(dir.File("proc"), dir.File("sys"), 4242, 7, seen).path, "/dev/data.bin");
  // A root that only shares the path's first characters is not its root.
  fs::remove(dir.File("proc") + "/4242/root");
  fs::create_symlink(tree + "/de", dir.File("proc") + "/4242/root");
  EXPECT_EQ(ResolveFdDevice(dir.File("proc"), dir.File("sys"), 4242, 7, seen).path, file);
  // The host's own root leaves the path as it is.
  fs::remove(dir.File("proc") + "/4242/root");
  fs::create_symlink("/", dir.File("proc") + "/4242/root");
  EXPECT_EQ(ResolveFdDevice(dir.File("proc"), dir.File("sys"), 4242, 7, seen).path, file);
}

TEST(DrmDeviceTest, ALiveFdOnADrmNodeKeepsThePathTheProcessUsed) {
  if (geteuid() != 0) GTEST_SKIP() << "creating a device node (mknod) needs root";
  ScratchDir dir;
  const std::string sys = FakeSysfs(dir, "i915");
  // A node at a path of the process's own (as in a container), reached through /proc.
  const std::string node = dir.File("renderD128");
  ASSERT_EQ(::mknod(node.c_str(), kCharDevice, makedev(226, 128)), 0);
  const std::string fd_dir = dir.File("proc") + "/4242/fd";
  fs::create_directories(fd_dir);
  fs::create_symlink(node, fd_dir + "/3");
  const FdDevice with_probe =
      ResolveFdDevice(dir.File("proc"), sys, 4242, 3, FdFileAtCall{kCharDevice, 226, 128});
  EXPECT_EQ(with_probe.kind, DrmNodeKind::kRender);
  EXPECT_EQ(with_probe.path, node);
  EXPECT_EQ(with_probe.driver, "i915");
  // Without the probe's view, /proc alone decides.
  const FdDevice proc_only = ResolveFdDevice(dir.File("proc"), sys, 4242, 3, {});
  EXPECT_EQ(proc_only.kind, DrmNodeKind::kRender);
  EXPECT_EQ(proc_only.path, node);
  EXPECT_EQ(proc_only.minor, 128u);
  EXPECT_EQ(proc_only.driver, "i915");
}

}  // namespace
}  // namespace xtrace
