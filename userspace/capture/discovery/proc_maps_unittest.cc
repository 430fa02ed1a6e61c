// Tests for capture/discovery/proc_maps: finding libraries in /proc/PID/maps text.
#include "capture/discovery/proc_maps.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

namespace xtrace {
namespace {

constexpr const char* kMaps =
    "55d0c0a00000-55d0c0a01000 r--p 00000000 fe:01 1234 /usr/bin/app\n"
    "7f1000000000-7f1000010000 r--p 00000000 fe:01 4321 /usr/lib/x86_64-linux-gnu/libze_loader.so.1.8.0\n"
    "7f1000010000-7f1000030000 r-xp 00010000 fe:01 4321 /usr/lib/x86_64-linux-gnu/libze_loader.so.1.8.0\n"
    "7f2000000000-7f2000001000 r-xp 00000000 00:2a 999 /opt/my dir/libze_loader.so.1\n"
    "7f3000000000-7f3000001000 r-xp 00000000 fe:01 777 /usr/lib/libze_loader.so.1 (deleted)\n"
    "7f4000000000-7f4000001000 r-xp 00000000 fe:01 555 /usr/lib/libnot_ze_loader.so\n"
    "7f5000000000-7f5000001000 rw-p 00000000 00:00 0 \n"
    "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]\n";

TEST(ProcMaps, FindsEachLibraryOnceWithHostPath) {
  auto libs = ParseMappedLibraries(kMaps, 4242, "libze_loader.so");
  ASSERT_EQ(libs.size(), 2u);
  EXPECT_EQ(libs[0].path, "/usr/lib/x86_64-linux-gnu/libze_loader.so.1.8.0");
  EXPECT_EQ(libs[0].host_path, "/proc/4242/root/usr/lib/x86_64-linux-gnu/libze_loader.so.1.8.0");
  EXPECT_EQ(libs[0].inode, 4321u);
  EXPECT_EQ(libs[0].dev_major, 0xfeu);
  EXPECT_EQ(libs[0].dev_minor, 1u);
  // Paths with spaces survive; the deleted copy and the look-alike name are skipped.
  EXPECT_EQ(libs[1].path, "/opt/my dir/libze_loader.so.1");
  EXPECT_EQ(libs[1].dev_major, 0u);
  EXPECT_EQ(libs[1].dev_minor, 0x2au);
}

TEST(ProcMaps, KeepsTheRangeOfTheFirstMapping) {
  auto libs = ParseMappedLibraries(kMaps, 4242, "libze_loader.so");
  ASSERT_EQ(libs.size(), 2u);
  EXPECT_EQ(libs[0].map_range, "7f1000000000-7f1000010000");
}

// A shared object's addresses are relative to its mapping at file offset 0, whichever of its
// mappings the maps list first.
TEST(ProcMaps, LoadBaseIsTheMappingAtFileOffsetZero) {
  constexpr const char* kLaterStart =
      "7f6000010000-7f6000030000 r-xp 00010000 fe:01 88 /usr/lib/libze_loader.so.1\n"
      "7f6000000000-7f6000010000 r--p 00000000 fe:01 88 /usr/lib/libze_loader.so.1\n";
  auto libs = ParseMappedLibraries(kMaps, 4242, "libze_loader.so");
  ASSERT_EQ(libs.size(), 2u);
  EXPECT_EQ(libs[0].load_base, 0x7f1000000000u);
  EXPECT_EQ(libs[1].load_base, 0x7f2000000000u);
  libs = ParseMappedLibraries(kLaterStart, 1, "libze_loader.so");
  ASSERT_EQ(libs.size(), 1u);
  EXPECT_EQ(libs[0].map_range, "7f6000010000-7f6000030000");
  EXPECT_EQ(libs[0].load_base, 0x7f6000000000u);
}

// Read from a live process: the base the dynamic linker loaded libc at.
TEST(ProcMaps, LoadBaseOfALiveProcessIsTheDynamicLinkers) {
  const auto pid = static_cast<uint32_t>(getpid());
  auto libs = FindMappedLibraries(pid, "libc.so");
  ASSERT_TRUE(libs.ok()) << libs.status().message();
  ASSERT_EQ(libs->size(), 1u);
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&std::printf), &info), 0);
  const auto base = LoadBase(pid, libs->at(0));
  ASSERT_TRUE(base.has_value());
  EXPECT_EQ(*base, reinterpret_cast<uint64_t>(info.dli_fbase));
  EXPECT_EQ(libs->at(0).load_base, *base);
  MappedLibrary elsewhere = libs->at(0);
  elsewhere.inode = 1;  // a file this process does not map
  EXPECT_FALSE(LoadBase(pid, elsewhere).has_value());
}

// The file is the one mapped, whatever path the maps show: a chrooted process's maps name a
// path of the host's tree that /proc/PID/root does not have.
TEST(ProcMaps, OpensTheMappedFileItself) {
  const auto pid = static_cast<uint32_t>(getpid());
  auto libs = FindMappedLibraries(pid, "libc.so");
  ASSERT_TRUE(libs.ok()) << libs.status().message();
  ASSERT_EQ(libs->size(), 1u);
  MappedLibrary lib = libs->at(0);
  std::string how;
  UniqueFd fd = OpenMappedFile(pid, lib, &how);
  ASSERT_TRUE(fd.valid());
  struct stat st {};
  ASSERT_EQ(fstat(fd.get(), &st), 0);
  EXPECT_EQ(st.st_ino, lib.inode) << how;
  // Without its mapping's entry (no CAP_SYS_ADMIN), a path that names another inode is not
  // taken for it.
  lib.map_range.clear();
  lib.path = "/proc/self/exe";
  lib.inode = 1;
  EXPECT_FALSE(OpenMappedFile(pid, lib, &how).valid()) << how;
}

TEST(ProcMaps, EmptyAndGarbageGiveNothing) {
  EXPECT_TRUE(ParseMappedLibraries("", 1, "libze_loader.so").empty());
  EXPECT_TRUE(ParseMappedLibraries("not a maps line\n\n", 1, "libze_loader.so").empty());
}

TEST(ProcMaps, ReadsOwnMaps) {
  auto libs = FindMappedLibraries(static_cast<uint32_t>(getpid()), "libc.so");
  ASSERT_TRUE(libs.ok()) << libs.status().message();
  ASSERT_EQ(libs->size(), 1u);
  EXPECT_NE(libs->at(0).inode, 0u);
}

TEST(ProcMaps, GoneProcessIsAnError) {
  // pid_max is at most 2^22; this pid cannot exist.
  auto libs = FindMappedLibraries(0x3fffffff, "libc.so");
  ASSERT_FALSE(libs.ok());
  EXPECT_NE(libs.status().message().find("is gone"), std::string::npos);
}

}  // namespace
}  // namespace xtrace
