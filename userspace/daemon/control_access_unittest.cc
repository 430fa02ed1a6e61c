// Tests of the daemon's access rule: root always, a group's members when one is given,
// nobody else; group names resolved or refused clearly.
#include "daemon/control_access.h"

#include <gtest/gtest.h>

#include <vector>

namespace xtrace {
namespace {

TEST(ControlAccessTest, WithoutAGroupOnlyRootIsAllowed) {
  auto access = ResolveControlAccess("");
  ASSERT_TRUE(access.ok());
  EXPECT_FALSE(access->group);
  EXPECT_TRUE(PeerAllowed(*access, 0, 0, {}));
  const std::vector<gid_t> groups = {0, 27};
  EXPECT_FALSE(PeerAllowed(*access, 1000, 0, groups)) << "root's group is not root";
  EXPECT_EQ(access->Who(), "only root");
  EXPECT_EQ(PermissionDeniedMessage(*access, 65534),
            "permission denied: uid 65534 may not control this xtrace daemon: only root may");
}

TEST(ControlAccessTest, AGroupAdmitsItsMembersByPrimaryOrSupplementaryGroup) {
  auto access = ResolveControlAccess("nogroup");  // gid 65534 on Debian
  ASSERT_TRUE(access.ok()) << access.status().message();
  ASSERT_TRUE(access->group);
  const gid_t g = *access->group;
  EXPECT_TRUE(PeerAllowed(*access, 0, 0, {}));
  EXPECT_TRUE(PeerAllowed(*access, 1000, g, {}));
  const std::vector<gid_t> member = {100, g};
  EXPECT_TRUE(PeerAllowed(*access, 1000, 100, member));
  const std::vector<gid_t> other = {100, 27};
  EXPECT_FALSE(PeerAllowed(*access, 1000, 100, other));
  EXPECT_EQ(access->Who(), "only root or group nogroup");
  EXPECT_NE(PermissionDeniedMessage(*access, 1000).find("only root or group nogroup may"),
            std::string::npos);
}

TEST(ControlAccessTest, GroupsResolveByNameOrNumberAndUnknownOnesAreRefused) {
  auto by_number = ResolveControlAccess("4242");
  ASSERT_TRUE(by_number.ok());
  EXPECT_EQ(by_number->group, gid_t{4242});
  auto unknown = ResolveControlAccess("no-such-group-xt");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("no group named 'no-such-group-xt'"),
            std::string::npos)
      << unknown.status().message();
  auto root = ResolveControlAccess("root");
  ASSERT_TRUE(root.ok());
  EXPECT_FALSE(root->group) << "root's group adds nobody";
}

}  // namespace
}  // namespace xtrace
