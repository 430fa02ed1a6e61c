// Tests for capture/discovery/process_owner: a process's uids from /proc/PID/status, user names.
#include "capture/discovery/process_owner.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace xtrace {
namespace {

TEST(ProcessOwner, ReadsRealEffectiveAndSavedUids) {
  const auto uids = ParseProcessUids("Name:\tsu\nUmask:\t0022\nUid:\t1000\t0\t0\t0\nGid:\t5\t5\t5\t5\n");
  ASSERT_TRUE(uids.has_value());
  EXPECT_EQ(uids->real, 1000u);
  EXPECT_EQ(uids->effective, 0u);
  EXPECT_EQ(uids->saved, 0u);
  // A set-user-ID program is not its caller's alone.
  EXPECT_FALSE(uids->AllAre(1000));
  EXPECT_TRUE(ParseProcessUids("Uid:\t7\t7\t7\t7\n")->AllAre(7));
  EXPECT_FALSE(ParseProcessUids("Name:\tx\nGid:\t1\t1\t1\t1\n").has_value());
  EXPECT_FALSE(ParseProcessUids("Uid:\t7\n").has_value());  // cut short
}

TEST(ProcessOwner, ReadsItsOwnProcess) {
  const auto uids = ReadProcessUids(static_cast<uint32_t>(getpid()));
  ASSERT_TRUE(uids.has_value());
  EXPECT_EQ(uids->real, getuid());
  EXPECT_EQ(uids->effective, geteuid());
}

TEST(ProcessOwner, ResolvesNamesAndNumbers) {
  EXPECT_EQ(*ResolveUser("root"), 0u);
  EXPECT_EQ(*ResolveUser("4321"), 4321u);
  EXPECT_EQ(ResolveUser("no-such-user-xt").status().message(), "no user named 'no-such-user-xt'");
  EXPECT_FALSE(ResolveUser("12x").ok());
  EXPECT_EQ(DescribeUser(0), "root (uid 0)");
  EXPECT_EQ(DescribeUser(4000000000u), "uid 4000000000");
}

}  // namespace
}  // namespace xtrace
