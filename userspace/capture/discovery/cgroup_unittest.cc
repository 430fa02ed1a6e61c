// Tests for capture/discovery/cgroup: the cgroup2 mount from mountinfo, path containment, and container
// lookup by id in a directory tree.
#include "capture/discovery/cgroup.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "correlate/process_inspector.h"

namespace xtrace {
namespace {

TEST(Cgroup, FindsTheCgroup2MountInMountinfo) {
  const std::string hybrid =
      "22 1 0:21 / /sys rw,nosuid - sysfs sysfs rw\n"
      "30 22 0:26 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755\n"
      "31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n"
      "32 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n";
  auto m = ParseCgroup2Mount(hybrid);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->mount_point, "/sys/fs/cgroup/unified");
  EXPECT_EQ(m->root, "/");

  // Inside a container: the hierarchy mounted is the container's own cgroup; blanks escaped.
  auto inner = ParseCgroup2Mount(
      "40 35 0:30 /kubepods/pod1/abc /host\\040cgroup rw - cgroup2 cgroup rw\n");
  ASSERT_TRUE(inner.ok());
  EXPECT_EQ(inner->mount_point, "/host cgroup");
  EXPECT_EQ(inner->root, "/kubepods/pod1/abc");

  auto none = ParseCgroup2Mount("30 22 0:26 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n");
  EXPECT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no cgroup v2"), std::string::npos);
}

TEST(Cgroup, ContainmentFollowsPathComponents) {
  EXPECT_TRUE(CgroupPathContains("/a/b", "/a/b"));
  EXPECT_TRUE(CgroupPathContains("/a/b", "/a/b/c"));
  EXPECT_FALSE(CgroupPathContains("/a/b", "/a/bc"));
  EXPECT_FALSE(CgroupPathContains("/a/b", "/a"));
  EXPECT_TRUE(CgroupPathContains("/", "/anything"));
  EXPECT_FALSE(CgroupPathContains("/a", ""));  // a process with no cgroup v2 path
}

TEST(Cgroup, ProcCgroupFileGivesTheV2Path) {
  EXPECT_EQ(CgroupPathFromProcFile("12:cpu:/x\n0::/system.slice/app.service\n"),
            "/system.slice/app.service");
  EXPECT_EQ(CgroupPathFromProcFile("12:cpu:/x\n"), "");
}

class ContainerLookup : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/xtrace-cgroup-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void MakeDir(const std::string& rel) { std::filesystem::create_directories(root_ + "/" + rel); }
  Cgroup2Mount Mount() const { return Cgroup2Mount{root_, "/"}; }
  std::string root_;
};

TEST_F(ContainerLookup, RejectsIdsThatAreNotHex) {
  auto r = ResolveContainerIn(Mount(), "not-an-id");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("is not a container id"), std::string::npos);
  EXPECT_FALSE(ResolveContainerIn(Mount(), "abc").ok());  // too short to mean anything
}

TEST_F(ContainerLookup, SaysWhenNoneOrSeveralMatch) {
  MakeDir("system.slice/docker-" + std::string(64, 'a') + ".scope");
  MakeDir("system.slice/docker-" + std::string(63, 'a') + "b.scope");
  auto none = ResolveContainerIn(Mount(), "bbbbbbbbbbbb");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no container with that id"), std::string::npos);
  auto several = ResolveContainerIn(Mount(), "aaaaaaaaaaaa");
  ASSERT_FALSE(several.ok());
  EXPECT_NE(several.status().message().find("matches 2 containers"), std::string::npos)
      << several.status().message();
}

TEST_F(ContainerLookup, AUniquePrefixFindsTheDirectoryButItMustBeCgroup2) {
  // The lookup finds the directory; a plain directory is then refused as not a cgroup.
  MakeDir("kubepods/pod1/" + std::string(64, 'c'));
  auto r = ResolveContainerIn(Mount(), "cccccccccccc");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("is not a cgroup v2 directory"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("kubepods/pod1/" + std::string(64, 'c')), std::string::npos);
}

}  // namespace
}  // namespace xtrace
